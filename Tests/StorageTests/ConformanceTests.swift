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

let deviceA = DeviceID(UUID(uuidString: "aaaaaaaa-0000-4000-8000-000000000001") ?? UUID())
let deviceB = DeviceID(UUID(uuidString: "bbbbbbbb-0000-4000-8000-000000000002") ?? UUID())

/// Contents that use every field.
func richContents() -> StoreContents {
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
