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

/// Every backend, as the conformance suite runs them.
enum Backend: String, CaseIterable, CustomStringConvertible, Sendable {
    case sqliteRollback = "sqlite-rollback"
    case sqliteWAL = "sqlite-wal"
    case json

    var description: String { rawValue }
    var kind: StoreKind { self == .json ? .json : .sqlite }
    var journal: JournalMode { self == .sqliteWAL ? .wal : .rollback }
    var provider: StoreProvider { .standard(options: StoreOptions(journalMode: journal, busyTimeout: .seconds(10))) }

    func open(_ folder: TemporaryDirectory, create: Bool = true) throws -> any DocumentStore {
        try provider.open(kind, at: folder.appending(kind.fileName), create: create)
    }
}

private let deviceA = DeviceID(UUID(uuidString: "aaaaaaaa-0000-4000-8000-000000000001") ?? UUID())
private let deviceB = DeviceID(UUID(uuidString: "bbbbbbbb-0000-4000-8000-000000000002") ?? UUID())

/// Contents that use every field.
private func richContents() -> StoreContents {
    var contents = StoreContents()
    contents.graph.objects[ObjectID("t1")] = ObjectRecord(entity: Entity.textEntry, attributes: [
        "text": .string("héllo 日本 🎉\nline two"), "modified": .date(Date(timeIntervalSince1970: 1_700_000_000.5)),
        "n": .int(-42), "x": .double(0.25), "b": .bool(true), "nothing": .null,
    ])
    contents.graph.objects[ObjectID.seed("model-version")] = ObjectRecord(entity: Entity.modelVersion, attributes: ["version": .int(2)])
    contents.sync.stamps[ObjectID("t1")] = ["text": Stamp(wall: 1_700_000_000_500, counter: 3, device: deviceA)]
    contents.sync.tombstones[ObjectID("gone")] = Stamp(wall: 5, counter: 0, device: deviceB)
    contents.sync.applied = [deviceA: 12, deviceB: 3]
    contents.sync.clock = HybridLogicalClock(wall: 1_700_000_000_500, counter: 3)
    contents.sync.outbox = [13: Data("log 13".utf8), 14: Data([0, 1, 2, 255])]
    contents.sync.values = ["name": "TestDoc1"]
    return contents
}

@Suite struct ConformanceTests {
    @Test(arguments: Backend.allCases)
    func roundTripsEveryField(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        let contents = richContents()
        try store.write { $0 = contents }
        #expect(try store.read() == contents)
        store.close()
        let reopened = try backend.open(folder, create: false)
        #expect(try reopened.read() == contents)
        // Removing things is persisted too.
        try reopened.write { contents in
            contents.graph.objects[ObjectID("t1")]?.attributes["nothing"] = nil
            contents.graph.objects[ObjectID.seed("model-version")] = nil
            contents.sync.outbox[13] = nil
            contents.sync.tombstones = [:]
        }
        let expected = try reopened.read()
        reopened.close()
        #expect(try backend.open(folder, create: false).read() == expected)
        #expect(expected.graph.objects.count == 1 && expected.sync.outbox.count == 1)
    }

    /// Logs taken out of the outbox once shipped: the store object that took them out never
    /// shows them again, its next write (whatever it changes) or its close commits their
    /// removal, and the logs saved after them stay.
    @Test(arguments: Backend.allCases)
    func shippedLogsLeaveTheOutboxByTheNextWriteOrTheClose(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        try store.write { $0.sync.outbox = [1: Data("one".utf8), 2: Data("two".utf8)] }
        try store.dropShipped([1])
        #expect(try store.read().sync.outbox == [2: Data("two".utf8)])
        let outbox = try store.write(durable: false) { contents -> [UInt64: Data] in
            contents.sync.outbox[3] = Data("three".utf8)
            return contents.sync.outbox
        }
        #expect(outbox == [2: Data("two".utf8), 3: Data("three".utf8)], "a write sees what a read sees")
        let other = try backend.open(folder, create: false)
        #expect(try other.read().sync.outbox == outbox, "the next write took log 1 out")
        other.close()

        try store.dropShipped([2, 3])
        #expect(try store.read().sync.outbox.isEmpty)
        store.close()
        let reopened = try backend.open(folder, create: false)
        defer { reopened.close() }
        #expect(try reopened.read().sync.outbox.isEmpty, "the close took logs 2 and 3 out")
        #expect(throws: StoreError.self) { try store.dropShipped([4]) }
    }

