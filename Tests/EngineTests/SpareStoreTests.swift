import Engine
import Foundation
import Model
import Storage
import Sync
import Synchronization
import Testing
import TestSupport

/// A long-lived process keeps a document's folder made ahead (`<root>/.spare-<kind>/`: an
/// empty store and the record's file): a new document's folder, store and record, and a
/// discovered one's, are then renames of what is there, and a new spare is made once the
/// document is created or imported.
@Suite struct SpareStoreTests {
    static func inode(_ url: URL) -> UInt64? {
        var info = stat()
        return stat(url.path, &info) == 0 ? UInt64(info.st_ino) : nil
    }

    static func storeFolder(_ harness: EngineHarness, _ device: String, _ id: DocumentID, _ name: String) -> URL {
        harness.root(device).appendingPathComponent("Documents/\(id)/\(name)", isDirectory: false)
    }

    /// The spare's store folder.
    static func spare(_ harness: EngineHarness, _ device: String, _ kind: StoreKind) -> URL {
        harness.root(device).appendingPathComponent(".spare-\(kind.rawValue)/store", isDirectory: false)
    }

    /// The spare's file for the record.
    static func spareRecord(_ harness: EngineHarness, _ device: String, _ kind: StoreKind) -> URL {
        harness.root(device).appendingPathComponent(".spare-\(kind.rawValue)/.tmp-document.json.spare", isDirectory: false)
    }

    static func record(_ harness: EngineHarness, _ device: String, _ id: DocumentID) -> URL {
        harness.root(device).appendingPathComponent("Documents/\(id)/document.json", isDirectory: false)
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func newAndTheFirstImportTakeTheSpareAndAnotherIsMade(_ backend: EngineHarness.Backend) async throws {
        let kind = try #require(StoreKind(rawValue: backend.rawValue))
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend, keepsSpareStores: true)
        await a.prepareSpareStores()
        let spareA = try #require(Self.inode(Self.spare(harness, "A", kind)), "a long-lived process makes its spare when it starts")
        let spareRecordA = try #require(Self.inode(Self.spareRecord(harness, "A", kind)))
        let created = try await a.create(name: try DocumentName("Spare"))
        #expect(Self.inode(Self.storeFolder(harness, "A", created.id, "Spare")) == spareA, "new's store is the spare, moved")
        #expect(Self.inode(Self.record(harness, "A", created.id)) == spareRecordA, "its record went into the spare's file")
        let text = try await a.detail(created.id).text
        #expect(!text.isEmpty)
        await a.waitForSpareStores()
        let nextA = try #require(Self.inode(Self.spare(harness, "A", kind)), "another spare is made after new")
        #expect(nextA != spareA)

        let b = try harness.device("B", backend: backend, keepsSpareStores: true)
        await b.prepareSpareStores()
        let spareB = try #require(Self.inode(Self.spare(harness, "B", kind)))
        let spareRecordB = try #require(Self.inode(Self.spareRecord(harness, "B", kind)))
        await b.sync()
        #expect(try await b.detail(created.id).text == text)
        #expect(Self.inode(Self.storeFolder(harness, "B", created.id, "Spare")) == spareB, "the first import's store is B's spare")
        #expect(Self.inode(Self.record(harness, "B", created.id)) == spareRecordB, "the discovered record went into it too")
        await b.waitForSpareStores()
        #expect(Self.inode(Self.spare(harness, "B", kind)).map { $0 != spareB } == true)

        // Both stores are ordinary stores: saved to, closed, and read by another process.
        try await b.appendText(created.id, " from B")
        await a.sync()
        #expect(try await a.detail(created.id).text == text + " from B")
        await a.closeAll()
        await b.closeAll()
        let command = try harness.device("A", backend: backend)
        #expect(try await command.detail(created.id).text == text + " from B")
        await command.closeAll()
    }

    @Test func aCommandTakesASpareButNeverMakesOne() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let command = try harness.device("A", backend: .sqlite)
        await command.prepareSpareStores()
        _ = try await command.create(name: try DocumentName("First"))
        await command.waitForSpareStores()
        #expect(Self.inode(Self.spare(harness, "A", .sqlite)) == nil)
        await command.closeAll()

