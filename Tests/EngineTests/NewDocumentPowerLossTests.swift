import Engine
import Foundation
import Model
import Storage
import Sync
import Synchronization
import Testing
import TestSupport

/// `new` with FastSave on and the container there does not sync its first commit: the first
/// log, written durably before `new` returns, is the save's one durable step
/// (Docs/RELIABILITY.md, "One durable step per save").
@Suite struct NewDocumentPowerLossTests {
    @Test func aNewDocumentUndoneByAPowerLossComesBackFromItsLog() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let volume = PowerLossVolume()
        let a = try harness.device("A", stores: volume.provider)
        let created = try await a.create(name: try DocumentName("Power"))
        let text = try await a.detail(created.id).text
        #expect(!text.isEmpty)
        await a.closeAll()

        volume.powerLoss()
        #expect(volume.currentContents().allSatisfy { $0.graph.objects.isEmpty }, "the first commit was not synced")
        let restarted = try harness.device("A", stores: volume.provider)
        await restarted.sync()
        #expect(try await restarted.detail(created.id).text == text, "its own log brings the document back")
        #expect(Container(root: harness.container).logSequences(created.id, device: restarted.identity.id) == [1])
        // A save after it is numbered after the first log, and a peer gets both.
        try await restarted.appendText(created.id, " two")
        let b = try harness.device("B")
        await b.sync()
        #expect(try await b.detail(created.id).text == text + " two")
        await restarted.closeAll()
        await b.closeAll()
    }

    /// The record is written after the first log (off the way to the peers): a process killed
    /// in between leaves a published document and its store without a record. The next pass
    /// finds it in the container as a peer would, over the store already there: nothing lost,
    /// nothing applied twice, and the next save is numbered after the first log.
    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func aNewDocumentKilledBeforeItsRecordIsFoundAgain(_ backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let created = try await a.create(name: try DocumentName("Unrecorded"))
        let text = try await a.detail(created.id).text
        await a.closeAll()
        // As if killed between the log and the record (the catalog knew nothing of it either).
        let root = DeviceRoot(url: harness.root("A"))
        try FileManager.default.removeItem(at: root.recordURL(created.id))
        try? FileManager.default.removeItem(at: root.catalogURL)

        let restarted = try harness.device("A", backend: backend)
        await restarted.sync()
        #expect(try await restarted.detail(created.id).text == text, "found again, its text once")
        try await restarted.appendText(created.id, " two")
        #expect(Container(root: harness.container).logSequences(created.id, device: restarted.identity.id) == [1, 2])
        let b = try harness.device("B", backend: backend)
        await b.sync()
        #expect(try await b.detail(created.id).text == text + " two")
        await restarted.closeAll()
        await b.closeAll()
    }

    /// The info file goes out only after the first commit: a store that cannot be made leaves
    /// nothing in the container, so peers never find a document that will never have a log.
    @Test func aNewDocumentWhoseStoreFailsLeavesNothingInTheContainer() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let refusing = StoreProvider(
            open: { _, url, _ throws(StoreError) in throw StoreError(.writeFailed, path: url.path, detail: "the disk is full") },
            destroy: { _, _ in }, exists: { _, _ in false })
        let a = try harness.device("A", stores: refusing)
        await #expect(throws: (any Error).self) { _ = try await a.create(name: try DocumentName("Refused")) }
        let documents = harness.container.appendingPathComponent("documents")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: documents.path)) ?? []).isEmpty)
        let b = try harness.device("B")
        let report = await b.sync()
        #expect(report.discovered.isEmpty)
        await a.closeAll()
        await b.closeAll()
    }

    /// The info file is written and synced while the store is made and the first save
    /// commits, but put in place only after the commit: while the commit runs no info file is
    /// in the container, and a first save that fails leaves no folder there (the one made
    /// ahead and taken for it is removed with the info file written ahead), so peers never
    /// find a document that will never have a log.
    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func aNewDocumentsInfoFileGoesInPlaceOnlyAfterItsFirstCommit(_ backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let documents = harness.container.appendingPathComponent("documents")
        @Sendable func infoFiles() -> [String] {
            let folders = (try? FileManager.default.contentsOfDirectory(atPath: documents.path)) ?? []
            return folders.flatMap { folder in
                ((try? FileManager.default.contentsOfDirectory(atPath: documents.appendingPathComponent(folder).path)) ?? [])
                    .filter { $0.hasPrefix("info-") }
            }
        }
        // What the container holds at each write while `new` runs (spares are made through the
        // same stores before and after).
        let watching = Mutex(false)
        let seen = Mutex<[[String]]>([])
        let refuse = Mutex(false)
        let standard = StoreProvider.standard()
        let watched = StoreProvider(
            open: { kind, url, create throws(StoreError) in
                WatchedStore(try standard.open(kind, at: url, create: create)) {
                    if watching.withLock({ $0 }) { seen.withLock { $0.append(infoFiles()) } }
                    return refuse.withLock { $0 }
                }
            },
            destroy: { kind, url throws(StoreError) in try standard.destroy(kind, at: url) },
            exists: { kind, url in standard.exists(kind, at: url) })
        let a = try harness.device("A", backend: backend, stores: watched, keepsSpareStores: true)
        await a.prepareSpareStores()
        watching.withLock { $0 = true }
        let created = try await a.create(name: try DocumentName("Ahead"))
        watching.withLock { $0 = false }
        let writes = seen.withLock { $0 }
        #expect(writes.first == [], "no info file while the first save commits (the first write): \(writes)")
        #expect(infoFiles().count == 1, "the info file is in place once `new` returns")
        let b = try harness.device("B", backend: backend)
        await b.sync()
        #expect(try await b.detail(created.id).text == (try await a.detail(created.id).text))

        await a.waitForSpareStores()
        refuse.withLock { $0 = true }
        await #expect(throws: (any Error).self) { _ = try await a.create(name: try DocumentName("Refused")) }
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: documents.path)) ?? []).filter { !$0.hasPrefix(".") }
        #expect(folders == [created.id.description], "the failed document left no folder in the container")
        #expect(infoFiles().count == 1)
        let report = await b.sync()
        #expect(report.discovered.isEmpty)
        await a.closeAll()
        await b.closeAll()
    }

    /// A `new` under a UUID a peer already shares (``DocumentLibrary/withDocument(_:_:)``) that
    /// fails removes only what it wrote in the container: the peer's info file and logs stay.
    @Test func aFailedNewUnderAKnownUUIDLeavesThePeersFilesInTheContainer() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let b = try harness.device("B", backend: .sqlite)
        let shared = try await b.create(name: try DocumentName("Shared"))
        try await b.appendText(shared.id, " more")
        let folder = harness.container.appendingPathComponent("documents").appendingPathComponent(shared.id.description)
        func files() -> [String] {
            (FileManager.default.enumerator(atPath: folder.path)?.allObjects as? [String] ?? []).filter { !$0.contains(".tmp-") }.sorted()
        }
        let before = files()
        #expect(before.contains { $0.hasPrefix("info-") } && before.contains { $0.hasSuffix(".log") })
        let standard = StoreProvider.standard()
        let refusing = StoreProvider(
            open: { kind, url, create throws(StoreError) in WatchedStore(try standard.open(kind, at: url, create: create)) { true } },
            destroy: { kind, url throws(StoreError) in try standard.destroy(kind, at: url) },
            exists: { kind, url in standard.exists(kind, at: url) })
        let a = try harness.device("A", backend: .sqlite, stores: refusing, keepsSpareStores: true)
        await a.prepareSpareStores()
        await #expect(throws: (any Error).self) { _ = try await a.create(name: try DocumentName("Again"), id: shared.id) }
        #expect(files() == before, "the peer's files are all there, and nothing of A's")
        let c = try harness.device("C", backend: .sqlite)
        await c.sync()
        #expect(try await c.detail(shared.id).text == (try await b.detail(shared.id).text))
        await a.closeAll()
        await b.closeAll()
        await c.closeAll()
    }

    /// A `new` killed before its info file went in place leaves its folder in the container with
    /// the info file and first log written ahead, under temporary names: the device's next full
    /// pass removes it, once their process is gone. A folder with anything else in it (a
    /// peer's file) or a running process's files stays.
    @Test func aFolderAKilledNewLeftIsRemovedByTheNextPass() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite)
        await a.sync()
        let device = a.identity.id.description
        let documents = harness.container.appendingPathComponent("documents")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        let gone = process.processIdentifier
        func leftover(_ id: String, maker: Int32, extra: String? = nil) throws -> URL {
            let folder = documents.appendingPathComponent(id)
            let logs = folder.appendingPathComponent("logs/\(device)")
            try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
            try Data("{}".utf8).write(to: folder.appendingPathComponent(".tmp-info-\(device).json.\(maker).7"))
            try Data().write(to: logs.appendingPathComponent(".tmp-0000000000000002.log.spare"))
            try Data([1, 2, 3]).write(to: logs.appendingPathComponent(".tmp-0000000000000001.log.\(maker).9"))
            if let extra { try Data("x".utf8).write(to: folder.appendingPathComponent(extra)) }
            return folder
        }
        let killed = try leftover("5e1f0000-0000-4000-8000-000000000001", maker: gone)
        let running = try leftover("5e1f0000-0000-4000-8000-000000000002", maker: ProcessInfo.processInfo.processIdentifier)
        let shared = try leftover("5e1f0000-0000-4000-8000-000000000003", maker: gone, extra: "notes.txt")
        await a.sync()
        #expect(!FileManager.default.fileExists(atPath: killed.path), "the killed new's folder is gone")
        #expect(FileManager.default.fileExists(atPath: running.path), "a running process's folder stays")
        #expect(FileManager.default.fileExists(atPath: shared.appendingPathComponent("notes.txt").path), "a folder with another file stays")
        #expect(await a.list().isEmpty)
        await a.closeAll()
    }

    /// Without the container the first commit is synced as before: the outbox is its only copy.
    @Test func aNewDocumentWithoutTheContainerIsSyncedInItsStore() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let volume = PowerLossVolume()
        let away = harness.folder.appending("away")
        let a = try harness.device("A", container: away, stores: volume.provider)
        let created = try await a.create(name: try DocumentName("Offline"))
        let text = try await a.detail(created.id).text
        await a.closeAll()
        volume.powerLoss()
        let restarted = try harness.device("A", container: away, stores: volume.provider)
        #expect(try await restarted.detail(created.id).text == text)
        await restarted.closeAll()
    }
}

/// A store that runs `check` before each write, and refuses the write (after its body ran, as
/// a full disk would at the commit) when `check` says so.
private final class WatchedStore: DocumentStore {
    let inner: any DocumentStore
    let check: @Sendable () -> Bool
    init(_ inner: any DocumentStore, check: @escaping @Sendable () -> Bool) {
        self.inner = inner
        self.check = check
    }
    var kind: StoreKind { inner.kind }
    var url: URL { inner.url }
    func read() throws(StoreError) -> StoreContents { try inner.read() }
    func write<T>(durable: Bool, _ body: (inout StoreContents) throws -> T) throws -> T {
        try write(durable: durable, notingObjects: false, body)
    }
    func write<T>(durable: Bool, notingObjects: Bool, _ body: (inout StoreContents) throws -> T) throws -> T {
        guard check() else { return try inner.write(durable: durable, notingObjects: notingObjects, body) }
        var contents = try inner.read()
        _ = try body(&contents)
        throw StoreError(.writeFailed, path: url.path, detail: "the disk is full")
    }
    func sync() throws(StoreError) { try inner.sync() }
    func close() { inner.close() }
}
