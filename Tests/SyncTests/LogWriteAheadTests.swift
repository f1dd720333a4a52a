import FileIO
import Foundation
import Model
import Storage
@testable import Sync
import Testing
import Text
import TestSupport

/// A save's log written beside its slot while the store commits (``LogWriteAhead``): the flush
/// after the commit puts that very file in place, a save that does not commit leaves nothing
/// in the container, and the outbox the flush empties reads empty at once.
@Suite struct LogWriteAheadTests {
    let doc = DocumentID(Fixed.uuid(0xA11))
    let format2 = LogFormat(version: 2, container: Fixed.uuid(7))

    /// Files in `device`'s log folder of `doc`, the spare made ahead for the next log left out.
    func logFolderNames(_ device: SyncDevice, _ harness: SyncHarness) -> [String] {
        let folder = device.replicator.container.logURL(doc, device: device.identity.id, sequence: 1).deletingLastPathComponent()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasSuffix(".spare") }.sorted()
    }

    /// Device A of a new harness on `backend`, with the document made, its text "one".
    func started(_ backend: SyncBackend) throws -> (SyncHarness, SyncDevice) {
        let harness = try SyncHarness(backend)
        let a = harness.device(1, "A", format: format2)
        try a.create(doc, name: "Ahead", text: "one", now: harness.clock.now())
        return (harness, a)
    }

    func appendSave(_ device: SyncDevice, _ store: any DocumentStore, _ suffix: String, preparingNext: Bool = false) throws -> LocalCommit {
        try Replicator.commit(
            document: doc, device: device.identity, format: format2, now: { Date(timeIntervalSince1970: 1_800_000_000) }, to: store, ship: true,
            durable: false, writingLogAheadTo: device.replicator.container, preparingNextLog: preparingNext
        ) { graph in
            guard let entry = graph.textEntry else { throw StoreError(.corrupt, path: "test", detail: "no text") }
            return ([], [TextEdit(object: entry.id, attribute: Entity.TextEntry.text, .append(suffix))])
        }
    }

    @Test(arguments: [SyncBackend.sqlite, .json, .memory])
    func theLogWrittenAheadIsTheOnePutInPlace(_ backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        var a = harness.device(1, "A", format: format2)
        a.replicator.preparesNextLog = true
        let b = harness.device(2, "B", format: format2)
        try a.create(doc, name: "Ahead", text: "one", now: harness.clock.now())

        let store = try a.store(doc)
        defer { store.close() }
        for suffix in [" two", " three"] {
            let commit = try appendSave(a, store, suffix)
            let ahead = try #require(commit.writeAhead, "a save given a container writes its log ahead")
            let data = try #require(commit.outbox?[commit.log.sequence])
            let written = try a.replicator.flush(doc, in: store, after: commit)
            let url = a.replicator.container.logURL(doc, device: a.identity.id, sequence: commit.log.sequence)
            #expect(written == [url])
            #expect(try Data(contentsOf: url) == data, "the slot holds the bytes the outbox held")
            #expect(ahead.take(data) == nil, "the file written ahead is handed out once")
            // What the store shows right after the flush: nothing waits, though the commit that
            // took it out may run after the flush returned.
            #expect(try store.read().sync.outbox.isEmpty)
        }
        #expect(logFolderNames(a, harness) == ["0000000000000001.log", "0000000000000002.log", "0000000000000003.log"], "no temporary file is left")
        #expect(try b.importPending(doc).imported.count == 3)
        #expect(try b.text(doc) == "one two three")
    }

    @Test func theOutboxTakenOutAfterAFlushIsCommittedForOtherConnectionsToo() throws {
        let (harness, a) = try started(.sqlite)
        defer { harness.folder.remove() }
        let store = try a.store(doc)
        let commit = try appendSave(a, store, " two")
        try a.replicator.flush(doc, in: store, after: commit)
        // Closing waits for the queued commit; another connection then sees the outbox empty.
        store.close()
        let again = try a.store(doc)
        defer { again.close() }
        #expect(try again.read().sync.outbox.isEmpty)
        #expect(try again.read().graph.textEntry?.text == "one two")
    }

    /// A save's log file is made while the save stages (``StandbyWriter``), so a process that
    /// makes next logs' files ahead makes none after it: the next save makes its own. A file
    /// made ahead for the slot (after a plain flush) is the one filled, and nothing is left.
    @Test func aLogWrittenAheadFillsTheFileMadeForItsSlotAndLeavesNoneForTheNext() throws {
        let (harness, a) = try started(.sqlite)
        defer { harness.folder.remove() }
        let store = try a.store(doc)
        defer { store.close() }
        let url = a.replicator.container.logURL(doc, device: a.identity.id, sequence: 2)
        let folder = url.deletingLastPathComponent()
        try AtomicFile.makeSpareTemporary(forPath: url.path, synced: false)
        let spare = try #require(try FileManager.default.attributesOfItem(atPath: AtomicFile.spareTemporaryPath(forPath: url.path))[.systemFileNumber] as? UInt64)
        let commit = try appendSave(a, store, " two", preparingNext: true)
        try a.replicator.flush(doc, in: store, after: commit)
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.systemFileNumber] as? UInt64 == spare)
        let third = try appendSave(a, store, " three", preparingNext: true)
        try a.replicator.flush(doc, in: store, after: third)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["0000000000000001.log", "0000000000000002.log", "0000000000000003.log"])
    }

    /// The slot's folders are looked at again once the store committed: a link put on the way
    /// meanwhile stops the log (it waits in the outbox).
    @Test func aLinkPutInTheSlotsPathWhileTheStoreCommittedStopsTheLog() throws {
        let (harness, a) = try started(.sqlite)
        defer { harness.folder.remove() }
        let store = try a.store(doc)
        defer { store.close() }
        let commit = try appendSave(a, store, " two")
        let folder = a.replicator.container.logURL(doc, device: a.identity.id, sequence: 2).deletingLastPathComponent()
        let elsewhere = harness.folder.appending("elsewhere")
        try FileManager.default.moveItem(at: folder, to: elsewhere)
        try FileManager.default.createSymbolicLink(at: folder, withDestinationURL: elsewhere)
        #expect(throws: SyncError.self) { try a.replicator.flush(doc, in: store, after: commit) }
        #expect(!FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent("0000000000000002.log").path), "nothing was put through the link")
        #expect(try store.read().sync.outbox[2] != nil, "the save waits in the outbox")
    }

    @Test func aSaveThatDoesNotCommitLeavesNothingOfItsLog() throws {
        let (harness, a) = try started(.memory)
        defer { harness.folder.remove() }
        let store = RefusingCommitStore(try a.store(doc))
        defer { store.close() }
        #expect(throws: StoreError.self) { try appendSave(a, store, " two") }
        #expect(logFolderNames(a, harness) == ["0000000000000001.log"], "neither the log nor its temporary file is there")
        #expect(try store.read().graph.textEntry?.text == "one")
    }

    /// A save refused before its log is staged (an edit past the end) leaves no file in the
    /// log folder: the one made ahead for its log is gone when the save returns. The next save
    /// ships as usual.
    @Test func aSaveRefusedBeforeItsLogLeavesNoFileMadeAheadForIt() throws {
        let (harness, a) = try started(.sqlite)
        defer { harness.folder.remove() }
        let store = try a.store(doc)
        defer { store.close() }
        #expect(throws: TextError.self) {
            try Replicator.commit(
                document: doc, device: a.identity, format: format2, now: { Date(timeIntervalSince1970: 1_800_000_000) }, to: store, ship: true,
                durable: false, writingLogAheadTo: a.replicator.container
            ) { graph in
                guard let entry = graph.textEntry else { throw StoreError(.corrupt, path: "test", detail: "no text") }
                return ([], [TextEdit(object: entry.id, attribute: Entity.TextEntry.text, .insert("x", at: 99))])
            }
        }
        let folder = a.replicator.container.logURL(doc, device: a.identity.id, sequence: 1).deletingLastPathComponent()
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["0000000000000001.log"])
        let commit = try appendSave(a, store, " two")
        try a.replicator.flush(doc, in: store, after: commit)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["0000000000000001.log", "0000000000000002.log"])
        #expect(try b(harness).importPending(doc).imported.count == 2)
    }

    @Test func aLogOfOtherBytesThanTheOneWrittenAheadIsWrittenAnew() throws {
        let (harness, a) = try started(.memory)
        defer { harness.folder.remove() }
        let store = try a.store(doc)
        defer { store.close() }
        let commit = try appendSave(a, store, " two")
        let ahead = try #require(commit.writeAhead)
        // The outbox changed since the file was written (as a log resealed in a signed container
        // does): the file written ahead is dropped, the outbox's bytes are written.
        #expect(ahead.take(Data("other".utf8)) == nil)
        let written = try a.replicator.flush(doc, in: store, after: commit)
        #expect(written.count == 1)
        #expect(try b(harness).importPending(doc).imported.count == 2)
        #expect(logFolderNames(a, harness) == ["0000000000000001.log", "0000000000000002.log"])
    }

    /// A new document's first log, written while its info file is: into the folder made
    /// ahead (taken first), and in place only after the info file.
    @Test func aNewDocumentsFirstLogIsWrittenIntoTheFolderMadeAhead() throws {
        let harness = try SyncHarness(.sqlite)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2)
        try a.replicator.prepareDocumentFolder()
        let spare = a.replicator.container.spareDocumentDirectory(device: a.identity.id)
        let spareInode = try #require(try FileManager.default.attributesOfItem(atPath: spare.path)[.systemFileNumber] as? UInt64)
        let store = try a.store(doc)
        defer { store.close() }
        let commit = try a.replicator.commit([
            .insert(ObjectID("text-\(doc)"), entity: Entity.textEntry, attributes: ["text": .string("first")]),
        ], document: doc, to: store, ship: true)
        let info = DocumentInfo(
            document: doc, name: try DocumentName("Ahead"), createdBy: a.identity.id, createdByName: a.identity.name, createdAt: harness.clock.now(), store: .sqlite)
        var published = commit
        published.writeAhead = try a.replicator.publish(info, store: store, baseline: false, writingAhead: commit)
        #expect(published.writeAhead != nil)
        let folder = a.replicator.container.documentDirectory(doc)
        #expect(try FileManager.default.attributesOfItem(atPath: folder.path)[.systemFileNumber] as? UInt64 == spareInode, "the folder made ahead is the document's")
        #expect(a.replicator.container.isPublished(doc, by: a.identity.id))
        #expect(!a.replicator.container.hasLog(doc, device: a.identity.id, sequence: 1), "the log waits for the flush")
        try a.replicator.flush(doc, in: store, after: published)
        #expect(logFolderNames(a, harness) == ["0000000000000001.log"])
        #expect(try b(harness).importPending(doc).imported.count == 1)
        #expect(try b(harness).text(doc) == "first")
    }

    func b(_ harness: SyncHarness) -> SyncDevice { harness.device(2, "B", format: format2) }
}

/// A store whose commits fail after their body ran: the save's transaction is rolled back.
final class RefusingCommitStore: DocumentStore {
    let inner: any DocumentStore
    init(_ inner: any DocumentStore) { self.inner = inner }
    var kind: StoreKind { inner.kind }
    var url: URL { inner.url }
    func read() throws(StoreError) -> StoreContents { try inner.read() }
    func write<T>(durable: Bool, _ body: (inout StoreContents) throws -> T) throws -> T {
        var contents = try inner.read()
        _ = try body(&contents)
        throw StoreError(.writeFailed, path: url.path, detail: "the disk is full")
    }
    func sync() throws(StoreError) { try inner.sync() }
    func close() { inner.close() }
}
