import Foundation
import Model
import Text

/// What one commit of a JSON store changed, appended to `<store>.journal` after the snapshot
/// (Docs/STORAGE.md, "JSON backend"): the changed objects (a text that its sequence holds is not
/// repeated), bookkeeping entries set or removed, and per changed text either the operations
/// the commit applied (``TextJournal``) or its whole state.
struct JSONStoreDelta: Codable, Sendable {
    /// An object as the delta holds it: its attributes but those in `held`, whose value is the
    /// visible text of the object's sequence of that name.
    struct Record: Codable, Sendable {
        var entity: String
        var attributes: [String: AttributeValue]
        var held: [String]?
    }

    struct TextKey: Codable, Hashable, Sendable {
        var object: ObjectID
        var attribute: String
    }

    struct Operations: Codable, Sendable {
        var object: ObjectID
        var attribute: String
        /// The operations in format 2's spelling (``SQLiteSchema/operationBytes(_:)``).
        var operations: Data
    }

    struct State: Codable, Sendable {
        var object: ObjectID
        var attribute: String
        var state: TextSequence
    }

    /// The commit's number: one more than the journal's previous frame, or than the snapshot's
    /// `journalThrough`. Frames at or below the snapshot's are already in it.
    var sequence: UInt64
    var objects: [ObjectID: Record]?
    var removedObjects: [ObjectID]?
    var stamps: [ObjectID: [String: Stamp]]?
    var removedStamps: [ObjectID]?
    var tombstones: [ObjectID: Stamp]?
    var removedTombstones: [ObjectID]?
    var applied: [DeviceID: UInt64]?
    var removedApplied: [DeviceID]?
    var outbox: [String: Data]?
    var removedOutbox: [UInt64]?
    var values: [String: String]?
    var removedValues: [String]?
    var clock: HybridLogicalClock?
    var textOperations: [Operations]?
    var textStates: [State]?
    var removedTexts: [TextKey]?
    /// Entries added, and ids removed; or, when the history changed any other way, all of it.
    var history: [TextSave]?
    var removedHistory: [UInt64]?
    var wholeHistory: [TextSave]?

    init(sequence: UInt64) { self.sequence = sequence }

    /// What changed from `baseline` to `after`, or nil when nothing did. The baseline holds no
    /// texts: they are compared by ``Text/TextSequence/revision`` against `committedTexts`,
    /// and a changed text's operations come from `after.textJournal` when it saw every change.
    init?(sequence: UInt64, from baseline: WriteBaseline, committedTexts: [TextJournal.Key: UInt64], to after: StoreContents) {
        self.init(sequence: sequence)
        let before = baseline.contents
        var changed = false
        if baseline.objectsMayDiffer(from: after) {
            var objects: [ObjectID: Record] = [:]
            for (id, record) in after.graph.objects where baseline.changed(id, record, in: after) {
                objects[id] = Self.record(record, texts: after.sync.texts[id])
            }
            let removed = before.graph.objects.keys.filter { after.graph.objects[$0] == nil }
            self.objects = objects.isEmpty ? nil : objects
            removedObjects = removed.isEmpty ? nil : removed
            changed = changed || !objects.isEmpty || !removed.isEmpty
        }
        if before.sync.stamps != after.sync.stamps {
            (stamps, removedStamps) = Self.difference(before.sync.stamps, after.sync.stamps)
            changed = true
        }
        if before.sync.tombstones != after.sync.tombstones {
            (tombstones, removedTombstones) = Self.difference(before.sync.tombstones, after.sync.tombstones)
            changed = true
        }
        if before.sync.applied != after.sync.applied {
            (applied, removedApplied) = Self.difference(before.sync.applied, after.sync.applied)
            changed = true
        }
        if before.sync.outbox != after.sync.outbox {
            let (set, removed) = Self.difference(before.sync.outbox, after.sync.outbox)
            outbox = set.map { Dictionary(uniqueKeysWithValues: $0.map { ("\($0.key)", $0.value) }) }
            removedOutbox = removed
            changed = true
        }
        if before.sync.values != after.sync.values {
            (values, removedValues) = Self.difference(before.sync.values, after.sync.values)
            changed = true
        }
        if before.sync.clock != after.sync.clock {
            clock = after.sync.clock
            changed = true
        }
        var operations: [Operations] = [], states: [State] = []
        let texts = after.textChanges(since: committedTexts)
        for (key, change) in texts.changed {
            switch change {
            case .operations(let applied):
                guard !applied.isEmpty else { continue }
                operations.append(Operations(object: key.object, attribute: key.attribute, operations: Data(SQLiteSchema.operationBytes(applied))))
            case .state(let sequence):
                states.append(State(object: key.object, attribute: key.attribute, state: sequence))
            }
        }
        let removedTexts = texts.removed.map { TextKey(object: $0.object, attribute: $0.attribute) }
        changed = changed || !texts.changed.isEmpty
        changed = changed || !removedTexts.isEmpty
        textOperations = operations.isEmpty ? nil : operations
        textStates = states.isEmpty ? nil : states
        self.removedTexts = removedTexts.isEmpty ? nil : removedTexts
        if before.sync.history != after.sync.history {
            changed = true
            let old = Set(before.sync.history.map(\.id)), new = Set(after.sync.history.map(\.id))
            let added = after.sync.history.filter { !old.contains($0.id) }
            let kept = before.sync.history.filter { new.contains($0.id) }
            if kept + added == after.sync.history {
                history = added.isEmpty ? nil : added
                let removed = old.subtracting(new).sorted()
                removedHistory = removed.isEmpty ? nil : removed
            } else {
                wholeHistory = after.sync.history
            }
        }
        guard changed else { return nil }
    }

