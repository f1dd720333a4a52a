import Foundation
import Model
import Storage
import Text

/// Format 2's baseline payload (Docs/CONTAINER-FORMAT.md, "Format 2"): the envelope's header
/// says the document, the writer (`writtenBy`), the coverage (its place) and when; the payload
/// holds the rest as LEB128 varints and length-prefixed UTF-8, read by hand with every count
/// capped by what is left (a JSON baseline of a large document took seconds to encode and
/// decode: most of a late joiner's import and of every compaction).
///
/// ```
/// 0x02, format,
/// applied count, (device UUID, sequence)…,
/// object count, (id, entity, attribute count, (name, value)…)…,
/// stamped object count, (id, count, (name, wall, counter, device UUID)…)…,
/// tombstone count, (id, wall, counter, device UUID)…,
/// text object count, (id, count, (name, state length, state bytes)…)…
/// ```
///
/// Values are the log's (``TransactionLog``'s binary values); a text state is
/// ``TextSequence/encoded``. The first byte tells it from a JSON baseline in an envelope (`{`).
extension Baseline {
    static let binaryLayout: UInt8 = 2
    /// At most this many entries are made room for before they are read: a count is only the
    /// file's word until its entries are there, and a lying one must not reserve gigabytes
    /// (beyond it, the maps grow with what is really read).
    static let roomAhead = 1 << 16

    /// Room for all of a count the file claims once `read` distinct entries took `bytes`: as
    /// many as the bytes left hold at that size, at most the count (a map of a million objects
    /// grown by doubling hashes every key again at each step). Counted by distinct entries, so
    /// that repeated ids (which make no entry) cannot shrink the size and inflate the room: no
    /// more is reserved than entries of that size decoded one by one would take.
    static func room(claimed: Int, read: Int, bytes: Int, remaining: Int) -> Int {
        let each = max(1, bytes / max(1, read))
        return min(claimed, read + remaining / each)
    }

    /// The baseline as a format 2 envelope (unsigned; ``Container/seal(_:)`` signs it).
    /// `container`: the identity of the container it is written for (zeros when unknown).
    public func envelope(container: UUID?) -> ContainerEnvelope {
        var writer = ByteWriter()
        // Room for a typical object and its stamps up front (growing a buffer of megabytes by
        // doubling copies it each time).
        writer.bytes.reserveCapacity(64 + 48 * objects.count + 40 * stamps.count)
        writer.byte(Self.binaryLayout)
        writer.varint(UInt64(clamping: format))
        writer.varint(applied.count)
        for (device, sequence) in applied {
            writer.uuid(device.uuid)
            writer.varint(sequence)
        }
        writer.varint(objects.count)
        for (id, object) in objects {
            writer.string(id.rawValue)
            writer.string(object.entity)
            writer.varint(object.attributes.count)
            for (name, value) in object.attributes {
                writer.string(name)
                writer.value(value)
            }
        }
        writer.varint(stamps.count)
        for (id, attributes) in stamps {
            writer.string(id.rawValue)
            writer.varint(attributes.count)
            for (name, stamp) in attributes {
                writer.string(name)
                writer.stamp(stamp)
            }
        }
        writer.varint(tombstones.count)
        for (id, stamp) in tombstones {
            writer.string(id.rawValue)
            writer.stamp(stamp)
        }
        let texts = self.texts ?? [:]
        writer.varint(texts.count)
        for (id, attributes) in texts {
            writer.string(id.rawValue)
            writer.varint(attributes.count)
            for (name, sequence) in attributes {
                writer.string(name)
                let state = sequence.encoded
                writer.varint(state.count)
                writer.raw(state)
            }
        }
        let header = ContainerEnvelope.Header(
            container: container ?? ContainerEnvelope.zero, document: document.uuid, writer: writtenBy.uuid, place: coverage,
            writtenAt: UInt64(clamping: writtenAt.clampedMilliseconds))
        return ContainerEnvelope(kind: .baseline, header: header, payload: writer.bytes)
    }

    /// Whether an envelope's (opened) payload is a binary baseline rather than JSON.
    static func isBinary(_ payload: some Collection<UInt8>) -> Bool { payload.first == binaryLayout }

