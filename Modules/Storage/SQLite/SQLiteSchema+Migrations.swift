import CSQLiteConfig
import Foundation
import GRDB
import Model
import Text

extension SQLiteSchema {
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
        // History entries in their binary form (`TextSave+Bytes`). A build that reads them only
        // as JSON refuses the store as a newer schema instead of calling it corrupt.
        migrator.registerMigration("v6") { db in
            let decoder = JSONDecoder()
            let update = try db.makeStatement(sql: "UPDATE history SET entry = ? WHERE id = ?")
            for row in try Row.fetchAll(db, sql: "SELECT id, entry FROM history") {
                let id: DatabaseValue = row["id"], entry: DatabaseValue = row["entry"]
                // An entry that does not decode is left as it is: the load reports it.
                guard let data = Data.fromDatabaseValue(entry), data.first == UInt8(ascii: "{"),
                      let save = try? TextSave.decoded([UInt8](data), json: decoder) else { continue }
                try update.execute(arguments: [Data(save.encodedBytes()), id])
            }
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
}
