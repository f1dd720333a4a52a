import CSQLiteConfig
import Foundation
import GRDB
import Model
import Text

extension SQLiteSchema {
    // MARK: Records

    /// The layout of a `records.attributes` blob this build writes; it reads `1` too (`v4`:
    /// name, value, 0 | 1 stamp).
    static let recordLayout: UInt8 = 2

    /// An object's attributes and their stamps as one `records.attributes` blob:
    ///
    /// ```
    /// 0x02, attribute count, (name, flags, value unless flag 2, stamp if flag 1)…
    /// ```
    ///
    /// Names are length-prefixed UTF-8, values and stamps are format 2's (`ByteWriter.value`,
    /// `ByteWriter.stamp`), counts LEB128 varints. Flag 1: a stamp follows. Flag 2 (`v5`): the
    /// value is the visible text of the attribute's sequence in `texts` (a merged text always
    /// shows its sequence, ``Sync/Merge``), so a save of a long text does not write it again.
    static func recordBytes(_ record: ObjectRecord, stamps: [String: Stamp]?, texts: [String: TextSequence]? = nil) -> [UInt8] {
        var writer = ByteWriter()
        appendRecord(record, stamps: stamps, texts: texts, to: &writer)
        return writer.bytes
    }

    /// ``recordBytes(_:stamps:)`` appended to `writer`.
    static func appendRecord(_ record: ObjectRecord, stamps: [String: Stamp]?, texts: [String: TextSequence]? = nil, to writer: inout ByteWriter) {
        writer.byte(recordLayout)
        writer.varint(record.attributes.count)
        for (name, value) in record.attributes {
            writer.string(name)
            let stamp = stamps?[name]
            let held: Bool
            if case .string = value, texts?[name] != nil { held = true } else { held = false }
            writer.byte((stamp == nil ? 0 : 1) | (held ? 2 : 0))
            if !held { writer.value(value) }
            if let stamp { writer.stamp(stamp) }
        }
    }

    /// What ``recordBytes(_:stamps:)`` wrote; anything else is a corrupt store naming the object.
    static func record(_ data: Data, of id: ObjectID) throws -> (attributes: [String: AttributeValue], stamps: [String: Stamp], heldBySequence: [String]) {
        let layout = data.first
        guard layout == 1 || layout == recordLayout else {
            throw corrupt("records.attributes of \(id.rawValue) is not an attribute record (layout \(data.first.map(String.init) ?? "none"))")
        }
        var reader = ByteReader(Array(data))
        reader.offset = 1
        do throws(TextDecodingError) {
            // Each attribute takes at least 3 bytes (an empty name, a null, no stamp).
            let count = try reader.count(maximum: reader.remaining / 3)
            var attributes: [String: AttributeValue] = Dictionary(minimumCapacity: count)
            var stamps: [String: Stamp] = [:]
            var held: [String] = []
            for _ in 0..<count {
                let name = try reader.string(maximum: reader.remaining)
                if layout == 1 {
                    attributes[name] = try reader.value(maximumString: reader.remaining)
                    switch try reader.byte() {
                    case 0: break
                    case 1: stamps[name] = try reader.stamp()
                    case let flag: throw .unknownTag(offset: reader.offset - 1, tag: flag)
                    }
                    continue
                }
                let flagOffset = reader.offset
                let flags = try reader.byte()
                guard flags & ~3 == 0 else { throw .unknownTag(offset: flagOffset, tag: flags) }
                if flags & 2 != 0 {
                    // Filled in from the text's sequence once `texts` is read.
                    attributes[name] = .string("")
                    held.append(name)
                } else {
                    attributes[name] = try reader.value(maximumString: reader.remaining)
                }
                if flags & 1 != 0 { stamps[name] = try reader.stamp() }
            }
            try reader.finish()
            return (attributes, stamps, held)
        } catch {
            throw corrupt("records.attributes of \(id.rawValue) is damaged: \(error)")
        }
    }
}
