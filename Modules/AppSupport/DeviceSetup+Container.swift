import Engine
import Foundation
import Model
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
}
