#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import GRDB
import Model
import Storage
import Testing
import TestSupport

// Stores of earlier versions opened under this one, and stores converted between kinds, lose nothing.
@Suite struct MigrationAndConversionTests {
    @Test func aVersion1StoreOpensUnderVersion2WithoutLoss() throws {
        let fixture = try #require(Bundle.module.url(forResource: "v1", withExtension: "sqlite", subdirectory: "Fixtures"))
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let url = folder.appending("store.sqlite")
        try FileManager.default.copyItem(at: fixture, to: url)
        let store = try StoreProvider.standard().open(.sqlite, at: url)
        let contents = try store.read()
        #expect(contents.graph.textEntry?.text == "Written by version 1 — café 日本")
        #expect(contents.graph.textEntry?.modified == Date(timeIntervalSince1970: 1_388_534_400))
        #expect(contents.graph.objects(of: Entity.modelVersion).first?.record.attributes["version"] == .int(2))
        #expect(contents.sync.applied.values.first == 7)
        // Version 2's bookkeeping works on the migrated store.
        try store.write { $0.sync.tombstones[ObjectID("x")] = Stamp(wall: 1, counter: 0, device: deviceA) }
        #expect(try store.read().sync.tombstones.count == 1)
    }

    /// A store as schema version 3 laid it out (a row per attribute, its stamp in three
    /// columns) moves to one row per object with every value and stamp.
    @Test func aVersion3StoreKeepsEveryValueAndStampThroughTheRecordsMigration() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let url = folder.appending("store.sqlite")
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations VALUES ('v1'), ('v2'), ('v3');
                CREATE TABLE objects (id TEXT PRIMARY KEY NOT NULL, entity TEXT NOT NULL);
                CREATE TABLE attributes (
                    object_id TEXT NOT NULL REFERENCES objects(id) ON DELETE CASCADE, name TEXT NOT NULL, value TEXT NOT NULL,
                    stamp_wall INTEGER NOT NULL DEFAULT 0, stamp_counter INTEGER NOT NULL DEFAULT 0,
                    stamp_device TEXT NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000', PRIMARY KEY (object_id, name));
                CREATE TABLE applied (device TEXT PRIMARY KEY NOT NULL, sequence INTEGER NOT NULL);
                CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                CREATE TABLE tombstones (object_id TEXT PRIMARY KEY NOT NULL, stamp_wall INTEGER NOT NULL, stamp_counter INTEGER NOT NULL, stamp_device TEXT NOT NULL);
                CREATE TABLE outbox (sequence INTEGER PRIMARY KEY NOT NULL, payload BLOB NOT NULL);
                CREATE TABLE texts (object_id TEXT NOT NULL, name TEXT NOT NULL, state BLOB NOT NULL, PRIMARY KEY (object_id, name));
                CREATE TABLE history (id INTEGER PRIMARY KEY NOT NULL, entry BLOB NOT NULL);
                INSERT INTO meta VALUES ('schemaVersion', '2'), ('generation', '4');
                INSERT INTO objects VALUES ('t1', 'TextEntry'), ('r2', 'Row');
                INSERT INTO attributes VALUES ('t1', 'text', '["héllo \\"quoted\\" 日本"]', 1700000000500, 3, '\(deviceA)');
                INSERT INTO attributes VALUES ('t1', 'n', '[{"int":-42}]', 1700000000400, 0, '\(deviceB)');
                INSERT INTO attributes VALUES ('r2', 'x', '[{"double":0.25}]', 0, 0, '00000000-0000-0000-0000-000000000000');
                INSERT INTO attributes VALUES ('r2', 'gone', '[null]', 9, 1, '\(deviceA)');
                INSERT INTO applied VALUES ('\(deviceA)', 12);
                """)
        }
        try queue.close()
        let store = try StoreProvider.standard().open(.sqlite, at: url)
        defer { store.close() }
        let contents = try store.read()
        #expect(contents.graph.objects[ObjectID("t1")] == ObjectRecord(entity: "TextEntry", attributes: ["text": .string("héllo \"quoted\" 日本"), "n": .int(-42)]))
        #expect(contents.graph.objects[ObjectID("r2")] == ObjectRecord(entity: "Row", attributes: ["x": .double(0.25), "gone": .null]))
        #expect(contents.sync.stamps[ObjectID("t1")] == [
            "text": Stamp(wall: 1_700_000_000_500, counter: 3, device: deviceA), "n": Stamp(wall: 1_700_000_000_400, counter: 0, device: deviceB),
        ])
        // Version 1's default stamp (device zero at wall 0) is no stamp.
        #expect(contents.sync.stamps[ObjectID("r2")] == ["gone": Stamp(wall: 9, counter: 1, device: deviceA)])
        #expect(contents.sync.applied == [deviceA: 12])
        // The old tables are gone; a write goes to the new one.
        let tables = try DatabaseQueue(path: url.path).read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") }
        #expect(!tables.contains("attributes") && !tables.contains("objects") && tables.contains("records"))
        try store.write { $0.graph.objects[ObjectID("r2")]?.attributes["x"] = .double(0.5) }
        #expect(try store.read().graph.objects[ObjectID("r2")]?.attributes["x"] == .double(0.5))
    }

    @Test(arguments: [(StoreKind.sqlite, StoreKind.json), (.json, .sqlite)])
    func conversionKeepsEverything(from: StoreKind, to: StoreKind) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let provider = StoreProvider.standard()
        let source = try provider.open(from, at: folder.appending(from.fileName), create: true)
        try source.write { $0 = richContents() }
        let target = try provider.convert(source, to: to, at: folder.appending(to.fileName))
        #expect(try target.read() == richContents())
        #expect(target.kind == to)
    }
}
