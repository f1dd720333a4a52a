import AppSupport
import ArgumentParser
import Engine
import Foundation
import Model
import Settings

/// `multidoc init`: makes the device root and remembers the device's name and container.
struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set up this device: make its root folder and remember its name and container folder.",
        discussion: """
            Asks for what is not given when run in a terminal (--no-input: never asks). The device name \
            and the container are written to the root's settings file, so later commands need neither \
            flag. Running it again on a root that exists changes only what is given.
            """)
    @OptionGroup var options: GlobalOptions
    @Flag(name: .customLong("create-container"), help: "Create the container folder if it does not exist.")
    var createContainer = false
    @Flag(name: .customLong("no-input"), help: "Never ask; take the flags, the environment and the defaults.")
    var noInput = false
    @Option(name: .customLong("expect-root"), help: ArgumentHelp(
        "Trust a signed container only under the root with this fingerprint (16 hex digits).",
        discussion: "Read it off `multidoc device list` on a device that synced with the container before."))
    var expectRoot: String?

    func run() async throws {
        try await runCommand {
            let device = try DeviceInit(rootPath: options.root, environment: ProcessInfo.processInfo.environment)
            let interactive = !noInput && !options.json && isatty(STDIN_FILENO) == 1

            let setup = try device.setUp(
                name: options.device.deviceName, container: options.container, flags: try options.device.settingFlags(),
                createContainer: createContainer, interactive: interactive)
            if let expectRoot { try setup.expectRoot(expectRoot) }
            let output = InitRow(device, setup)
            if options.json {
                try printJSON(output)
                return
            }
            print("\(device.isNew ? "Set up" : "Updated") device \(output.device) (\(output.deviceID.prefix(8))) in \(output.root)")
            print("  container: \(output.container ?? "none (documents stay on this device)")")
            let rootFlag = options.root == nil ? "" : " --root '\(device.root.path)'"
            if device.isNew { print("Next: multidoc new MyDocument\(rootFlag)   (then: multidoc list\(rootFlag))") }
        }
    }
}
