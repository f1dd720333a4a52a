import Engine
import Foundation
import Model
import Settings
import Sync

extension DeviceSetup {
    /// Empties the container and seeds a new identity (`container reset`): every device notices
    /// and asks what to do.
    /// - Throws: ``EngineError/containerUnavailable(_:)`` when there is no container, or it
    ///   cannot be reset (a signed container only by its root).
    public func resetContainer(now: Date = Date()) throws -> ContainerIdentity {
        let container = try containerView()
        do {
            return try container.reset(device: identity.id, now: now)
        } catch {
            throw EngineError.containerUnavailable("\(error)")
        }
    }

    /// Changes a setting in the root's settings file (`settings set`). A container folder is
    /// checked against the root first, as `multidoc init` checks it
    /// (``DeviceSetup/checkPlaces(root:container:)``), so no command is given a container that
    /// holds the root's private key or is a file.
    /// - Throws: ``EngineError`` for a container refused, ``SettingsError`` when the file
    ///   cannot be written.
    public func setSetting(_ key: SettingKey, to value: SettingValue) throws {
        if key == .container, let path = value.textValue, !path.isEmpty {
            try Self.checkPlaces(root: root.url, container: URL(fileURLWithPath: path))
        }
        try settingsFile.set(key, to: value)
    }
}
