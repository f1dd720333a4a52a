import CSQLiteConfig
import Foundation
import GRDB
import Model
import Text

extension SQLiteSchema {
    // MARK: Save

    /// Runs `statement` (three parameters: text, text, blob) once, binding straight from the
    /// values' bytes (GRDB's arguments box each value; this runs once per changed object).
    static func step(_ statement: Statement, _ first: String, _ second: String, _ blob: UnsafeRawBufferPointer, in db: Database) throws {
        var first = first, second = second
        guard max(first.utf8.count, second.utf8.count, blob.count) <= Int(Int32.max) else {
            throw DatabaseError(resultCode: .SQLITE_TOOBIG, message: "a value of more than 2 GB")
        }
        let code = first.withUTF8 { first in
            second.withUTF8 { second in
                multidoc_sqlite_step_text_text_blob(
                    statement.sqliteStatement, UnsafeRawPointer(first.baseAddress)?.assumingMemoryBound(to: CChar.self),
                    Int32(clamping: first.count), UnsafeRawPointer(second.baseAddress)?.assumingMemoryBound(to: CChar.self),
                    Int32(clamping: second.count), blob.baseAddress, Int32(clamping: blob.count))
            }
        }
        guard code == SQLITE_DONE else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
    }

    /// Writes only what differs between `baseline` and `after`, and says whether anything did.
    ///
    /// Texts are not compared: the baseline holds none (so that the body changes the texts in
    /// place), and `committedTexts` holds each committed text's
    /// ``Text/TextSequence/revision``. A text whose revision moved has the operations of
    /// `after.textJournal` appended when they account for the whole change and do not outweigh
    /// the text (``StoreContents/textChanges(since:)``), and its whole state written otherwise
    /// (which drops its appended operations).
    ///
    /// The history is not compared either: `committedHistory` holds the ids of the entries
    /// committed, in order (entries are added and dropped, never changed in place).
    static func save(
        from baseline: WriteBaseline, committedTexts: [TextJournal.Key: UInt64], committedHistory: [UInt64], to after: StoreContents,
        noted: Set<ObjectID>? = nil, in db: Database
    ) throws -> (changed: Bool, appendedRows: Int) {
        let before = baseline.contents
        var changed = false
        var appendedRows = 0
        if let noted {
            // The body noted what it changed: those rows, and no walk of the others.
            changed = try saveNoted(noted, of: after, in: db)
        } else if baseline.objectsMayDiffer(from: after) || before.sync.stamps != after.sync.stamps {
            let stampsDiffer = before.sync.stamps != after.sync.stamps
            // The changed objects' rows, encoded while walking `after` in its own order (looking
            // objects up again in key order cost a cache miss each).
            var rows = RecordRows(of: after)
            for (id, record) in after.graph.objects {
                guard baseline.changed(id, record, in: after) || before.sync.stamps[id] != after.sync.stamps[id] else { continue }
                rows.add(id, record)
            }
            try rows.write(in: db)
            let delete = try db.cachedStatement(sql: "DELETE FROM records WHERE id = ?")
            var removed = false
            for id in before.graph.objects.keys where after.graph.objects[id] == nil {
                try delete.execute(arguments: [id.rawValue])
                removed = true
            }
            // A long text's record left out of the baseline and unchanged but for its text
            // (written with the text's state below) is no change here.
            changed = !rows.isEmpty || removed || stampsDiffer
        }
        if before.sync.tombstones != after.sync.tombstones {
            changed = true
            for (id, stamp) in after.sync.tombstones where before.sync.tombstones[id] != stamp {
                try db.cachedStatement(
                    sql: "INSERT OR REPLACE INTO tombstones (object_id, stamp_wall, stamp_counter, stamp_device) VALUES (?, ?, ?, ?)"
                ).execute(arguments: [id.rawValue, Int64(clamping: stamp.wall), Int64(stamp.counter), stamp.device.description])
            }
            for id in before.sync.tombstones.keys where after.sync.tombstones[id] == nil {
                try db.cachedStatement(sql: "DELETE FROM tombstones WHERE object_id = ?").execute(arguments: [id.rawValue])
            }
        }
        if before.sync.applied != after.sync.applied {
            changed = true
            for (device, sequence) in after.sync.applied where before.sync.applied[device] != sequence {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO applied (device, sequence) VALUES (?, ?)").execute(arguments: [device.description, Int64(clamping: sequence)])
            }
            for device in before.sync.applied.keys where after.sync.applied[device] == nil {
                try db.cachedStatement(sql: "DELETE FROM applied WHERE device = ?").execute(arguments: [device.description])
            }
        }
        if before.sync.outbox != after.sync.outbox {
            changed = true
            for (sequence, payload) in after.sync.outbox where before.sync.outbox[sequence] != payload {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO outbox (sequence, payload) VALUES (?, ?)").execute(arguments: [Int64(clamping: sequence), payload])
            }
            for sequence in before.sync.outbox.keys where after.sync.outbox[sequence] == nil {
                try db.cachedStatement(sql: "DELETE FROM outbox WHERE sequence = ?").execute(arguments: [Int64(clamping: sequence)])
            }
        }
        let texts = after.textChanges(since: committedTexts)
        changed = changed || !texts.isEmpty
        for (key, change) in texts.changed {
            switch change {
            case .operations(let operations):
                guard !operations.isEmpty else { continue }
                try appendTextOperations(operations, to: key, in: db)
                appendedRows += 1
            case .state(let sequence):
                try writeTextState(sequence, of: key, in: db)
            }
        }
        for key in texts.removed {
            try db.cachedStatement(sql: "DELETE FROM texts WHERE object_id = ? AND name = ?").execute(arguments: [key.object.rawValue, key.attribute])
            try db.cachedStatement(sql: "DELETE FROM text_operations WHERE object_id = ? AND name = ?").execute(arguments: [key.object.rawValue, key.attribute])
        }
        let history = Self.historyChanges(committed: committedHistory, now: after.sync.history)
        if !history.added.isEmpty || !history.removed.isEmpty {
            changed = true
            let insert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO history (id, entry) VALUES (?, ?)")
            for entry in history.added {
                try insert.execute(arguments: [Int64(clamping: entry.id), Data(entry.encodedBytes())])
            }
            for id in history.removed {
                try db.cachedStatement(sql: "DELETE FROM history WHERE id = ?").execute(arguments: [Int64(clamping: id)])
            }
        }
        if before.sync.clock != after.sync.clock {
            changed = true
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('clock.wall', ?), ('clock.counter', ?)").execute(arguments: ["\(after.sync.clock.wall)", "\(after.sync.clock.counter)"])
        }
        if before.sync.values != after.sync.values {
            changed = true
            for (key, value) in after.sync.values where before.sync.values[key] != value {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").execute(arguments: ["value.\(key)", value])
            }
            for key in before.sync.values.keys where after.sync.values[key] == nil {
                try db.cachedStatement(sql: "DELETE FROM meta WHERE key = ?").execute(arguments: ["value.\(key)"])
            }
        }
        return (changed, appendedRows)
    }

