import Foundation
import Model

/// The binary spelling of attribute values, stamps and UUIDs, shared by format 2's logs and
/// baselines (Sync) and the SQLite store's records (Storage).
///
/// ```
/// value: 0 null, 1 string, 2 date (seconds, 8-byte IEEE 754), 3 int (zigzag varint),
///        4 double (8 bytes), 5 false, 6 true
/// stamp: wall, counter, device UUID (16 bytes)
/// ```
extension ByteWriter {
    package mutating func value(_ value: AttributeValue) {
        switch value {
        case .null: byte(0)
        case .string(let text):
            byte(1)
            string(text)
        case .date(let date):
            byte(2)
            littleEndian(date.timeIntervalSince1970.bitPattern)
        case .int(let int):
            byte(3)
            varint(UInt64(bitPattern: (int << 1) ^ (int >> 63)))
        case .double(let double):
            byte(4)
            littleEndian(double.bitPattern)
        case .bool(let bool): byte(bool ? 6 : 5)
        }
    }

    package mutating func stamp(_ stamp: Stamp) {
        varint(stamp.wall)
        varint(UInt64(stamp.counter))
        uuid(stamp.device.uuid)
    }

    package mutating func uuid(_ uuid: UUID) {
        withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
    }

    package mutating func littleEndian(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

extension ByteReader {
    /// A value written by ``ByteWriter/value(_:)``; a string of at most `maximumString` bytes.
    package mutating func value(maximumString: Int) throws(TextDecodingError) -> AttributeValue {
        let start = offset
        switch try byte() {
        case 0: return .null
        case 1: return .string(try string(maximum: maximumString))
        case 2: return .date(Date(timeIntervalSince1970: Double(bitPattern: try littleEndian())))
        case 3:
            let zigzag = try varint()
            return .int(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
        case 4: return .double(Double(bitPattern: try littleEndian()))
        case 5: return .bool(false)
        case 6: return .bool(true)
        case let tag: throw .unknownTag(offset: start, tag: tag)
        }
    }

    package mutating func stamp() throws(TextDecodingError) -> Stamp {
        let wall = try varint()
        let counterOffset = offset
        let counterValue = try varint()
        guard let counter = UInt32(exactly: counterValue) else { throw .tooLarge(offset: counterOffset, value: counterValue) }
        return Stamp(wall: wall, counter: counter, device: DeviceID(try uuid()))
    }

    /// 16 bytes as a UUID (read byte by byte: the generic `UUIDText.uuid(bytes:)` is not
    /// specialised across modules, and its metadata lookups were most of loading a store).
    package mutating func uuid() throws(TextDecodingError) -> UUID {
        guard remaining >= 16 else { throw .truncated(offset: offset) }
        let b = bytes, o = offset
        offset += 16
        return UUID(uuid: (
            b[o], b[o + 1], b[o + 2], b[o + 3], b[o + 4], b[o + 5], b[o + 6], b[o + 7],
            b[o + 8], b[o + 9], b[o + 10], b[o + 11], b[o + 12], b[o + 13], b[o + 14], b[o + 15]))
    }

    package mutating func littleEndian() throws(TextDecodingError) -> UInt64 {
        guard remaining >= 8 else { throw .truncated(offset: offset) }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        offset += 8
        return value
    }
}
