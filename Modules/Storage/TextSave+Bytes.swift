import Foundation
import Model
import Text

/// A history entry as the SQLite store keeps it: a version byte, then varints, length-prefixed
/// UTF-8 and the device's 16 bytes. Every save adds one, and `JSONEncoder` took a fifth of the
/// store's commit of a one-character save; every open reads up to a thousand. Entries written
/// as JSON (they start with `{`) are still read.
extension TextSave {
    /// The first byte of the binary form (JSON starts with `{`, 0x7B).
    static let bytesVersion: UInt8 = 1

    /// The entry in its binary form.
    func encodedBytes() -> [UInt8] {
        var writer = ByteWriter()
        writer.byte(Self.bytesVersion)
        writer.varint(id)
        writer.string(object.rawValue)
        writer.string(attribute)
        writer.uuid(device.uuid)
        writer.string(deviceName)
        writer.varint(sequence)
        // Since 2001, as `Date` keeps it: the exact value back (a value's date counts from 1970).
        writer.littleEndian(committedAt.timeIntervalSinceReferenceDate.bitPattern)
        writer.varint(added)
        writer.varint(removed)
        writer.varint(undo.count)
        for step in undo {
            writer.varint(step.at)
            writer.varint(step.length)
            writer.string(step.text)
        }
        return writer.bytes
    }

    /// An entry from ``encodedBytes()`` or from JSON.
    /// - Throws: `TextDecodingError` or `DecodingError` for bytes that are not an entry.
    static func decoded(_ bytes: [UInt8], json decoder: JSONDecoder) throws -> TextSave {
        guard bytes.first == bytesVersion else { return try decoder.decode(TextSave.self, from: Data(bytes)) }
        var reader = ByteReader(bytes)
        reader.offset = 1
        let id = try reader.varint()
        let object = ObjectID(try reader.string(maximum: reader.remaining))
        let attribute = try reader.string(maximum: reader.remaining)
        let device = DeviceID(try reader.uuid())
        let deviceName = try reader.string(maximum: reader.remaining)
        let sequence = try reader.varint()
        let committedAt = Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.littleEndian()))
        let added = try reader.count(maximum: Int.max)
        let removed = try reader.count(maximum: Int.max)
        // Each step takes at least three bytes.
        let steps = try reader.count(maximum: reader.remaining / 3)
        var undo: [TextUndo] = []
        undo.reserveCapacity(steps)
        for _ in 0..<steps {
            let at = try reader.count(maximum: Int.max)
            let length = try reader.count(maximum: Int.max)
            undo.append(TextUndo(at: at, length: length, text: try reader.string(maximum: reader.remaining)))
        }
        try reader.finish()
        return TextSave(
            id: id, object: object, attribute: attribute, device: device, deviceName: deviceName, sequence: sequence,
            committedAt: committedAt, added: added, removed: removed, undo: undo)
    }
}
