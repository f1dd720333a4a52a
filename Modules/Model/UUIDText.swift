import Foundation

/// UUIDs as text, without Foundation's `UUID(uuidString:)` (which goes through `sscanf` on
/// Linux: a tenth of a command's time when thousands of folder names are parsed) and without
/// `uuidString.lowercased()` (two strings per call).
public enum UUIDText {
    /// Parses the 36-character form (`8-4-4-4-12` hexadecimal digits, any case); nil otherwise.
    public static func parse(_ string: String) -> UUID? {
        var string = string
        return string.withUTF8 { parse(bytes: $0) }
    }

    /// Parses the 36-character form from bytes; nil for anything else.
    public static func parse(bytes: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard bytes.count == 36 else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let ok = withUnsafeMutableBytes(of: &raw) { out -> Bool in
            var index = 0
            var position = 0
            while position < 36 {
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard bytes[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                    continue
                }
                guard let high = nibble(bytes[position]), let low = nibble(bytes[position + 1]) else { return false }
                out[index] = high << 4 | low
                index += 1
                position += 2
            }
            return true
        }
        return ok ? UUID(uuid: raw) : nil
    }

    /// The 16 bytes, in order.
    public static func bytes(_ uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    /// The UUID of 16 bytes, or nil when there are not exactly 16.
    public static func uuid(bytes: some Collection<UInt8>) -> UUID? {
        guard bytes.count == 16 else { return nil }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { out in
            for (index, byte) in bytes.enumerated() { out[index] = byte }
        }
        return UUID(uuid: raw)
    }

    /// The lower-case 36-character form.
    public static func lowercase(_ uuid: UUID) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return withUnsafeBytes(of: uuid.uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { buffer in
                var position = 0
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        buffer[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    buffer[position] = digits[Int(byte >> 4)]
                    buffer[position + 1] = digits[Int(byte & 0x0f)]
                    position += 2
                }
                return 36
            }
        }
    }

    /// Whether `lhs` sorts before `rhs` in their lower-case text form (byte order is the same).
    public static func less(_ lhs: UUID, _ rhs: UUID) -> Bool {
        withUnsafeBytes(of: lhs.uuid) { left in
            withUnsafeBytes(of: rhs.uuid) { right in
                for index in 0..<16 where left[index] != right[index] { return left[index] < right[index] }
                return false
            }
        }
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