    /// The rows of the objects a write's body noted (``StoreContents/objectJournal``): each
    /// one `after` holds written, in key order, each one it does not hold deleted. Whether
    /// any was noted.
    static func saveNoted(_ noted: Set<ObjectID>, of after: StoreContents, in db: Database) throws -> Bool {
        guard !noted.isEmpty else { return false }
        // When the notes are a good share of the table (a backlog's first import), the table is
        // walked in its own order and the notes asked, rather than each noted object looked up
        // at a random place.
        var rows = RecordRows(of: after)
        if noted.count >= after.graph.objects.count / 4 {
            for (id, record) in after.graph.objects where noted.contains(id) { rows.add(id, record) }
        } else {
            for id in noted {
                if let record = after.graph.objects[id] { rows.add(id, record) }
            }
        }
        try rows.write(in: db)
        // Noted and no longer held: deleted (only looked for when some noted object was not written).
        if rows.count < noted.count {
            let delete = try db.cachedStatement(sql: "DELETE FROM records WHERE id = ?")
            for id in noted where after.graph.objects[id] == nil { try delete.execute(arguments: [id.rawValue]) }
        }
        return true
    }

    /// The revision of each text of `contents` (``save(from:committedTexts:to:in:)``).
    static func revisions(_ contents: StoreContents) -> [TextJournal.Key: UInt64] {
        var revisions: [TextJournal.Key: UInt64] = [:]
        for (id, texts) in contents.sync.texts {
            for (name, sequence) in texts { revisions[TextJournal.Key(object: id, attribute: name)] = sequence.revision }
        }
        return revisions
    }

    /// The history entries `history` holds that the committed ids do not, and the committed ids
    /// it no longer holds. A save drops entries from the front and adds them at the end: seen
    /// from the ends, with no set of every id; any other change is compared id by id.
    static func historyChanges(committed: [UInt64], now history: [TextSave]) -> (added: ArraySlice<TextSave>, removed: [UInt64]) {
        var firstAdded = history.endIndex
        if let last = committed.last {
            while firstAdded > history.startIndex, history[firstAdded - 1].id > last { firstAdded -= 1 }
        } else {
            firstAdded = history.startIndex
        }
        let kept = firstAdded - history.startIndex
        if kept <= committed.count, history[..<firstAdded].lazy.map(\.id).elementsEqual(committed[(committed.count - kept)...]) {
            return (history[firstAdded...], Array(committed[..<(committed.count - kept)]))
        }
        let old = Set(committed), new = Set(history.map(\.id))
        return (ArraySlice(history.filter { !old.contains($0.id) }), committed.filter { !new.contains($0) })
    }
}

/// Objects' rows for `records`, encoded into one buffer as they are added and written in key
/// order: rows inserted at random places in the B-tree touch a page each and overflow the page
/// cache mid-transaction (a third of a backlog's import); in order, consecutive rows share
/// pages. Both ways of finding the rows to write (comparing, noted) add them here.
struct RecordRows {
    private let contents: StoreContents
    private var bytes = ByteWriter()
    private var rows: [(id: ObjectID, entity: String, bytes: Range<Int>)] = []

    init(of contents: StoreContents) { self.contents = contents }

    var count: Int { rows.count }
    var isEmpty: Bool { rows.isEmpty }

    /// Encodes object `id`'s row (its record, stamps and held texts in `contents`).
    mutating func add(_ id: ObjectID, _ record: ObjectRecord) {
        let start = bytes.bytes.count
        SQLiteSchema.appendRecord(record, stamps: contents.sync.stamps[id], texts: contents.sync.texts[id], to: &bytes)
        rows.append((id, record.entity, start..<bytes.bytes.count))
    }

    /// Writes every row added, in key order.
    mutating func write(in db: Database) throws {
        rows.sort { $0.id.rawValue < $1.id.rawValue }
        // Prepared once: a cached statement is found by hashing its SQL on every call, and an
        // import writes hundreds of thousands of rows here.
        let upsert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO records (id, entity, attributes) VALUES (?, ?, ?)")
        try bytes.bytes.withUnsafeBytes { all in
            for row in rows { try SQLiteSchema.step(upsert, row.id.rawValue, row.entity, UnsafeRawBufferPointer(rebasing: all[row.bytes]), in: db) }
        }
    }
}
