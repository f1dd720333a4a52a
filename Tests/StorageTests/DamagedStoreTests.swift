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

// Stores damaged on disk (random bytes, truncated, ill-typed, newer, unreadable) are reported by kind, never a crash.
@Suite struct DamagedStoreTests {
    @Test(arguments: Backend.allCases)
    func randomBytesAreNotAStore(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(bytes).write(to: folder.appending(backend.kind.fileName))
        let error = #expect(throws: StoreError.self) { try backend.open(folder, create: false) }
        #expect(error?.kind == .corrupt)
        #expect(error?.description.contains(backend.kind.fileName) == true)
    }

    @Test(arguments: Backend.allCases)
    func aTruncatedStoreIsReported(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        try store.write { $0 = richContents() }
        for index in 0..<200 { try store.write { $0.graph.objects[ObjectID("o\(index)")] = ObjectRecord(entity: "Row", attributes: ["n": .int(Int64(index))]) } }
        store.close()
        let url = folder.appending(backend.kind.fileName)
        let data = try Data(contentsOf: url)
        try data.prefix(data.count / 2).write(to: url)
        let error = #expect(throws: StoreError.self) { _ = try backend.open(folder, create: false).read() }
        #expect(error?.kind == .truncated || error?.kind == .corrupt)
    }

    @Test func sqliteShorterThanItsHeaderIsTruncated() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.sqliteRollback.open(folder)
        try store.write { $0 = richContents() }
        store.close()
        let url = folder.appending("store.sqlite")
        try Data(try Data(contentsOf: url).prefix(60)).write(to: url)
        let error = #expect(throws: StoreError.self) { try Backend.sqliteRollback.open(folder, create: false) }
        #expect(error?.kind == .truncated)
    }

    @Test(arguments: [
        ("{ garbage", StoreError.Kind.corrupt, "not valid JSON"),
        ("", StoreError.Kind.truncated, "empty"),
        (#"{"format": "something else"}"#, StoreError.Kind.corrupt, "not a multidoc store"),
        (#"{"format": "multidoc-json-store", "schemaVersion": 2, "objects": 7}"#, StoreError.Kind.corrupt, "wrong shape"),
        (#"{"format": "multidoc-json-store", "schemaVersion": 9}"#, StoreError.Kind.newerSchema(found: 9, supported: 2), "schema version 9"),
    ])
    func damagedJSONIsReportedByKind(contents: String, kind: StoreError.Kind, message: String) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        try Data(contents.utf8).write(to: folder.appending("store.json"))
        let error = #expect(throws: StoreError.self) { try Backend.json.open(folder, create: false) }
        #expect(error?.kind == kind)
        #expect(error?.description.contains(message) == true, "\(error?.description ?? "")")
    }

    @Test(arguments: [
        (["v7"], nil, Int64(7)),  // One migration more, but schema version 7.
        (["v7-tables", "v7-indexes"], "7", 7),  // Two migrations more, one version.
    ] as [([String], String?, Int64)])
    func aNewerSQLiteSchemaIsRefusedWithItsVersion(migrations: [String], recorded: String?, version: Int64) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.sqliteRollback.open(folder)
        store.close()
        let queue = try DatabaseQueue(path: folder.appending("store.sqlite").path)
        try queue.write { db in
            for migration in migrations { try db.execute(sql: "INSERT INTO grdb_migrations VALUES (?)", arguments: [migration]) }
            if let recorded { try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'schemaVersion'", arguments: [recorded]) }
        }
        try queue.close()
        let error = #expect(throws: StoreError.self) { try Backend.sqliteRollback.open(folder, create: false) }
        #expect(error?.kind == .newerSchema(found: version, supported: SchemaVersion.current))
        #expect(error?.description.contains("schema version \(version)") == true, "\(error?.description ?? "")")
        #expect(migrations.allSatisfy { error?.description.contains($0) == true })
    }

    /// A valid database whose rows hold values of the wrong type (SQLite stores any type in any
    /// column) — damaged, or edited by hand. GRDB's row subscripts trap on those.
    @Test(arguments: [Backend.sqliteRollback, .sqliteWAL], [
        ("INSERT OR REPLACE INTO applied VALUES ('aaaaaaaa-0000-4000-8000-000000000001', 'abc')", "applied.sequence"),
        ("UPDATE records SET entity = X'FF00FE'", "records.entity"),
        ("UPDATE records SET attributes = X'FFFE' WHERE id = 't1'", "records.attributes of t1 is not an attribute record"),
        ("UPDATE records SET attributes = 7 WHERE id = 't1'", "records.attributes"),
        ("UPDATE records SET attributes = substr(attributes, 1, 12) WHERE id = 't1'", "records.attributes of t1 is damaged"),
        ("UPDATE records SET attributes = attributes || X'00' WHERE id = 't1'", "records.attributes of t1 is damaged"),
        ("UPDATE tombstones SET stamp_wall = 'late'", "tombstones.stamp_wall"),
        ("UPDATE outbox SET payload = 7", "outbox.payload"),
        ("UPDATE meta SET value = X'FF' WHERE key = 'generation'", "meta.value"),
        // NOT NULL is in the schema; a hand-made table without it lets NULL in.
        ("""
         DROP TABLE applied; CREATE TABLE applied (device TEXT, sequence INTEGER);
         INSERT INTO applied VALUES ('aaaaaaaa-0000-4000-8000-000000000001', NULL)
         """, "applied.sequence holds NULL"),
    ])
    func illTypedValuesAreCorruptNotACrash(backend: Backend, damage: (sql: String, column: String)) throws {
        let column = damage.column
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        try store.write { $0 = richContents() }
        store.close()
        let queue = try DatabaseQueue(path: folder.appending("store.sqlite").path)
        try queue.write { db in try db.execute(sql: damage.sql) }
        try queue.close()
        let damaged = try backend.open(folder, create: false)
        defer { damaged.close() }
        let readError = #expect(throws: StoreError.self) { try damaged.read() }
        #expect(readError?.kind == .corrupt)
        #expect(readError?.description.contains(folder.appending("store.sqlite").path) == true)
        #expect(readError?.description.contains(column) == true, "\(readError?.description ?? "")")
        // A write reads first: the same typed error, not GRDB's.
        let writeError = #expect(throws: StoreError.self) { try damaged.write { $0.sync.values["k"] = "v" } }
        #expect(writeError?.kind == .corrupt)
        #expect(writeError?.description.contains(column) == true, "\(writeError?.description ?? "")")
    }

    @Test(.enabled(if: getuid() != 0, "root reads every file whatever its mode, so the permission case cannot fail as root"), arguments: Backend.allCases)
    func anUnreadableStoreIsReported(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        store.close()
        let url = folder.appending(backend.kind.fileName)
        chmod(url.path, 0)
        defer { chmod(url.path, 0o600) }
        let error = #expect(throws: StoreError.self) { try backend.open(folder, create: false) }
        #expect(error?.kind == .unreadable)
    }
}