        let daemon = try harness.device("A", backend: .sqlite, keepsSpareStores: true)
        await daemon.prepareSpareStores()
        await daemon.closeAll()
        let spare = try #require(Self.inode(Self.spare(harness, "A", .sqlite)))
        let again = try harness.device("A", backend: .sqlite)
        let second = try await again.create(name: try DocumentName("Second"))
        await again.waitForSpareStores()
        #expect(Self.inode(Self.storeFolder(harness, "A", second.id, "Second")) == spare)
        #expect(Self.inode(Self.spare(harness, "A", .sqlite)) == nil)
        await again.closeAll()
    }

    @Test func aBuildCutShortIsThrownAwayAndAFolderInTheWayKeepsTheSpare() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        // A build a kill cut short: a half-made store under the building name.
        let building = harness.root("A").appendingPathComponent(".spare-sqlite.building", isDirectory: false)
        try FileManager.default.createDirectory(at: building, withIntermediateDirectories: true)
        try Data("half".utf8).write(to: building.appendingPathComponent("store.sqlite"))
        let a = try harness.device("A", backend: .sqlite, keepsSpareStores: true)
        await a.prepareSpareStores()
        #expect(!FileManager.default.fileExists(atPath: building.path))
        let spare = try #require(Self.inode(Self.spare(harness, "A", .sqlite)))

        // Something already in the document's store folder: the spare cannot go there, the
        // store is made in place as without one, and the spare waits for the next document.
        let id = DocumentID(UUID())
        let folder = Self.storeFolder(harness, "A", id, "InTheWay")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("mine".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        let created = try await a.create(name: try DocumentName("InTheWay"), id: id)
        #expect(!(try await a.detail(created.id).text).isEmpty)
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("notes.txt").path))
        #expect(Self.inode(Self.spare(harness, "A", .sqlite)) == spare)

        // The document's folder there and empty (its record written by a process without a
        // spare): the spare's store alone goes, and the spare is made whole again.
        let other = DocumentID(UUID())
        try FileManager.default.createDirectory(at: harness.root("A").appendingPathComponent("Documents/\(other)"), withIntermediateDirectories: true)
        let second = try await a.create(name: try DocumentName("Second"), id: other)
        #expect(Self.inode(Self.storeFolder(harness, "A", second.id, "Second")) == spare)
        #expect(!(try await a.detail(second.id).text).isEmpty)
        await a.waitForSpareStores()
        #expect(Self.inode(Self.spare(harness, "A", .sqlite)).map { $0 != spare } == true)
        #expect(Self.inode(Self.spareRecord(harness, "A", .sqlite)) != nil)
        await a.closeAll()
    }

    /// A spare damaged after it was made (it holds nothing yet) is made again in place: the new
    /// document never reports a damaged store.
    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func aDamagedSpareIsMadeAgain(_ backend: EngineHarness.Backend) async throws {
        let kind = try #require(StoreKind(rawValue: backend.rawValue))
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend, keepsSpareStores: true)
        await a.prepareSpareStores()
        let file = Self.spare(harness, "A", kind).appendingPathComponent(kind.fileName)
        try Data("not a store at all, not even close to one".utf8).write(to: file)
        let created = try await a.create(name: try DocumentName("Mended"))
        #expect(!(try await a.detail(created.id).text).isEmpty)
        await a.closeAll()
        let again = try harness.device("A", backend: backend)
        #expect(!(try await again.detail(created.id).text).isEmpty)
        await again.closeAll()
    }

    /// The real stores, counting opens.
    final class CountingStores: Sendable {
        let opens = Mutex(0)
        let base = StoreProvider.standard()
        var provider: StoreProvider {
            StoreProvider(
                open: { kind, url, create throws(StoreError) in
                    self.opens.withLock { $0 += 1 }
                    return try self.base.open(kind, at: url, create: create)
                },
                destroy: { kind, url throws(StoreError) in try self.base.destroy(kind, at: url) },
                exists: StoreProvider.fileExists)
        }
    }

    /// A long-lived process holds its spare open: the document that takes it carries on with
    /// that connection (no store opened while new waits), and one taken meanwhile by another
    /// process of the device is never used for another document.
    @Test func theSpareHeldOpenIsCarriedOnAndNeverSharedWithAnotherDocument() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let counting = CountingStores()
        let daemon = try harness.device("A", backend: .sqlite, stores: counting.provider, keepsSpareStores: true)
        await daemon.prepareSpareStores()
        let before = counting.opens.withLock { $0 }
        let first = try await daemon.create(name: try DocumentName("Carried"))
        #expect(counting.opens.withLock { $0 } == before, "new opened no store: it carried on with the spare held open")
        #expect(!(try await daemon.detail(first.id).text).isEmpty)
        await daemon.waitForSpareStores()

        // A command of the same device takes the spare the daemon holds open.
        let command = try harness.device("A", backend: .sqlite)
        let taken = try await command.create(name: try DocumentName("Taken"))
        try await command.appendText(taken.id, " by the command")
        await command.closeAll()
        // The daemon's next document gets a store of its own, not the command's.
        let second = try await daemon.create(name: try DocumentName("Own"))
        try await daemon.appendText(second.id, " by the daemon")
        await daemon.closeAll()
        let reader = try harness.device("A", backend: .sqlite)
        let takenText = try await reader.detail(taken.id).text
        let ownText = try await reader.detail(second.id).text
        #expect(takenText.hasSuffix(" by the command") && !takenText.contains("by the daemon"))
        #expect(ownText.hasSuffix(" by the daemon") && !ownText.contains("by the command"))
        await reader.closeAll()
    }

    /// The device's next document folder in the container is made ahead too (a dot name, which
    /// readers skip): publishing renames it into place and fills its files, and a new one is
    /// made after.
    @Test func theContainerFolderIsMadeAheadTakenByNewAndInvisibleToReaders() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite, keepsSpareStores: true)
        await a.prepareSpareStores()
        let device = a.identity.id
        let spare = harness.container.appendingPathComponent("documents/.spare-\(device)")
        let folder = try #require(Self.inode(spare))
        let info = try #require(Self.inode(spare.appendingPathComponent(".tmp-info-\(device).json.spare")))
        let log = try #require(Self.inode(spare.appendingPathComponent("logs/\(device)/.tmp-0000000000000001.log.spare")))
        // Nobody reads it: a peer discovers nothing, and the container verifies clean.
        let b = try harness.device("B", backend: .sqlite)
        #expect(await b.sync().discovered.isEmpty)
        #expect(Container(root: harness.container).verify().problems.isEmpty)

        let created = try await a.create(name: try DocumentName("Published"))
        let published = harness.container.appendingPathComponent("documents/\(created.id)")
        #expect(Self.inode(published) == folder, "the folder made ahead became the document's")
        #expect(Self.inode(published.appendingPathComponent("info-\(device).json")) == info)
        #expect(Self.inode(published.appendingPathComponent("logs/\(device)/0000000000000001.log")) == log)
        await a.waitForSpareStores()
        #expect(Self.inode(spare).map { $0 != folder } == true, "another is made after new")
        await b.sync()
        #expect(try await b.detail(created.id).text == (try await a.detail(created.id).text))
        #expect(Container(root: harness.container).verify().problems.isEmpty)
        await a.closeAll()
        await b.closeAll()
    }

    /// A long-lived process makes a new document's second log file ahead, after its first log:
    /// the first save fills it (its log is that file). Each save after makes its log's file
    /// while it stages, and no file is left for the next.
    @Test func eachSaveFillsTheLogFileTheLastMadeAhead() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite, keepsSpareStores: true)
        let created = try await a.create(name: try DocumentName("Saves"))
        let logs = harness.container.appendingPathComponent("documents/\(created.id)/logs/\(a.identity.id)")
        let next = try #require(Self.inode(logs.appendingPathComponent(".tmp-0000000000000002.log.spare")), "made after the first log")
        try await a.appendText(created.id, " two")
        #expect(Self.inode(logs.appendingPathComponent("0000000000000002.log")) == next)
        try await a.appendText(created.id, " three")
        #expect(try FileManager.default.contentsOfDirectory(atPath: logs.path).sorted() == ["0000000000000001.log", "0000000000000002.log", "0000000000000003.log"])
        // Readers skip it: the container verifies clean, and a peer has both saves.
        #expect(Container(root: harness.container).verify().problems.isEmpty)
        let b = try harness.device("B", backend: .sqlite)
        await b.sync()
        #expect(try await b.detail(created.id).text == (try await a.detail(created.id).text))
        await a.closeAll()
        await b.closeAll()
    }

    /// A document discovered before its first log came: its store stays open and no spare is
    /// made while the log is on its way (the making's syncs held back that log's import:
    /// new → viewable took 10 ms instead of 3). Once the log is imported, or `firstLogWait`
    /// after the discovery without it (its creator may have stopped), the store is closed and
    /// the spare made.
    @Test func aDocumentDiscoveredBeforeItsFirstLogStaysOpenAndTheSpareWaits() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite)
        let first = try await a.create(name: try DocumentName("First"))
        let second = try await a.create(name: try DocumentName("Second"))
        await a.closeAll()
        // Their logs are held back: B finds the info files alone.
        let container = Container(root: harness.container)
        let held = harness.folder.appending("held")
        try FileManager.default.createDirectory(at: held, withIntermediateDirectories: true)
        for id in [first.id, second.id] {
            try FileManager.default.moveItem(at: container.logsDirectory(id, device: a.identity.id), to: held.appendingPathComponent(id.description))
        }
        let b = try harness.device("B", backend: .sqlite, keepsSpareStores: true)
        await b.prepareSpareStores()
        #expect(Self.inode(Self.spare(harness, "B", .sqlite)) != nil)
        #expect(Set(await b.sync().discovered) == ["First", "Second"])
        #expect(await b.openDocumentCount() == 2, "both wait open for their first log")
        await b.waitForSpareStores()
        #expect(Self.inode(Self.spare(harness, "B", .sqlite)) == nil, "no spare is made while a first log is on its way")

        try FileManager.default.moveItem(at: held.appendingPathComponent(first.id.description), to: container.logsDirectory(first.id, device: a.identity.id))
        #expect(await b.sync().importedLogs == 1)
        #expect(await b.openDocumentCount() == 1, "the imported one is closed; the other still waits")
        await b.waitForSpareStores()
        #expect(Self.inode(Self.spare(harness, "B", .sqlite)) == nil)

        harness.clock.advance(2)
        await b.sync()
        #expect(await b.openDocumentCount() == 0, "after the wait, its store is closed")
        await b.waitForSpareStores()
        #expect(Self.inode(Self.spare(harness, "B", .sqlite)) != nil, "and the spare is made")
        #expect(try await b.detail(first.id).text == (try await a.detail(first.id).text))
        await a.closeAll()
        await b.closeAll()
    }
}
