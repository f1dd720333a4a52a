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

    struct Output: Encodable {
        var root: String
        var created: Bool
        var device: String
        var deviceID: String
        var container: String?
    }

    func run() async throws {
        try await runCommand {
            let device = try DeviceInit(rootPath: options.root, environment: ProcessInfo.processInfo.environment)
            let interactive = !noInput && !options.json && isatty(STDIN_FILENO) == 1

            var name = options.device.deviceName
            if name == nil, interactive { name = TerminalPrompt.ask("Device name", default: device.suggestedName) }
            // Validated before anything is made.
            _ = try name.map { try SettingKey.deviceName.parse($0) }

            var typed = options.container ?? device.environmentContainer
            if typed == nil, interactive {
                typed = TerminalPrompt.ask("Shared container folder (none: documents stay on this device)", default: device.suggestedContainer)
            }
            var container = try typed.map { try device.container($0) }
            if case .missing(let url) = container,
               createContainer || (interactive && TerminalPrompt.confirm("\(url.path) does not exist. Create it?")) {
                try DeviceInit.create(url)
                container = .folder(url)
            }

            let setup = try device.apply(deviceName: name, container: container, flags: try options.device.settingFlags())
            if let expectRoot { try setup.expectRoot(expectRoot) }
            let output = Output(
                root: device.root.path, created: device.isNew, device: setup.settings.deviceName,
                deviceID: setup.identity.id.description, container: setup.container?.path)
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