    private static func record(_ record: ObjectRecord, texts: [String: TextSequence]?) -> Record {
        guard let texts else { return Record(entity: record.entity, attributes: record.attributes) }
        var attributes = record.attributes
        var held: [String] = []
        for (name, value) in record.attributes {
            guard case .string = value, texts[name] != nil else { continue }
            attributes[name] = nil
            held.append(name)
        }
        return Record(entity: record.entity, attributes: attributes, held: held.isEmpty ? nil : held.sorted())
    }

    private static func difference<Key: Hashable, Value: Equatable>(
        _ before: [Key: Value], _ after: [Key: Value]
    ) -> (set: [Key: Value]?, removed: [Key]?) {
        var set: [Key: Value] = [:]
        for (key, value) in after where before[key] != value { set[key] = value }
        let removed = before.keys.filter { after[$0] == nil }
        return (set.isEmpty ? nil : set, removed.isEmpty ? nil : removed)
    }

    /// Applies the delta to `contents`. The visible text of each held attribute is filled in
    /// by the caller (``fillHeldTexts(_:in:)``) once every frame is applied: a long text is
    /// built once, not once per frame. Returns, for each object this frame wrote, the
    /// attributes its record leaves to a sequence (none for a record that leaves none: a later
    /// frame's record replaces what an earlier one left).
    func apply(to contents: inout StoreContents) throws(JSONJournalError) -> [ObjectID: [String]] {
        var held: [ObjectID: [String]] = [:]
        for (id, record) in objects ?? [:] {
            contents.graph.objects[id] = ObjectRecord(entity: record.entity, attributes: record.attributes)
            held[id] = record.held ?? []
        }
        for id in removedObjects ?? [] { contents.graph.objects[id] = nil }
        for (id, stamps) in stamps ?? [:] { contents.sync.stamps[id] = stamps }
        for id in removedStamps ?? [] { contents.sync.stamps[id] = nil }
        for (id, stamp) in tombstones ?? [:] { contents.sync.tombstones[id] = stamp }
        for id in removedTombstones ?? [] { contents.sync.tombstones[id] = nil }
        for (device, sequence) in applied ?? [:] { contents.sync.applied[device] = sequence }
        for device in removedApplied ?? [] { contents.sync.applied[device] = nil }
        for (key, payload) in outbox ?? [:] {
            guard let number = UInt64(key) else { throw JSONJournalError("outbox entry \"\(key)\" is not a sequence number") }
            contents.sync.outbox[number] = payload
        }
        for number in removedOutbox ?? [] { contents.sync.outbox[number] = nil }
        for (key, value) in values ?? [:] { contents.sync.values[key] = value }
        for key in removedValues ?? [] { contents.sync.values[key] = nil }
        if let clock { contents.sync.clock = clock }
        for key in removedTexts ?? [] {
            contents.sync.texts[key.object]?[key.attribute] = nil
            if contents.sync.texts[key.object]?.isEmpty == true { contents.sync.texts[key.object] = nil }
        }
        for state in textStates ?? [] { contents.sync.texts[state.object, default: [:]][state.attribute] = state.state }
        for entry in textOperations ?? [] {
            let operations: [TextOperation]
            do {
                operations = try SQLiteSchema.decodeOperations(Array(entry.operations))
            } catch {
                throw JSONJournalError("the operations of \(entry.object.rawValue).\(entry.attribute) are not text operations: \(error)")
            }
            guard contents.sync.texts[entry.object]?[entry.attribute] != nil else {
                throw JSONJournalError("operations of \(entry.object.rawValue).\(entry.attribute) follow no text state")
            }
            // As the save applied them: one the state refused then is refused again.
            for operation in operations { _ = try? contents.sync.texts[entry.object]?[entry.attribute]?.apply(operation) }
        }
        if let wholeHistory {
            contents.sync.history = wholeHistory
        } else if history != nil || removedHistory != nil {
            if let removed = removedHistory.map(Set.init), !removed.isEmpty {
                contents.sync.history.removeAll { removed.contains($0.id) }
            }
            contents.sync.history += history ?? []
        }
        return held
    }

