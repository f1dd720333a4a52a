import Foundation
import Model
import Sync

// A container that lost its identity file gets it back from a device that synced with it.
extension DeviceSetup {
    /// `multidoc container repair`, before anything else: writes the container identity this
    /// device remembers again when the container has none left (no identity file, or only
    /// damaged ones). Every device that synced with it then finds the container it knows,
    /// instead of one whose identity changed. Returns the identity written, or nil when there
    /// was nothing to do (the container has an identity, or this device never synced).
    /// - Throws: ``EngineError/containerUnavailable(_:)`` when the container cannot be read or
    ///   written, or is signed (its identity is its root's to sign: `container reset`).
    public func restoreContainerIdentity(now: Date = Date()) throws(EngineError) -> UUID? {
        guard let device = root.savedDevice(), let remembered = device.containerID else { return nil }
        let view = try containerView()
        do {
            return try view.restoreIdentity(remembered, format: device.containerFormat ?? 1, device: identity.id, now: now) ? remembered : nil
        } catch {
            throw EngineError.containerUnavailable(error.description)
        }
    }
}
