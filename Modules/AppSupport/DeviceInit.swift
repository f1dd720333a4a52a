import Engine
import FileIO
import Foundation
import Model
import Settings

/// Setting a device up: what `multidoc init` and the TUI's first-run screen do. Make the
/// device root (and its identity), and remember the device's name and its container folder in
/// the root's settings file, so later commands need neither flag. Nothing is made before every
/// answer is in and the container is checked: a refused set-up leaves no root behind.
public struct DeviceInit: Sendable {
    /// The root folder to set up.
    public let root: URL
    /// Whether the root is new (it did not exist before).
    public let isNew: Bool
    /// What the root already remembers, when it is a device root already.
    public let existing: DeviceSetup?
    /// Whether the folder was there and empty: a set-up that fails empties it again.
    let wasEmpty: Bool
    let environment: [String: String]

    /// Looks at the root without changing anything (a folder that is not a device root yet is
    /// only looked at, so a set-up refused later leaves it as it was).
    /// - Throws: ``EngineError`` for a root path refused or an existing root that cannot be
    ///   read, ``SettingsError`` for a bad value in its settings or the environment.
    public init(rootPath: String?, environment: [String: String]) throws {
        if let rootPath { try DeviceSetup.checkRootPath(rootPath) }
        self.environment = environment
        root = rootPath.map { URL(fileURLWithPath: absolutePath($0, environment: environment)) }
            ?? DeviceSetup.defaultRoot(environment: environment)
        isNew = !FileManager.default.fileExists(atPath: root.path)
        wasEmpty = !isNew && (try? FileManager.default.contentsOfDirectory(atPath: root.path))?.isEmpty == true
        existing = DeviceRoot.looksLikeRoot(root)
            ? try DeviceSetup(rootPath: root.path, containerPath: nil, flags: [:], environment: environment, createRoot: false)
            : nil
    }

    /// The name to offer: the remembered one, or the host's.
    public var suggestedName: String { existing?.settings.deviceName ?? DeviceIdentity.hostName }

    /// The container `MULTIDOC_CONTAINER` names, taken without asking.
    public var environmentContainer: String? {
        environment[SettingKey.container.environmentName].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The container to offer when asking: the remembered one, or none.
    public var suggestedContainer: String { existing?.settings.optionalText(.container) ?? "none" }

    /// A container folder as typed, checked.
    public enum ContainerChoice: Sendable, Equatable {
        /// No container: documents stay on this device (typed `none` or nothing).
        case none
        /// A folder that exists.
        case folder(URL)
        /// A folder that does not exist yet: make it (``create(_:)``) or ask again.
        case missing(URL)
    }

    /// Checks a typed container folder (`~` expanded, made absolute) against the root, as
    /// every later command will (``DeviceSetup/checkPlaces(root:container:)``).
    /// - Throws: ``EngineError`` for a path with a control character, a file, a folder that
    ///   holds the root or lies inside it, or another device's root.
    public func container(_ typed: String) throws -> ContainerChoice {
        let trimmed = typed.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.lowercased() != "none" else { return .none }
        try DeviceSetup.checkPathText(trimmed, what: "the container", option: "--container", emptyHint: "")
        let url = URL(fileURLWithPath: absolutePath(trimmed, environment: environment))
        try DeviceSetup.checkPlaces(root: root, container: url)
        guard FileManager.default.fileExists(atPath: url.path) else { return .missing(url) }
        return .folder(url)
    }

    /// Makes a container folder the user asked for.
    /// - Throws: ``AppError`` (`.writeFailed`) naming the folder.
    public static func create(_ folder: URL) throws {
        do {
            try AtomicFile.makeDirectory(folder)
        } catch {
            throw AppError(.writeFailed, "cannot create container folder \(folder.path): \(error.detail ?? error.description)", cause: error)
        }
    }

    /// Makes the root (with its local API token, ``APIToken``) and remembers what was given; `container` nil leaves the remembered
    /// container as it is, `.none` forgets it.
    /// - Parameters:
    ///   - deviceName: the name typed or given, nil to keep what the root has.
    ///   - container: the checked container (``container(_:)``); `.missing` is refused.
    ///   - flags: setting flags given with the command, remembered too.
    /// - Returns: the device as every later command will see it.
    public func apply(
        deviceName: String?, container: ContainerChoice?, flags: [SettingKey: SettingValue] = [:]
    ) throws -> DeviceSetup {
        let name = try deviceName.map { try SettingKey.deviceName.parse($0) }
        if case .missing(let url) = container {
            throw AppError(
                .containerUnavailable,
                "container folder \(url.path) does not exist; create it with --create-container (or mkdir -p '\(url.path)'), or check the path")
        }
        do {
            let first = try DeviceSetup(rootPath: root.path, containerPath: nil, flags: flags, environment: environment, createRoot: true)
            var remembered = try first.settingsFile.read()
            remembered.merge(flags) { _, given in given }
            if let name { remembered[.deviceName] = name }
            switch container {
            case .folder(let url)?: remembered[.container] = .text(url.path)
            case .none?: remembered[.container] = .text("")
            case .missing?, nil: break
            }
            try first.settingsFile.write(remembered)
            _ = try APIToken.loadOrCreate(root: first.root.url)
            return try DeviceSetup(rootPath: root.path, containerPath: nil, flags: [:], environment: environment, createRoot: false)
        } catch {
            // A root this set-up made and could not finish is taken away whole: a half-made
            // root would stop every later command (and `init` again) with its error.
            if isNew {
                try? FileManager.default.removeItem(at: root)
            } else if wasEmpty {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [] {
                    try? FileManager.default.removeItem(at: root.appendingPathComponent(name, isDirectory: false))
                }
            }
            throw error
        }
    }

    /// Takes away a container folder a set-up made when the set-up failed after it: only
    /// while nothing was put in it.
    static func removeIfEmpty(_ folder: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path), names.isEmpty else { return }
        try? FileManager.default.removeItem(at: folder)
    }
}

/// A folder path as typed (at a prompt, quoted, or relative to where the command runs) made
/// absolute: `~` and `~/…` expanded as the shell would ($HOME first). Remembered paths
/// (the `Container` setting) are stored this way, so later commands may run anywhere.
public func absolutePath(_ typed: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    var path = typed
    if path == "~" || path.hasPrefix("~/") {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        path = home + path.dropFirst()
    }
    return URL(fileURLWithPath: path).standardizedFileURL.path
}
