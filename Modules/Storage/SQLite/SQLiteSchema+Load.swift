import CSQLiteConfig
import Foundation
import GRDB
import Model
import Text

extension SQLiteSchema {
    // MARK: Load

    static func load(_ db: Database) throws -> (contents: StoreContents, appendedRows: Int) {
        var contents = StoreContents()
        var heldBySequences: [(ObjectID, String)] = []
        let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM records") ?? 0
        contents.graph.objects.reserveCapacity(count)
        contents.sync.stamps.reserveCapacity(count)
        let rows = try Row.fetchCursor(db, sql: "SELECT id, entity, attributes FROM records")
        while let row = try rows.next() {
            let id = ObjectID(try text(row, "id", table: "records"))
            let entity = try text(row, "entity", table: "records")
            let (attributes, stamps, held) = try record(try blob(row, "attributes", table: "records"), of: id)
            contents.graph.objects[id] = ObjectRecord(entity: entity, attributes: attributes)
            for name in held { heldBySequences.append((id, name)) }
            if !stamps.isEmpty { contents.sync.stamps[id] = stamps }
        }
        for row in try Row.fetchAll(db, sql: "SELECT object_id, stamp_wall, stamp_counter, stamp_device FROM tombstones") {
            if let stamp = try stamp(row, table: "tombstones") {
                contents.sync.tombstones[ObjectID(try text(row, "object_id", table: "tombstones"))] = stamp
            }
        }
        for row in try Row.fetchAll(db, sql: "SELECT device, sequence FROM applied") {
            if let device = DeviceID(try text(row, "device", table: "applied")) {
                contents.sync.applied[device] = UInt64(max(0, try integer(row, "sequence", table: "applied")))
            }
        }
        for row in try Row.fetchAll(db, sql: "SELECT sequence, payload FROM outbox") {
            let sequence = UInt64(max(0, try integer(row, "sequence", table: "outbox")))
            contents.sync.outbox[sequence] = try blob(row, "payload", table: "outbox")
        }
        // Each state read into the bytes the decoder takes: a long one by SQLite's incremental
        // blob reader, straight from its pages (one copy, where reading the column makes SQLite
        // gather its overflow pages into a buffer of its own first), so the row leaves it out; a
        // short one, or one that is not a blob, from the row (`length` and `typeof` read no
        // overflow page).
        let states = try Row.fetchCursor(
            db, sql: """
                SELECT rowid, object_id, name, typeof(state) = 'blob' AND length(state) >= ?1 AS long,
                       CASE WHEN typeof(state) = 'blob' AND length(state) >= ?1 THEN NULL ELSE state END AS state
                FROM texts
                """,
            arguments: [Self.longStateBytes])
        while let row = try states.next() {
            let id = ObjectID(try text(row, "object_id", table: "texts"))
            let name = try text(row, "name", table: "texts")
            let state: [UInt8]
            if try integer(row, "long", table: "texts") == 1 {
                state = try longState(rowid: try integer(row, "rowid", table: "texts"), in: db)
            } else {
                let value: DatabaseValue = row["state"]
                guard case .blob(let data) = value.storage else {
                    throw illTyped(value, table: "texts", column: "state", expected: "a blob")
                }
                state = [UInt8](data)
            }
            do {
                contents.sync.texts[id, default: [:]][name] = try TextSequence(decoding: state)
            } catch {
                throw corrupt("texts.state of \(id.rawValue).\(name) is not a text state: \(error)")
            }
        }
        // What each text's saves applied since its state was written, in order.
        var appendedRows = 0
        for row in try Row.fetchAll(db, sql: "SELECT object_id, name, sequence, operations FROM text_operations ORDER BY object_id, name, sequence") {
            let id = ObjectID(try text(row, "object_id", table: "text_operations"))
            let name = try text(row, "name", table: "text_operations")
            let operations: [TextOperation]
            do {
                operations = try decodeOperations(Array(try blob(row, "operations", table: "text_operations")))
            } catch let error as DatabaseError {
                throw error
            } catch {
                throw corrupt("text_operations of \(id.rawValue).\(name), row \(try integer(row, "sequence", table: "text_operations")), are not text operations: \(error)")
            }
            guard contents.sync.texts[id]?[name] != nil else {
                throw corrupt("text_operations of \(id.rawValue).\(name) follow no state in texts")
            }
            for operation in operations {
                // As the save applied them: one the state refused then is refused again.
                _ = try? contents.sync.texts[id]?[name]?.apply(operation)
            }
            appendedRows += 1
        }
        for (id, name) in heldBySequences {
            guard let sequence = contents.sync.texts[id]?[name] else {
                throw corrupt("records.attributes of \(id.rawValue) leaves its \(name) to a text state that is not in texts")
            }
            contents.graph.objects[id]?.attributes[name] = .string(sequence.text)
        }
        let decoder = JSONDecoder()
        for row in try Row.fetchAll(db, sql: "SELECT id, entry FROM history ORDER BY id") {
            do {
                contents.sync.history.append(try TextSave.decoded([UInt8](try blob(row, "entry", table: "history")), json: decoder))
            } catch let error as DatabaseError {
                throw error
            } catch {
                throw corrupt("history.entry \(try integer(row, "id", table: "history")) is not a save: \(error)")
            }
        }
        var wall: UInt64 = 0, counter: UInt32 = 0
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM meta") {
            let key = try text(row, "key", table: "meta")
            let value = try text(row, "value", table: "meta")
            if key == "clock.wall" { wall = UInt64(value) ?? 0 }
            else if key == "clock.counter" { counter = UInt32(value) ?? 0 }
            else if key.hasPrefix("value.") { contents.sync.values[String(key.dropFirst(6))] = value }
        }
        contents.sync.clock = HybridLogicalClock(wall: wall, counter: counter)
        return (contents, appendedRows)
    }

    // MARK: Text operations

    /// Operations as one `text_operations.operations` blob: a count, then each operation in
    /// format 2's spelling (``Text/TextOperation``).
    static func operationBytes(_ operations: [TextOperation]) -> [UInt8] {
        var writer = ByteWriter()
        writer.varint(operations.count)
        for operation in operations { operation.write(to: &writer) }
        return writer.bytes
    }

    static func decodeOperations(_ bytes: [UInt8]) throws(TextDecodingError) -> [TextOperation] {
        var reader = ByteReader(bytes)
        // Each operation takes at least 2 bytes.
        let count = try reader.count(maximum: reader.remaining / 2)
        var operations: [TextOperation] = []
        operations.reserveCapacity(count)
        for _ in 0..<count { operations.append(try TextOperation.read(from: &reader)) }
        try reader.finish()
        return operations
    }

    /// From this many bytes on, a text's state is read by ``longState(rowid:in:)``.
    static let longStateBytes = 64 * 1024

    /// The state in row `rowid` of `texts`, read by SQLite's incremental blob reader into an
    /// array of its size.
    static func longState(rowid: Int64, in db: Database) throws -> [UInt8] {
        var handle: OpaquePointer?
        let opened = sqlite3_blob_open(db.sqliteConnection, "main", "texts", "state", rowid, 0, &handle)
        defer { sqlite3_blob_close(handle) }
        guard opened == SQLITE_OK, let handle else {
            throw DatabaseError(resultCode: ResultCode(rawValue: opened), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
        let count = Int(sqlite3_blob_bytes(handle))
        var read = SQLITE_OK
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            guard let base = buffer.baseAddress, count > 0 else { return }
            read = sqlite3_blob_read(handle, base, Int32(count), 0)
            initialized = read == SQLITE_OK ? count : 0
        }
        guard read == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: read), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
        return bytes
    }

    /// Appends one row of `operations` after the text's last one.
    static func appendTextOperations(_ operations: [TextOperation], to key: TextJournal.Key, in db: Database) throws {
        let last = try Int64.fetchOne(
            try db.cachedStatement(sql: "SELECT max(sequence) FROM text_operations WHERE object_id = ? AND name = ?"),
            arguments: [key.object.rawValue, key.attribute]) ?? 0
        try db.cachedStatement(sql: "INSERT INTO text_operations (object_id, name, sequence, operations) VALUES (?, ?, ?, ?)")
            .execute(arguments: [key.object.rawValue, key.attribute, last &+ 1, Data(operationBytes(operations))])
    }

    /// Writes the whole state of a text and drops the operations it now holds.
    static func writeTextState(_ sequence: TextSequence, of key: TextJournal.Key, in db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO texts (object_id, name, state) VALUES (?, ?, ?)")
            .execute(arguments: [key.object.rawValue, key.attribute, Data(sequence.encoded)])
        try db.cachedStatement(sql: "DELETE FROM text_operations WHERE object_id = ? AND name = ?").execute(arguments: [key.object.rawValue, key.attribute])
    }

    /// Folds the appended operations of every text that has some into its state (`contents`
    /// is what the store holds now). Returns how many texts were rewritten.
    @discardableResult
    static func compactTexts(_ contents: StoreContents, in db: Database) throws -> Int {
        var keys: [TextJournal.Key] = []
        for row in try Row.fetchAll(db, sql: "SELECT DISTINCT object_id, name FROM text_operations") {
            keys.append(TextJournal.Key(
                object: ObjectID(try text(row, "object_id", table: "text_operations")), attribute: try text(row, "name", table: "text_operations")))
        }
        for key in keys {
            if let sequence = contents.sync.texts[key.object]?[key.attribute] {
                try writeTextState(sequence, of: key, in: db)
            } else {
                try db.cachedStatement(sql: "DELETE FROM text_operations WHERE object_id = ? AND name = ?").execute(arguments: [key.object.rawValue, key.attribute])
            }
        }
        return keys.count
    }

    /// The objects, their attributes and stamps as schema versions 1 to 3 kept them (for the
    /// `v4` migration). A stamp of device zero at wall 0 is version 1's default: no stamp.
    static func legacyObjects(_ db: Database) throws -> (objects: [ObjectID: ObjectRecord], stamps: [ObjectID: [String: Stamp]]) {
        var objects: [ObjectID: ObjectRecord] = [:]
        var stamps: [ObjectID: [String: Stamp]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, entity FROM objects") {
            objects[ObjectID(try text(row, "id", table: "objects"))] = ObjectRecord(entity: try text(row, "entity", table: "objects"))
        }
        for row in try Row.fetchAll(db, sql: "SELECT object_id, name, value, stamp_wall, stamp_counter, stamp_device FROM attributes") {
            let id = ObjectID(try text(row, "object_id", table: "attributes"))
            let name = try text(row, "name", table: "attributes")
            let value: AttributeValue
            do {
                value = try decode(try text(row, "value", table: "attributes"))
            } catch let error as DatabaseError {
                throw error
            } catch {
                throw corrupt("attributes.value of \(id.rawValue).\(name) is not a value: \(error)")
            }
            objects[id]?.attributes[name] = value
            if let stamp = try stamp(row, table: "attributes"), stamp.device.description != zeroDevice || stamp.wall != 0 {
                stamps[id, default: [:]][name] = stamp
            }
        }
        return (objects, stamps)
    }
}