    /// Sets each attribute `held` names to the visible text of its sequence.
    static func fillHeldTexts(_ held: [ObjectID: [String]], in contents: inout StoreContents) throws(JSONJournalError) {
        for (object, names) in held {
            for name in names { try fillHeldText(TextJournal.Key(object: object, attribute: name), in: &contents) }
        }
    }

    private static func fillHeldText(_ key: TextJournal.Key, in contents: inout StoreContents) throws(JSONJournalError) {
        guard contents.graph.objects[key.object] != nil else { return }
        guard let sequence = contents.sync.texts[key.object]?[key.attribute] else {
            throw JSONJournalError("\(key.object.rawValue).\(key.attribute) is left to a text state that is not there")
        }
        contents.graph.objects[key.object]?.attributes[key.attribute] = .string(sequence.text)
    }
}

/// A journal frame that decoded but does not fit the state before it.
struct JSONJournalError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The journal's frames: a 4-byte little-endian length, the CRC-32 of the payload (4 bytes,
/// little-endian), the payload (one ``JSONStoreDelta`` as JSON). A frame cut short or whose
/// checksum fails ends the journal: it is the tail of a commit that never returned (a crash or
/// power loss mid-append), and the next writer cuts it off before appending.
enum JSONJournalFrame {
    static let headerSize = 8
    /// Larger than any frame a commit writes; a length past it is damage.
    static let maximumPayload = 1 << 30

    static func encode(_ payload: Data) -> Data {
        var frame = Data(capacity: headerSize + payload.count)
        let length = UInt32(truncatingIfNeeded: payload.count), checksum = CRC32.checksum(payload)
        withUnsafeBytes(of: length.littleEndian) { frame.append(contentsOf: $0) }
        withUnsafeBytes(of: checksum.littleEndian) { frame.append(contentsOf: $0) }
        frame.append(payload)
        return frame
    }

    /// The whole frames of `bytes` from `start`: each payload and where it ends.
    static func frames(in bytes: Data, from start: Int) -> [(payload: Data, end: Int)] {
        var frames: [(Data, Int)] = []
        var offset = bytes.startIndex + start
        while bytes.endIndex - offset >= headerSize {
            let length = Int(littleEndian32(bytes, at: offset)), checksum = littleEndian32(bytes, at: offset + 4)
            guard length <= maximumPayload, bytes.endIndex - offset - headerSize >= length else { break }
            let payload = bytes.subdata(in: (offset + headerSize)..<(offset + headerSize + length))
            guard CRC32.checksum(payload) == checksum else { break }
            offset += headerSize + length
            frames.append((payload, offset - bytes.startIndex))
        }
        return frames
    }

    private static func littleEndian32(_ bytes: Data, at offset: Int) -> UInt32 {
        var value: UInt32 = 0
        for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * UInt32(index)) }
        return value
    }
}

/// CRC-32 (IEEE 802.3, reflected, as zlib computes it).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        data.withUnsafeBytes { bytes in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