    /// The baseline in an envelope already checked (and opened) by its container, whose header
    /// gives the document, the writer, the time and the coverage the payload must add up to.
    static func decoded(_ envelope: ContainerEnvelope) throws(LogDecodingError) -> Baseline {
        var reader = ByteReader(envelope.payload)
        let name = TransactionLog.maximumNameLength
        do {
            guard try reader.byte() == binaryLayout else { throw LogDecodingError(reason: "not a binary baseline") }
            let formatOffset = reader.offset
            let formatValue = try reader.varint()
            guard formatValue >= 1, formatValue <= UInt64(Container.formatVersion) else {
                throw TextDecodingError.tooLarge(offset: formatOffset, value: formatValue)
            }
            // Each applied entry takes at least 17 bytes; an object, a stamp or a tombstone at least 2.
            var applied: [DeviceID: UInt64] = [:]
            for _ in 0..<(try reader.count(maximum: reader.remaining / 17)) {
                let device = DeviceID(try reader.uuid())
                applied[device] = try reader.varint()
            }
            let objectCount = try reader.count(maximum: reader.remaining / 2)
            var objects: [ObjectID: ObjectRecord] = [:]
            objects.reserveCapacity(min(objectCount, Self.roomAhead))
            let objectsStart = reader.offset
            var objectsRoomMade = false
            for _ in 0..<objectCount {
                if !objectsRoomMade, objects.count == Self.roomAhead {
                    objectsRoomMade = true
                    objects.reserveCapacity(Self.room(claimed: objectCount, read: objects.count, bytes: reader.offset - objectsStart, remaining: reader.remaining))
                }
                let id = ObjectID(try reader.string(maximum: name))
                let entity = try reader.string(maximum: name)
                let attributeCount = try reader.count(maximum: reader.remaining / 2)
                var attributes: [String: AttributeValue] = Dictionary(minimumCapacity: min(attributeCount, Self.roomAhead))
                for _ in 0..<attributeCount {
                    let attribute = try reader.string(maximum: name)
                    attributes[attribute] = try reader.value(maximumString: TransactionLog.maximumFileSize)
                }
                objects[id] = ObjectRecord(entity: entity, attributes: attributes)
            }
            let stampedCount = try reader.count(maximum: reader.remaining / 2)
            var stamps: [ObjectID: [String: Stamp]] = [:]
            stamps.reserveCapacity(min(stampedCount, Self.roomAhead))
            let stampsStart = reader.offset
            var stampsRoomMade = false
            for _ in 0..<stampedCount {
                if !stampsRoomMade, stamps.count == Self.roomAhead {
                    stampsRoomMade = true
                    stamps.reserveCapacity(Self.room(claimed: stampedCount, read: stamps.count, bytes: reader.offset - stampsStart, remaining: reader.remaining))
                }
                let id = ObjectID(try reader.string(maximum: name))
                let stampCount = try reader.count(maximum: reader.remaining / 19)
                var attributes: [String: Stamp] = Dictionary(minimumCapacity: min(stampCount, Self.roomAhead))
                for _ in 0..<stampCount {
                    let attribute = try reader.string(maximum: name)
                    attributes[attribute] = try reader.stamp()
                }
                stamps[id] = attributes
            }
            var tombstones: [ObjectID: Stamp] = [:]
            for _ in 0..<(try reader.count(maximum: reader.remaining / 19)) {
                let id = ObjectID(try reader.string(maximum: name))
                tombstones[id] = try reader.stamp()
            }
            var texts: [ObjectID: [String: TextSequence]] = [:]
            for _ in 0..<(try reader.count(maximum: reader.remaining / 2)) {
                let id = ObjectID(try reader.string(maximum: name))
                var attributes: [String: TextSequence] = [:]
                for _ in 0..<(try reader.count(maximum: reader.remaining / 2)) {
                    let attribute = try reader.string(maximum: name)
                    let length = try reader.count(maximum: reader.remaining)
                    attributes[attribute] = try TextSequence(decoding: Array(try reader.raw(count: length)))
                }
                texts[id] = attributes
            }
            try reader.finish()
            let header = envelope.header
            var baseline = Baseline(
                document: DocumentID(header.document), writtenBy: DeviceID(header.writer),
                writtenAt: Date(timeIntervalSince1970: Double(min(header.writtenAt, 1 << 52)) / 1000), contents: StoreContents())
            baseline.format = Int(formatValue)
            baseline.applied = applied
            baseline.objects = objects
            baseline.stamps = stamps
            baseline.tombstones = tombstones
            baseline.texts = texts.isEmpty ? nil : texts
            guard baseline.coverage == header.place else {
                throw LogDecodingError(reason: "its header says it covers \(header.place) logs, its applied map \(baseline.coverage)")
            }
            return baseline
        } catch let error as LogDecodingError {
            throw error
        } catch {
            throw LogDecodingError(reason: "malformed baseline: \(error)")
        }
    }
}