    /// A SQLite store object that stops writing after a save commits the shipped logs' removal
    /// on its own about a second later: another process of the device does not find them.
    @Test func shippedLogsLeaveTheCommittedOutboxWithoutALaterWrite() async throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.sqliteWAL.open(folder)
        defer { store.close() }
        try store.write { $0.sync.outbox = [1: Data("one".utf8)] }
        try store.dropShipped([1])
        let other = try Backend.sqliteWAL.open(folder, create: false)
        defer { other.close() }
        let deadline = ContinuousClock.now + .seconds(10)
        while try !other.read().sync.outbox.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try other.read().sync.outbox.isEmpty)
    }

    /// A commit that is not synced is still a commit: another connection sees it at once, a
    /// reopened store holds it, and `sync()` then a durable commit keep it (what a save whose log
    /// is its durable step relies on; a power loss cannot be staged in a test).
    @Test(arguments: Backend.allCases)
    func anUnsyncedCommitIsACommit(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        let other = try backend.open(folder, create: false)
        try store.write(durable: false) { $0.sync.values["a"] = "1" }
        #expect(try other.read().sync.values["a"] == "1")
        try store.sync()
        try other.write { $0.sync.values["b"] = "2" }
        store.close()
        other.close()
        let reopened = try backend.open(folder, create: false)
        defer { reopened.close() }
        #expect(try reopened.read().sync.values == ["a": "1", "b": "2"])
        reopened.close()
        #expect(throws: StoreError.self) { try reopened.sync() }
    }

    @Test(arguments: Backend.allCases)
    func aFailingTransactionLeavesNothing(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        try store.write { $0 = richContents() }
        struct HalfWay: Error {}
        #expect(throws: HalfWay.self) {
            try store.write { contents in
                contents.graph.objects[ObjectID("new")] = ObjectRecord(entity: "X")
                contents.sync.applied[deviceA] = 99
                throw HalfWay()
            }
        }
        #expect(try store.read() == richContents())
        store.close()
        #expect(try backend.open(folder, create: false).read() == richContents())
    }

    @Test(arguments: Backend.allCases)
    func closedStoresRefuseWork(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        store.close()
        store.close()
        let error = #expect(throws: StoreError.self) { try store.read() }
        #expect(error?.kind == .closed)
    }

    @Test(arguments: Backend.allCases)
    func missingStoreIsNotFound(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let error = #expect(throws: StoreError.self) { try backend.open(folder, create: false) }
        #expect(error?.kind == .notFound)
        #expect(error?.description.contains(folder.url.path) == true)
    }

    @Test(arguments: Backend.allCases)
    func twoConnectionsNeverLoseAnUpdate(backend: Backend) async throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let first = try backend.open(folder)
        let second = try backend.open(folder, create: false)
        let rounds = 100
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in [first, second] {
                group.addTask {
                    for _ in 0..<rounds {
                        try store.write { $0.sync.applied[deviceA] = ($0.sync.applied[deviceA] ?? 0) + 1 }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try first.read().sync.applied[deviceA] == UInt64(2 * rounds))
        #expect(try second.read().sync.applied[deviceA] == UInt64(2 * rounds))
    }

    @Test(arguments: Backend.allCases)
    func concurrentCallersOfOneInstanceNeverLoseAnUpdate(backend: Backend) async throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        let writers = 8, rounds = 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<writers {
                group.addTask {
                    for _ in 0..<rounds {
                        try store.write { $0.sync.applied[deviceA] = ($0.sync.applied[deviceA] ?? 0) + 1 }
                    }
                }
            }
            // Readers between the writers: on a shared descriptor, a reader's unlock would
            // drop a writer's lock.
            for _ in 0..<2 {
                group.addTask { for _ in 0..<rounds { _ = try store.read() } }
            }
            try await group.waitForAll()
        }
        #expect(try store.read().sync.applied[deviceA] == UInt64(writers * rounds))
        store.close()
        #expect(try backend.open(folder, create: false).read().sync.applied[deviceA] == UInt64(writers * rounds))
    }

    @Test(arguments: Backend.allCases)
    func twoProcessesOnOneStoreNeverLoseAnUpdate(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let path = folder.appending(backend.kind.fileName)
        let store = try backend.open(folder)
        // The child pauses between commits as a real second process does; a tight loop can
        // starve a rollback-journal writer past its busy timeout (Docs/STORAGE.md).
        let child = try StressProcess(backend: backend, path: path, pause: 200)
        defer { child.kill() }
        try child.waitUntilReady()
        for _ in 0..<50 {
            try store.write { $0.sync.applied[deviceB] = ($0.sync.applied[deviceB] ?? 0) + 1 }
        }
        child.kill()
        let contents = try store.read()
        #expect(contents.sync.applied[deviceB] == 50)
        let counter = contents.graph.objects[ObjectID("counter")]?.attributes["value"]?.intValue
        #expect(counter.map(UInt64.init) == contents.sync.applied[StressProcess.device])
    }

    @Test(arguments: Backend.allCases)
    func aProcessKilledMidCommitLeavesTheLastCommittedState(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let path = folder.appending(backend.kind.fileName)
        var generator = SystemRandomNumberGenerator()
        var last: UInt64 = 0
        for _ in 0..<25 {
            let child = try StressProcess(backend: backend, path: path)
            try child.waitUntilReady()
            usleep(UInt32.random(in: 0...20_000, using: &generator))
            child.kill()
            let store = try backend.open(folder, create: false)
            let contents = try store.read()
            store.close()
            let applied = contents.sync.applied[StressProcess.device] ?? 0
            let counter = contents.graph.objects[ObjectID("counter")]?.attributes["value"]?.intValue ?? -1
            #expect(UInt64(counter) == applied, "both halves of a commit must agree")
            #expect(applied > last, "commits survive and never go backwards")
            last = applied
        }
    }
}

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

