import Engine
import Foundation
import Model
import Settings

extension DeviceInit {
    /// What became of a first-run form's answers (``submit(name:container:flags:confirmed:)``).
    public enum FormOutcome: Sendable {
        /// The root is set up.
        case setUp(DeviceSetup)
        /// The container folder does not exist: the user is asked, and submitting again with it
        /// as `confirmed` creates it.
        case confirmCreate(URL, message: String)
        /// An answer is refused: the field to change (0 the name, 1 the container) and why.
        case refused(field: Int, message: String)
    }

    /// Checks the first-run screen's answers and, when they hold, sets the root up as
    /// `multidoc init` does; otherwise says what to change. Nothing is made before that.
    public func submit(name typedName: String, container typed: String, flags: [SettingKey: SettingValue], confirmed: URL?) -> FormOutcome {
        let name = typedName.trimmingCharacters(in: .whitespaces)
        do {
            _ = try SettingKey.deviceName.parse(name)
            var choice = try container(typed)
            var made: URL?
            if case .missing(let url) = choice {
                guard confirmed == url else {
                    return .confirmCreate(url, message: "\(url.path) does not exist: Enter creates it, or change the path")
                }
                try Self.create(url)
                made = url
                choice = .folder(url)
            }
            do {
                return .setUp(try apply(deviceName: name, container: choice, flags: flags))
            } catch {
                if let made { Self.removeIfEmpty(made) }
                throw error
            }
        } catch {
            return .refused(field: error is SettingsError ? 0 : 1, message: AppError(error).message)
        }
    }
}

extension DeviceInit {
    /// What `multidoc init` does: takes the name and the container given (or in
    /// `MULTIDOC_CONTAINER`), asks for what is missing when `interactive`, creates a missing
    /// container folder when `createContainer` or the user agrees, and sets the root up. The
    /// name and the container's path (``container(_:)``) are checked before anything is made;
    /// a set-up that fails takes away the root and the container folder it made.
    /// - Throws: ``SettingsError`` for a bad name or flag, ``EngineError`` for a path refused
    ///   (an empty `--container` among them) or a root or container folder that cannot be made.
    public func setUp(
        name given: String?, container typedContainer: String?, flags: [SettingKey: SettingValue], createContainer: Bool, interactive: Bool
    ) throws -> DeviceSetup {
        if let typedContainer { _ = try DeviceSetup.containerOption(typedContainer) }
        var name = given
        if name == nil, interactive { name = TerminalPrompt.ask("Device name", default: suggestedName) }
        _ = try name.map { try SettingKey.deviceName.parse($0) }
        var typed = typedContainer ?? environmentContainer
        if typed == nil, interactive {
            typed = TerminalPrompt.ask("Shared container folder (none: documents stay on this device)", default: suggestedContainer)
        }
        var choice = try typed.map { try container($0) }
        var made: URL?
        if case .missing(let url) = choice, createContainer || (interactive && TerminalPrompt.confirm("\(url.path) does not exist. Create it?")) {
            try Self.create(url)
            made = url
            choice = .folder(url)
        }
        do {
            return try apply(deviceName: name, container: choice, flags: flags)
        } catch {
            if let made { Self.removeIfEmpty(made) }
            throw error
        }
    }
}

/// What `multidoc init` set up (documented field names).
public struct InitRow: Encodable, Sendable {
    public var root: String
    public var created: Bool
    public var device: String
    public var deviceID: String
    public var container: String?

    /// The row of `setup`, made by `device`.
    public init(_ device: DeviceInit, _ setup: DeviceSetup) {
        root = device.root.path
        created = device.isNew
        self.device = setup.settings.deviceName
        deviceID = setup.identity.id.description
        container = setup.container?.path
    }
}
