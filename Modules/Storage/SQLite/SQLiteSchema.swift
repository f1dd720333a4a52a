import Foundation
import GRDB
import Model

/// The SQLite schema, its migrations, and the row-level reads and writes.
///
/// Version 1: `objects`, `attributes` (values only), `applied`, `meta`.
/// Version 2: per-attribute version stamps, `tombstones`, `outbox`; `ModelVersion.version` = 2.
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
        return migrator
    }

    // MARK: Values

    private static let encoder = JSONEncoder()
    private static let decoder = JSONDecoder()

    /// A value as a one-element JSON array (`["text"]`, `[{"int":2}]`), so every kind of value
    /// has one readable, unambiguous spelling in the `value` column.
    static func encode(_ value: AttributeValue) throws -> String {
        String(decoding: try encoder.encode([value]), as: UTF8.self)
    }

    static func decode(_ text: String) throws -> AttributeValue {
        guard let value = try decoder.decode([AttributeValue].self, from: Data(text.utf8)).first else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "empty attribute value")
        }
        return value
    }

    static func stamp(_ row: Row) -> Stamp? {
        guard let device = DeviceID(row["stamp_device"] as String? ?? "") else { return nil }
        let wall: Int64 = row["stamp_wall"] ?? 0
        let counter: Int64 = row["stamp_counter"] ?? 0
        return Stamp(wall: UInt64(max(0, wall)), counter: UInt32(clamping: counter), device: device)
    }

    // MARK: Generation

    static func generation(_ db: Database) throws -> Int64 {
        Int64(try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'generation'") ?? "0") ?? 0
    }

    static func bumpGeneration(_ db: Database) throws -> Int64 {
        let next = try generation(db) + 1
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('generation', ?)").execute(arguments: ["\(next)"])
        return next
    }

    // MARK: Load

    static func load(_ db: Database) throws -> StoreContents {
        var contents = StoreContents()
        for row in try Row.fetchAll(db, sql: "SELECT id, entity FROM objects") {
            contents.graph.objects[ObjectID(row["id"])] = ObjectRecord(entity: row["entity"])
        }
        for row in try Row.fetchAll(db, sql: "SELECT object_id, name, value, stamp_wall, stamp_counter, stamp_device FROM attributes") {
            let id = ObjectID(row["object_id"])
            let name: String = row["name"]
            contents.graph.objects[id]?.attributes[name] = try decode(row["value"])
            if let stamp = stamp(row), stamp.device.description != zeroDevice || stamp.wall != 0 {
                contents.sync.stamps[id, default: [:]][name] = stamp
            }
        }
        for row in try Row.fetchAll(db, sql: "SELECT object_id, stamp_wall, stamp_counter, stamp_device FROM tombstones") {
            if let stamp = stamp(row) { contents.sync.tombstones[ObjectID(row["object_id"])] = stamp }
        }
        for row in try Row.fetchAll(db, sql: "SELECT device, sequence FROM applied") {
            if let device = DeviceID(row["device"] as String) {
                contents.sync.applied[device] = UInt64(max(0, row["sequence"] as Int64))
            }
        }
        for row in try Row.fetchAll(db, sql: "SELECT sequence, payload FROM outbox") {
            contents.sync.outbox[UInt64(max(0, row["sequence"] as Int64))] = row["payload"]
        }
        var wall: UInt64 = 0, counter: UInt32 = 0
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM meta") {
            let key: String = row["key"]
            let value: String = row["value"]
            if key == "clock.wall" { wall = UInt64(value) ?? 0 }
            else if key == "clock.counter" { counter = UInt32(value) ?? 0 }
            else if key.hasPrefix("value.") { contents.sync.values[String(key.dropFirst(6))] = value }
        }
        contents.sync.clock = HybridLogicalClock(wall: wall, counter: counter)
        return contents
    }

    // MARK: Save

    /// Writes only what differs between `before` and `after`.
    static func save(diffFrom before: StoreContents, to after: StoreContents, in db: Database) throws {
        if before.graph != after.graph || before.sync.stamps != after.sync.stamps {
            var touched = Set<ObjectID>()
            for (id, record) in after.graph.objects where before.graph.objects[id] != record || before.sync.stamps[id] != after.sync.stamps[id] {
                touched.insert(id)
            }
            for id in before.graph.objects.keys where after.graph.objects[id] == nil { touched.insert(id) }
            for id in touched {
                guard let record = after.graph.objects[id] else {
                    try db.cachedStatement(sql: "DELETE FROM attributes WHERE object_id = ?").execute(arguments: [id.rawValue])
                    try db.cachedStatement(sql: "DELETE FROM objects WHERE id = ?").execute(arguments: [id.rawValue])
                    continue
                }
                let old = before.graph.objects[id]
                if old?.entity != record.entity {
                    try db.cachedStatement(sql: "INSERT OR REPLACE INTO objects (id, entity) VALUES (?, ?)").execute(arguments: [id.rawValue, record.entity])
                }
                let stamps = after.sync.stamps[id] ?? [:]
                let oldStamps = before.sync.stamps[id] ?? [:]
                for (name, value) in record.attributes where old?.attributes[name] != value || oldStamps[name] != stamps[name] {
                    let stamp = stamps[name]
                    try db.cachedStatement(
                        sql: "INSERT OR REPLACE INTO attributes (object_id, name, value, stamp_wall, stamp_counter, stamp_device) VALUES (?, ?, ?, ?, ?, ?)"
                    ).execute(arguments: [id.rawValue, name, try encode(value), Int64(clamping: stamp?.wall ?? 0), Int64(stamp?.counter ?? 0), stamp?.device.description ?? zeroDevice])
                }
                for name in (old?.attributes.keys).map(Array.init) ?? [] where record.attributes[name] == nil {
                    try db.cachedStatement(sql: "DELETE FROM attributes WHERE object_id = ? AND name = ?").execute(arguments: [id.rawValue, name])
                }
            }
        }
        if before.sync.tombstones != after.sync.tombstones {
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
            for (device, sequence) in after.sync.applied where before.sync.applied[device] != sequence {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO applied (device, sequence) VALUES (?, ?)").execute(arguments: [device.description, Int64(clamping: sequence)])
            }
            for device in before.sync.applied.keys where after.sync.applied[device] == nil {
                try db.cachedStatement(sql: "DELETE FROM applied WHERE device = ?").execute(arguments: [device.description])
            }
        }
        if before.sync.outbox != after.sync.outbox {
            for (sequence, payload) in after.sync.outbox where before.sync.outbox[sequence] != payload {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO outbox (sequence, payload) VALUES (?, ?)").execute(arguments: [Int64(clamping: sequence), payload])
            }
            for sequence in before.sync.outbox.keys where after.sync.outbox[sequence] == nil {
                try db.cachedStatement(sql: "DELETE FROM outbox WHERE sequence = ?").execute(arguments: [Int64(clamping: sequence)])
            }
        }
        if before.sync.clock != after.sync.clock {
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('clock.wall', ?), ('clock.counter', ?)").execute(arguments: ["\(after.sync.clock.wall)", "\(after.sync.clock.counter)"])
        }
        if before.sync.values != after.sync.values {
            for (key, value) in after.sync.values where before.sync.values[key] != value {
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").execute(arguments: ["value.\(key)", value])
            }
            for key in before.sync.values.keys where after.sync.values[key] == nil {
                try db.cachedStatement(sql: "DELETE FROM meta WHERE key = ?").execute(arguments: ["value.\(key)"])
            }
        }
    }
}
