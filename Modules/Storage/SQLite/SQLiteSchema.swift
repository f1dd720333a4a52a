import CSQLiteConfig
import Foundation
import GRDB
import Model
import Text

/// The SQLite schema, its migrations, and the row-level reads and writes.
///
/// Version 1: `objects`, `attributes` (values only), `applied`, `meta`.
/// Version 2: per-attribute version stamps, `tombstones`, `outbox`; `ModelVersion.version` = 2.
/// Migration `v3`: `texts`, the replicated sequence of each text attribute (a blob of
/// `TextSequence.encoded`), and `history`, the saves that changed a text (JSON per entry);
/// the model is unchanged.
/// Migration `v4`: `records`, one row per object (its entity, and its attributes with their
/// stamps in one blob, ``recordBytes(_:stamps:)``), in place of `objects` and `attributes`: an
/// import wrote five B-tree entries per inserted object and now writes one.
/// Migration `v5`: `text_operations`, the operations applied to each text since its state in
/// `texts` was written, appended by each save (``appendTextOperations(_:to:in:)``) and folded
/// into `texts` at checkpoints (``compactTexts(_:in:)``); a record's text that its sequence
/// holds is not repeated in `records` (flag 2 of ``recordBytes(_:stamps:texts:)``).
enum SQLiteSchema {
    static let zeroDevice = "00000000-0000-0000-0000-000000000000"

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE objects (id TEXT PRIMARY KEY NOT NULL, entity TEXT NOT NULL);
                CREATE TABLE attributes (
                    object_id TEXT NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
                    name TEXT NOT NULL, value TEXT NOT NULL,
                    PRIMARY KEY (object_id, name));
                CREATE TABLE applied (device TEXT PRIMARY KEY NOT NULL, sequence INTEGER NOT NULL);
                CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                """)
        }
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                ALTER TABLE attributes ADD COLUMN stamp_wall INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE attributes ADD COLUMN stamp_counter INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE attributes ADD COLUMN stamp_device TEXT NOT NULL DEFAULT '\(zeroDevice)';
                CREATE TABLE tombstones (
                    object_id TEXT PRIMARY KEY NOT NULL,
                    stamp_wall INTEGER NOT NULL, stamp_counter INTEGER NOT NULL, stamp_device TEXT NOT NULL);
                CREATE TABLE outbox (sequence INTEGER PRIMARY KEY NOT NULL, payload BLOB NOT NULL);
                """)
            let version = try encode(.int(SchemaVersion.current))
            try db.execute(
                sql: "UPDATE attributes SET value = ? WHERE name = ? AND object_id IN (SELECT id FROM objects WHERE entity = ?)",
                arguments: [version, Entity.ModelVersion.version, Entity.modelVersion])
            try db.execute(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('schemaVersion', ?)", arguments: ["\(SchemaVersion.current)"])
        }
        migrator.registerMigration("v3") { db in
            try db.execute(sql: """
                CREATE TABLE texts (
                    object_id TEXT NOT NULL, name TEXT NOT NULL, state BLOB NOT NULL,
                    PRIMARY KEY (object_id, name));
                CREATE TABLE history (id INTEGER PRIMARY KEY NOT NULL, entry BLOB NOT NULL);
                """)
        }
        migrator.registerMigration("v4") { db in
            try db.execute(sql: """
                CREATE TABLE records (id TEXT PRIMARY KEY NOT NULL, entity TEXT NOT NULL, attributes BLOB NOT NULL) WITHOUT ROWID;
                """)
            let (objects, stamps) = try legacyObjects(db)
            let insert = try db.makeStatement(sql: "INSERT INTO records (id, entity, attributes) VALUES (?, ?, ?)")
            for (id, record) in objects {
                try insert.execute(arguments: [id.rawValue, record.entity, Data(recordBytes(record, stamps: stamps[id]))])
            }
            try db.execute(sql: "DROP TABLE attributes; DROP TABLE objects")
        }
        migrator.registerMigration("v5") { db in
            try db.execute(sql: """
                CREATE TABLE text_operations (
                    object_id TEXT NOT NULL, name TEXT NOT NULL, sequence INTEGER NOT NULL, operations BLOB NOT NULL,
                    PRIMARY KEY (object_id, name, sequence)) WITHOUT ROWID;
                """)
        }
        return migrator
    }

    /// The schema version of a store that has migrations this build does not know, and those
    /// migrations. The version is the larger of `meta.schemaVersion` and the highest `vN`
    /// migration name; never the number of migrations, which says nothing about the version
    /// once a build adds two migrations for one version or skips one.
    static func newerVersion(_ db: Database, known: [String]) throws -> (version: Int64, unknown: [String]) {
        let applied = try db.tableExists("grdb_migrations")
            ? try Row.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations").map { try text($0, "identifier", table: "grdb_migrations") }
            : []
        let unknown = applied.filter { !known.contains($0) }.sorted()
        var version = SchemaVersion.current + 1  // It has migrations this build lacks: at least that.
        for identifier in applied where identifier.hasPrefix("v") {
            if let number = Int64(identifier.dropFirst().prefix { $0.isNumber }) { version = max(version, number) }
        }
        if try db.tableExists("meta"),
           let row = try Row.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'schemaVersion'"),
           let recorded = Int64(try text(row, "value", table: "meta")) {
            version = max(version, recorded)
        }
        return (version, unknown)
    }

    // MARK: Values

    private static let encoder = JSONEncoder()
    private static let decoder = JSONDecoder()

    /// A value as a one-element JSON array (`["text"]`, `[{"int":2}]`): the spelling of the
    /// `attributes.value` column of layouts v1–v3, which only the migrations read and write now
    /// (v2 sets the model version; v4 reads every value into `records`).
    ///
    /// Written by hand, read by hand for the forms written here (session 9: through `JSONEncoder`
    /// and `JSONDecoder` each value cost several microseconds; it keeps the v4 migration of a
    /// large store quick). Anything else (a value written by an earlier build, or by hand) is read
    /// by `JSONDecoder`.
    static func encode(_ value: AttributeValue) throws -> String {
        switch value {
        case .string(let string):
            var bytes: [UInt8] = [UInt8(ascii: "[")]
            bytes.reserveCapacity(string.utf8.count + 4)
            JSONQuote.append(string, to: &bytes)
            bytes.append(UInt8(ascii: "]"))
            return String(decoding: bytes, as: UTF8.self)
        case .null: return "[null]"
        case .int(let int): return "[{\"int\":\(int)}]"
        case .bool(let bool): return bool ? #"[{"bool":true}]"# : #"[{"bool":false}]"#
        case .double(let double) where double.isFinite: return "[{\"double\":\(double)}]"
        case .date(let date) where date.timeIntervalSince1970.isFinite: return "[{\"date\":\(date.timeIntervalSince1970)}]"
        case .double, .date:
            // Not a JSON number: JSONEncoder says why.
            return String(decoding: try encoder.encode([value]), as: UTF8.self)
        }
    }

    static func decode(_ text: String) throws -> AttributeValue {
        if let value = decodeWritten(text) { return value }
        guard let value = try decoder.decode([AttributeValue].self, from: Data(text.utf8)).first else {
            throw corrupt("empty attribute value")
        }
        return value
    }

    /// A value in a form ``encode(_:)`` writes (a string without escapes, a number that is one),
    /// or nil for `JSONDecoder` to read.
    static func decodeWritten(_ text: String) -> AttributeValue? {
        var text = text
        return text.withUTF8 { utf8 -> AttributeValue? in
            guard utf8.count >= 4, utf8.first == UInt8(ascii: "["), utf8.last == UInt8(ascii: "]") else { return nil }
            let inner = UnsafeBufferPointer(rebasing: utf8[1..<(utf8.count - 1)])
            if inner.elementsEqual("null".utf8) { return .null }
            if inner.first == UInt8(ascii: "\""), inner.count >= 2, inner.last == UInt8(ascii: "\"") {
                let content = UnsafeBufferPointer(rebasing: inner[1..<(inner.count - 1)])
                guard !content.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }),
                      let string = String(validating: content, as: UTF8.self) else { return nil }
                return .string(string)
            }
            if inner.elementsEqual(#"{"bool":true}"#.utf8) { return .bool(true) }
            if inner.elementsEqual(#"{"bool":false}"#.utf8) { return .bool(false) }
            // `{"int":N}`, `{"double":N}`, `{"date":N}`: the number between the key and the brace.
            func number(after key: String) -> String? {
                let length = key.utf8.count
                guard inner.count > length + 1, inner.starts(with: key.utf8), inner.last == UInt8(ascii: "}") else { return nil }
                return String(decoding: UnsafeBufferPointer(rebasing: inner[length..<(inner.count - 1)]), as: UTF8.self)
            }
            if let digits = number(after: #"{"int":"#) {
                guard digits.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }),
                      let value = Int64(digits) else { return nil }
                return .int(value)
            }
            if let text = number(after: #"{"double":"#) { return jsonNumber(text).map(AttributeValue.double) }
            if let text = number(after: #"{"date":"#) { return jsonNumber(text).map { .date(Date(timeIntervalSince1970: $0)) } }
            return nil
        }
    }

    /// A finite JSON number (digits, sign, point, exponent), as `JSONDecoder` reads it.
    private static func jsonNumber(_ text: String) -> Double? {
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")),
              text.utf8.allSatisfy({ ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e")
                  || $0 == UInt8(ascii: "E") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }),
              let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// The stamp in a row's `stamp_wall`, `stamp_counter` and `stamp_device` columns; nil when
    /// the device is not a UUID (such a stamp is dropped, as it always was).
    static func stamp(_ row: Row, table: String) throws -> Stamp? {
        guard let device = DeviceID(try text(row, "stamp_device", table: table)) else { return nil }
        let wall = try integer(row, "stamp_wall", table: table)
        let counter = try integer(row, "stamp_counter", table: table)
        return Stamp(wall: UInt64(max(0, wall)), counter: UInt32(clamping: counter), device: device)
    }

    // MARK: Columns

    // GRDB's `row["column"] as T` traps when the value cannot be converted to `T`, and SQLite
    // stores any type in any column, so a database that is valid but was damaged or edited by
    // hand (text in an INTEGER column) would crash the process. Every column is read as a
    // `DatabaseValue` and converted here; a value of the wrong type makes the store corrupt.

    static func text(_ row: Row, _ column: String, table: String) throws -> String {
        let value: DatabaseValue = row[column]
        guard let text = String.fromDatabaseValue(value) else { throw illTyped(value, table: table, column: column, expected: "text") }
        return text
    }

    static func integer(_ row: Row, _ column: String, table: String) throws -> Int64 {
        let value: DatabaseValue = row[column]
        guard let integer = Int64.fromDatabaseValue(value) else { throw illTyped(value, table: table, column: column, expected: "an integer") }
        return integer
    }

    static func blob(_ row: Row, _ column: String, table: String) throws -> Data {
        let value: DatabaseValue = row[column]
        guard let data = Data.fromDatabaseValue(value) else { throw illTyped(value, table: table, column: column, expected: "a blob") }
        return data
    }

    /// A corruption error naming the table, the column and what was found there; the store maps
    /// it to ``StoreError/Kind/corrupt`` with the file's path.
    static func illTyped(_ value: DatabaseValue, table: String, column: String, expected: String) -> DatabaseError {
        let found: String
        switch value.storage {
        case .null: found = "NULL"
        case .int64(let integer): found = "the integer \(integer)"
        case .double(let double): found = "the real number \(double)"
        case .string(let string): found = "the text \"\(string.prefix(40))\""
        case .blob(let data): found = "a \(data.count)-byte blob"
        }
        return corrupt("\(table).\(column) holds \(found) where \(expected) belongs")
    }

    static func corrupt(_ message: String) -> DatabaseError {
        DatabaseError(resultCode: .SQLITE_CORRUPT, message: message)
    }

    // MARK: Generation

    /// The store's generation (prepared once per connection: every read and write asks).
    static func generation(_ db: Database) throws -> Int64 {
        guard let row = try Row.fetchOne(try db.cachedStatement(sql: "SELECT value FROM meta WHERE key = 'generation'")) else { return 0 }
        return Int64(try text(row, "value", table: "meta")) ?? 0
    }

    /// Records the generation after `current` (read in the same transaction) and returns it.
    static func bumpGeneration(from current: Int64, _ db: Database) throws -> Int64 {
        let next = current &+ 1
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('generation', ?)").execute(arguments: ["\(next)"])
        return next
    }

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
        for row in try Row.fetchAll(db, sql: "SELECT object_id, name, state FROM texts") {
            let id = ObjectID(try text(row, "object_id", table: "texts"))
            let name = try text(row, "name", table: "texts")
            do {
                contents.sync.texts[id, default: [:]][name] = try TextSequence(decoding: Array(try blob(row, "state", table: "texts")))
            } catch let error as DatabaseError {
                throw error
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
                contents.sync.history.append(try decoder.decode(TextSave.self, from: try blob(row, "entry", table: "history")))
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

    /// Writes only what differs between `before` and `after`, and says whether anything did.
    ///
    /// Texts are not compared: `before.sync.texts` may be empty (the store drops it so that the
    /// body changes the texts in place), and `committedTexts` holds each committed text's
    /// ``Text/TextSequence/revision``. A text whose revision moved has the operations of
    /// `after.textJournal` appended when they account for the whole change, and its whole state
    /// written otherwise (which drops its appended operations).
    static func save(
        from before: StoreContents, committedTexts: [TextJournal.Key: UInt64], to after: StoreContents, in db: Database
    ) throws -> (changed: Bool, appendedRows: Int) {
        var changed = false
        var appendedRows = 0
        if before.graph != after.graph || before.sync.stamps != after.sync.stamps {
            changed = true
            // The changed objects' rows, encoded while walking `after` in its own order (looking
            // objects up again in key order cost a cache miss each), into one buffer.
            var rows = ByteWriter()
            var written: [(id: ObjectID, entity: String, bytes: Range<Int>)] = []
            for (id, record) in after.graph.objects {
                let stamps = after.sync.stamps[id]
                guard before.graph.objects[id] != record || before.sync.stamps[id] != stamps else { continue }
                let start = rows.bytes.count
                appendRecord(record, stamps: stamps, texts: after.sync.texts[id], to: &rows)
                written.append((id, record.entity, start..<rows.bytes.count))
            }
            // In key order: rows inserted at random places in the B-tree touch a page each and
            // overflow the page cache mid-transaction (a third of a backlog's import); in order,
            // consecutive rows share pages.
            written.sort { $0.id.rawValue < $1.id.rawValue }
            // Prepared once: a cached statement is found by hashing its SQL on every call, and an
            // import writes hundreds of thousands of rows here.
            let upsert = try db.cachedStatement(sql: "INSERT OR REPLACE INTO records (id, entity, attributes) VALUES (?, ?, ?)")
            try rows.bytes.withUnsafeBytes { all in
                for row in written { try step(upsert, row.id.rawValue, row.entity, UnsafeRawBufferPointer(rebasing: all[row.bytes]), in: db) }
            }
            let delete = try db.cachedStatement(sql: "DELETE FROM records WHERE id = ?")
            for id in before.graph.objects.keys where after.graph.objects[id] == nil {
                try delete.execute(arguments: [id.rawValue])
            }
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
        var seen: Set<TextJournal.Key> = []
        for (id, texts) in after.sync.texts {
            for (name, sequence) in texts {
                let key = TextJournal.Key(object: id, attribute: name)
                seen.insert(key)
                let committed = committedTexts[key]
                guard committed != sequence.revision else { continue }
                changed = true
                if let committed, let operations = after.textJournal.operations(for: key, from: committed, to: sequence.revision) {
                    guard !operations.isEmpty else { continue }
                    try appendTextOperations(operations, to: key, in: db)
                    appendedRows += 1
                } else {
                    try writeTextState(sequence, of: key, in: db)
                }
            }
        }
        for key in committedTexts.keys where !seen.contains(key) {
            changed = true
            try db.cachedStatement(sql: "DELETE FROM texts WHERE object_id = ? AND name = ?").execute(arguments: [key.object.rawValue, key.attribute])
            try db.cachedStatement(sql: "DELETE FROM text_operations WHERE object_id = ? AND name = ?").execute(arguments: [key.object.rawValue, key.attribute])
        }
        if before.sync.history != after.sync.history {
            changed = true
            let old = Set(before.sync.history.map(\.id)), new = Set(after.sync.history.map(\.id))
            let encoder = JSONEncoder()
            for entry in after.sync.history where !old.contains(entry.id) {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO history (id, entry) VALUES (?, ?)")
                    .execute(arguments: [Int64(clamping: entry.id), try encoder.encode(entry)])
            }
            for id in old.subtracting(new) {
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

    /// The revision of each text of `contents` (``save(from:committedTexts:to:in:)``).
    static func revisions(_ contents: StoreContents) -> [TextJournal.Key: UInt64] {
        var revisions: [TextJournal.Key: UInt64] = [:]
        for (id, texts) in contents.sync.texts {
            for (name, sequence) in texts { revisions[TextJournal.Key(object: id, attribute: name)] = sequence.revision }
        }
        return revisions
    }
}