@Suite struct BusyTests {
    /// The lock file as the store names it, held through a descriptor of its own: to the store
    /// that is another process.
    private func holdLock(of url: URL) throws -> FileLock {
        let holder = try FileLock(url: JSONDocumentStore.lockURL(for: url))
        try #require(try holder.tryLock(.exclusive))
        return holder
    }

    @Test func aJSONStoreGivesUpAfterTheBusyTimeout() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let url = folder.appending(StoreKind.json.fileName)
        let timeout = Duration.milliseconds(300)
        let store = try StoreProvider.standard(options: StoreOptions(busyTimeout: timeout)).open(.json, at: url, create: true)
        let holder = try holdLock(of: url)
        let clock = ContinuousClock()
        let start = clock.now
        let error = #expect(throws: StoreError.self) { try store.write { $0.sync.values["k"] = "v" } }
        let waited = clock.now - start
        #expect(error?.kind == .busy)
        #expect(error?.description.contains(url.path) == true)
        #expect(error?.description.contains("another process") == true, "\(error?.description ?? "")")
        #expect(waited >= timeout && waited < .seconds(5), "waited \(waited)")
        #expect(throws: StoreError.self) { try store.read() }
        holder.unlock()
        try store.write { $0.sync.values["k"] = "v" }
        #expect(try store.read().sync.values["k"] == "v")
    }

    @Test func aJSONWriterGetsALockReleasedWithinTheTimeout() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let url = folder.appending(StoreKind.json.fileName)
        let store = try StoreProvider.standard(options: StoreOptions(busyTimeout: .seconds(10))).open(.json, at: url, create: true)
        let holder = try holdLock(of: url)
        let release = Thread {
            usleep(150_000)
            holder.unlock()
        }
        release.start()
        try store.write { $0.sync.values["k"] = "v" }
        #expect(try store.read().sync.values["k"] == "v")
    }
}

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

