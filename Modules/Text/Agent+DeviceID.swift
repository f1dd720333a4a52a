import Foundation
import Model

extension Agent {
    /// The agent of a device: its UUID's 16 bytes.
    public init(_ device: DeviceID) {
        self = Agent(bytes: UUIDText.bytes(device.uuid)) ?? Agent(high: 0, low: 0)
    }
}
