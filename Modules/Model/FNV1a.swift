import Foundation

/// A 64-bit FNV-1a hash, for cheap fingerprints of what a process saw (not for security):
/// what this device last registered, what peers last wrote to the registry.
public struct FNV1a: Sendable {
    public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    public init() {}

    /// Mixes one byte.
    public mutating func mix(byte: UInt8) {
        value ^= UInt64(byte)
        value = value &* 0x0000_0100_0000_01b3
    }

    /// Mixes the sixteen bytes of a UUID, in order.
    public mutating func mix(uuid: UUID) {
        withUnsafeBytes(of: uuid.uuid) { for byte in $0 { mix(byte: byte) } }
    }

    /// Mixes the eight bytes of `word`, lowest first.
    public mutating func mix(_ word: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) {
            value ^= (word >> UInt64(shift)) & 0xff
            value = value &* 0x0000_0100_0000_01b3
        }
    }
}
