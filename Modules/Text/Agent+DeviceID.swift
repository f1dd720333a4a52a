import Foundation
import Model

extension Agent {
    /// The agent of a device: its UUID's 16 bytes.
    public init(_ device: DeviceID) {
        let u = device.uuid.uuid
        let bytes = [u.0, u.1, u.2, u.3, u.4, u.5, u.6, u.7, u.8, u.9, u.10, u.11, u.12, u.13, u.14, u.15]
        var high: UInt64 = 0
        var low: UInt64 = 0
        for byte in bytes[0..<8] { high = high << 8 | UInt64(byte) }
        for byte in bytes[8..<16] { low = low << 8 | UInt64(byte) }
        self.init(high: high, low: low)
    }
}