/// A child process committing to a store in a loop (Tools/StoreStress).
final class StressProcess {
    static let device = DeviceID(UUID(uuidString: "5ed5ed00-0000-4000-8000-000000000001") ?? UUID())
    private let process = Process()
    private let output = Pipe()

    /// - Parameter pause: microseconds between the child's commits (0: a tight loop).
    /// - Parameter text: each commit also appends a character to a text, and the child runs
    ///   the store's housekeeping (compaction) after every commit.
    init(backend: Backend, path: URL, pause: UInt32 = 0, text: Bool = false) throws {
        guard let executable = ProductRunner.path(of: "multidoc-store-stress") else {
            throw ProductRunner.RunnerError(message: "multidoc-store-stress is not built next to the tests")
        }
        process.executableURL = executable
        process.arguments = [backend.kind.rawValue, path.path, backend.journal.rawValue, String(pause)] + (text ? ["text"] : [])
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Waits for the child's first commit (it prints "ready").
    func waitUntilReady() throws {
        let line = output.fileHandleForReading.readData(ofLength: 6)
        guard String(decoding: line, as: UTF8.self).hasPrefix("ready") else {
            throw ProductRunner.RunnerError(message: "multidoc-store-stress did not start")
        }
    }

    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// A long-lived process's SQLite store checkpoints when an edit is done, every
/// `SQLiteDocumentStore.checkpointEvery` commits, instead of inside the commit that crosses
/// SQLite's own line (which made an edit wait for two syncs and a copy of the log).
@Suite struct BackgroundCheckpointTests {
    @Test func commitsReachTheStoreFileWhenACheckpointIsDue() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let url = folder.appending("store.sqlite")
        let store = try StoreProvider.standard().open(.sqlite, at: url, create: true)
        defer { store.close() }
        func fileSize() throws -> Int { try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) }
        let padding = String(repeating: "x", count: 3_000)
        func commit(_ index: Int) throws {
            try store.write(durable: false) { contents in
                contents.graph.apply([.insert(ObjectID("o\(index)"), entity: "Note", attributes: ["text": .string("\(index) \(padding)")])])
            }
        }
        _ = try store.read()
        let empty = try fileSize()
        for index in 1..<SQLiteDocumentStore.checkpointEvery {
            try commit(index)
            store.checkpointIfDue()
        }
        _ = try store.read()
        #expect(try fileSize() == empty, "until then every page stays in the write-ahead log")
        try commit(SQLiteDocumentStore.checkpointEvery)
        store.checkpointIfDue()
        // A read runs behind the checkpoint queued on the store's connection.
        _ = try store.read()
        #expect(try fileSize() > empty + (SQLiteDocumentStore.checkpointEvery - 1) * 3_000, "the checkpoint copied the commits into the store file")
        #expect(try store.read().graph.objects.count == SQLiteDocumentStore.checkpointEvery)
    }

    /// The first commit into a write-ahead log started over syncs its header: the checkpoint
    /// starts it over itself, so the save after it appends like any other.
    @Test func theSaveAfterACheckpointDoesNotStartTheLogOver() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let url = folder.appending("store.sqlite")
        let store = try StoreProvider.standard().open(.sqlite, at: url, create: true)
        defer { store.close() }
        // The header's first 16 bytes: magic, format, page size and the checkpoint sequence,
        // which grows each time the log starts over.
        func header() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: url.path + "-wal")).prefix(16) }
        func commit(_ index: Int) throws {
            try store.write(durable: false) { contents in
                contents.graph.apply([.insert(ObjectID("o\(index)"), entity: "Note", attributes: ["text": .string("\(index)")])])
            }
        }
        for index in 1...SQLiteDocumentStore.checkpointEvery {
            try commit(index)
            store.checkpointIfDue()
        }
        _ = try store.read()
        let afterCheckpoint = try header()
        try commit(0)
        #expect(try header() == afterCheckpoint, "the commit appended to the log the checkpoint started over")
        #expect(try store.read().graph.objects.count == SQLiteDocumentStore.checkpointEvery + 1)
    }
}
