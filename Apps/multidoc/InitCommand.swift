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

    struct Output: Encodable {
        var root: String
        var created: Bool
        var device: String
        var deviceID: String
        var container: String?
    }

    func run() async throws {
        try await runCommand {
            let environment = ProcessInfo.processInfo.environment
            let rootURL = options.root.map { URL(fileURLWithPath: $0) } ?? DeviceSetup.defaultRoot(environment: environment)
            let created = !FileManager.default.fileExists(atPath: rootURL.path)
            let interactive = !noInput && !options.json && isatty(STDIN_FILENO) == 1
            // What is already remembered, if the root exists (nothing is made before every
            // answer is in and the container checked: a refused init leaves no root behind).
            let existing = created
                ? nil
                : try DeviceSetup(rootPath: rootURL.path, containerPath: nil, flags: [:], environment: environment, createRoot: false)

            var name = options.deviceName
            if name == nil, interactive {
                name = ask("Device name", default: existing?.settings.deviceName ?? DeviceIdentity.hostName)
            }
            let parsedName = try name.map { try SettingKey.deviceName.parse($0) }

            var containerText = options.container ?? environment[SettingKey.container.environmentName].flatMap { $0.isEmpty ? nil : $0 }
            if containerText == nil, interactive {
                let current = existing?.settings.optionalText(.container)
                containerText = ask("Shared container folder (none: documents stay on this device)", default: current ?? "none")
            }
            var container: URL?
            if let containerText, !containerText.isEmpty, containerText.lowercased() != "none" {
                let url = URL(fileURLWithPath: absolutePath(containerText))
                var isFolder: ObjCBool = false
                if !FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) {
                    let make = createContainer || (interactive && confirm("\(url.path) does not exist. Create it?"))
                    guard make else {
                        throw CLIError(
                            message: "container folder \(url.path) does not exist; create it with --create-container (or mkdir -p '\(url.path)'), or check the path",
                            code: EngineError.containerMissing(url.path).exitCode)
                    }
                    do {
                        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
                    } catch {
                        throw CLIError(message: "cannot create container folder \(url.path): \(error.localizedDescription)", code: 10)
                    }
                } else if !isFolder.boolValue {
                    throw CLIError(message: "\(url.path) is a file, not a folder; give a folder as the container", code: 7)
                }
                container = url
            }

            // Make the root (and its device identity), then remember what was given.
            let flags = try options.settingFlags()
            let first = try DeviceSetup(rootPath: rootURL.path, containerPath: nil, flags: flags, environment: environment, createRoot: true)
            var remembered = try first.settingsFile.read()
            remembered.merge(flags) { _, given in given }
            if let parsedName { remembered[.deviceName] = parsedName }
            if let container {
                remembered[.container] = .text(container.path)
            } else if containerText != nil {
                remembered[.container] = .text("")
            }
            try first.settingsFile.write(remembered)

            // What the device is now, as every later command will see it.
            let setup = try DeviceSetup(
                rootPath: rootURL.path, containerPath: nil, flags: [:], environment: environment, createRoot: false)
            let output = Output(
                root: rootURL.path, created: created, device: setup.settings.deviceName, deviceID: setup.identity.id.description,
                container: setup.container?.path ?? container?.path)
            if options.json {
                try printJSON(output)
                return
            }
            print("\(created ? "Set up" : "Updated") device \(output.device) (\(output.deviceID.prefix(8))) in \(output.root)")
            print("  container: \(output.container ?? "none (documents stay on this device)")")
            let rootFlag = options.root == nil ? "" : " --root '\(rootURL.path)'"
            print("Next: multidoc new MyDocument\(rootFlag)   (then: multidoc list\(rootFlag))")
        }
    }

    /// Asks on the terminal; an empty answer (or end of input) takes the default.
    private func ask(_ question: String, default value: String) -> String {
        FileHandle.standardError.write(Data("\(question) [\(value)]: ".utf8))
        guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces), !line.isEmpty else { return value }
        return line
    }

    private func confirm(_ question: String) -> Bool {
        FileHandle.standardError.write(Data("\(question) [y/N]: ".utf8))
        guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased() else { return false }
        return line == "y" || line == "yes"
    }
}
