#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Model
import Storage
import Testing
import TestSupport
import Text

/// The appended text store (Docs/STORAGE.md, "Texts in place" and "JSON backend") on every
/// backend that has a tail to lose: a save appends what changed, and what a crash, a torn
/// tail or a power loss leaves opens at a committed state that never lacks an acknowledged
/// save.
@Suite(.offThePool) struct AppendedTextConformanceTests {
    private let object = ObjectID("t1")
    private let agent = Agent(high: 3, low: 4)
    private static let start = "a text that grows by one character a save"

    /// Saves that each append one character at the end, numbered from `start`.
    private func append(_ store: any DocumentStore, saves: Range<Int>, durable: Bool = true) throws {
        for index in saves {
            try store.write(durable: durable) { contents in
                if contents.sync.texts[object]?["text"] == nil {
                    var sequence = TextSequence()
                    _ = try sequence.insert(Self.start, at: 0, by: agent)
                    contents.sync.texts[object] = ["text": sequence]
                    contents.graph.objects[object] = ObjectRecord(entity: Entity.textEntry, attributes: ["text": .string(sequence.text)])
                }
                guard var scratch = contents.sync.texts[object]?["text"] else { return }
                let operation = try scratch.insert("\(index % 10)", at: scratch.count, by: agent)
                let (changes, count) = contents.applyText([operation], object: object, attribute: "text") { TextSequence() }
                let old = contents.graph.objects[object]?.attributes["text"]?.stringValue ?? ""
                contents.graph.objects[object]?.attributes["text"] = TextChange.applying(changes, to: old, count: count).map(AttributeValue.string)
                contents.graph.objects[object]?.attributes["n"] = .int(Int64(index + 1))
            }
        }
    }

    /// The number of saves `contents` holds, after checking that its text, its sequence and its
    /// counter agree.
    private func saves(in contents: StoreContents) throws -> Int {
        let sequence = try #require(contents.sync.texts[object]?["text"])
        let saves = Int(try #require(contents.graph.objects[object]?.attributes["n"]?.intValue))
        #expect(contents.graph.objects[object]?.attributes["text"] == .string(sequence.text))
        #expect(sequence.count == Self.start.unicodeScalars.count + saves)
        let digits = String((0..<saves).map { Character("\($0 % 10)") })
        #expect(sequence.text == Self.start + digits)
        return saves
    }

    /// The file a commit's tail goes to: the JSON store's journal, SQLite's write-ahead log.
    private func tail(_ backend: Backend, _ folder: TemporaryDirectory) -> URL {
        let store = folder.appending(backend.kind.fileName)
        return backend == .json ? JSONDocumentStore.journalURL(for: store) : URL(fileURLWithPath: store.path + "-wal")
    }

    private func size(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
    }

    /// A commit cut short mid-append (a crash or power loss while its bytes were written, so it
    /// never returned): the store opens at the commit before it, and the next save goes after
    /// that one, not after the torn bytes.
    @Test(arguments: [Backend.sqliteWAL, .json])
    func aTornTailOpensAtTheCommitBeforeIt(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        try append(store, saves: 0..<10)
        store.close()
        let tail = tail(backend, folder)
        let handle = try #require(FileHandle(forWritingAtPath: tail.path))
        try handle.truncate(atOffset: UInt64(try size(tail) - 3))
        try handle.close()
        let reopened = try backend.open(folder, create: false)
        #expect(try saves(in: try reopened.read()) == 9)
        try append(reopened, saves: 9..<12)
        reopened.close()
        let again = try backend.open(folder, create: false)
        defer { again.close() }
        #expect(try saves(in: try again.read()) == 12)
    }

    /// A power loss after durable saves and unsynced ones: whatever of the unsynced bytes it
    /// leaves (here: garbage where they were), every durable save is there and the state is
    /// one that was committed.
    @Test(arguments: [Backend.sqliteWAL, .json])
    func aPowerLossKeepsEveryDurableSave(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        try append(store, saves: 0..<6)
        let tail = tail(backend, folder)
        let synced = try size(tail)
        try append(store, saves: 6..<12, durable: false)
        store.close()
        let end = try size(tail)
        #expect(end > synced)
        var generator = SeededGenerator(seed: 37)
        let handle = try #require(FileHandle(forWritingAtPath: tail.path))
        try handle.seek(toOffset: UInt64(synced))
        try handle.write(contentsOf: Data((synced..<end).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        try handle.close()
        let reopened = try backend.open(folder, create: false)
        defer { reopened.close() }
        let kept = try saves(in: try reopened.read())
        #expect((6...12).contains(kept))
    }

    /// Saves append to the tail and leave the snapshot alone; compaction folds them into a new
    /// snapshot and empties the journal, and nothing changes for a reader.
    @Test func aJSONSaveAppendsAFrameAndCompactionFoldsThem() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.json.open(folder)
        defer { store.close() }
        try append(store, saves: 0..<1)
        try store.compact()
        let snapshot = folder.appending(StoreKind.json.fileName)
        let snapshotSize = try size(snapshot)
        let journal = JSONDocumentStore.journalURL(for: snapshot)
        try append(store, saves: 1..<21)
        #expect(try size(snapshot) == snapshotSize)
        #expect(try size(journal) < 20 * 1_024)
        let written = try store.read()
        store.checkpointIfDue()
        #expect(try size(journal) > 0, "not due after 20 saves")
        try store.compact()
        #expect(try size(journal) == 0)
        #expect(try store.read() == written)
        let other = try Backend.json.open(folder, create: false)
        defer { other.close() }
        #expect(try other.read() == written)
        #expect(try saves(in: written) == 21)
    }

    /// Another process's saves reach this store object by the journal alone.
    @Test func aJSONStoreSeesWhatAnotherConnectionAppended() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let first = try Backend.json.open(folder)
        defer { first.close() }
        let second = try Backend.json.open(folder, create: false)
        defer { second.close() }
        try append(first, saves: 0..<3)
        #expect(try saves(in: try second.read()) == 3)
        try append(second, saves: 3..<5)
        try append(first, saves: 5..<6)
        try second.compact()
        try append(first, saves: 6..<8)
        #expect(try saves(in: try second.read()) == 8)
        #expect(try second.read() == (try first.read()))
    }

    /// A snapshot written by a build without the journal (no `journalThrough`, no journal file)
    /// opens as it was and takes appended saves.
    @Test func aJSONStoreWithoutAJournalOpens() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.json.open(folder)
        try append(store, saves: 0..<4)
        try store.compact()
        store.close()
        let snapshot = folder.appending(StoreKind.json.fileName)
        try FileManager.default.removeItem(at: JSONDocumentStore.journalURL(for: snapshot))
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: snapshot)) as? [String: Any])
        object["journalThrough"] = nil
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]).write(to: snapshot)
        let reopened = try Backend.json.open(folder, create: false)
        #expect(try saves(in: try reopened.read()) == 4)
        try append(reopened, saves: 4..<6)
        reopened.close()
        let again = try Backend.json.open(folder, create: false)
        defer { again.close() }
        #expect(try saves(in: try again.read()) == 6)
    }

    /// A damaged frame that is not the tail's (whole, checksum right, not a commit) is reported
    /// naming the journal, not skipped.
    @Test func aJSONFrameThatIsNotACommitIsCorrupt() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.json.open(folder)
        try append(store, saves: 0..<2)
        store.close()
        let journal = JSONDocumentStore.journalURL(for: folder.appending(StoreKind.json.fileName))
        let payload = Data("{\"sequence\": \"three\"}".utf8)
        var frame = Data()
        withUnsafeBytes(of: UInt32(payload.count).littleEndian) { frame.append(contentsOf: $0) }
        withUnsafeBytes(of: crc32(payload).littleEndian) { frame.append(contentsOf: $0) }
        let handle = try #require(FileHandle(forWritingAtPath: journal.path))
        try handle.seekToEnd()
        try handle.write(contentsOf: frame + payload)
        try handle.close()
        let error = #expect(throws: StoreError.self) { try Backend.json.open(folder, create: false) }
        #expect(error?.kind == .corrupt)
        #expect(error?.description.contains(".journal") == true, "\(error?.description ?? "")")
    }

    private func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// A process appending to a text and compacting, killed at random moments: each time, the
    /// store opens with its text, its sequence and its counter in agreement, and never behind
    /// a commit an earlier kill left.
    @Test(arguments: Backend.allCases)
    func aProcessKilledMidAppendOrCompactionLeavesACommittedState(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let path = folder.appending(backend.kind.fileName)
        var generator = SeededGenerator(seed: 3_700)
        var last = 0
        for _ in 0..<15 {
            let child = try StressProcess(backend: backend, path: path, text: true)
            try child.waitUntilReady()
            usleep(UInt32.random(in: 0...30_000, using: &generator))
            child.kill()
            let store = try backend.open(folder, create: false)
            let contents = try store.read()
            store.close()
            let applied = Int(contents.sync.applied[StressProcess.device] ?? 0)
            let text = contents.sync.texts[ObjectID("text")]?["text"]
            #expect(text?.count == applied, "the text holds one character per commit")
            #expect(contents.graph.objects[ObjectID("text")]?.attributes["text"] == text.map { .string($0.text) })
            #expect(contents.graph.objects[ObjectID("counter")]?.attributes["value"]?.intValue == Int64(applied))
            #expect(applied > last, "commits survive and never go backwards")
            last = applied
        }
    }
}
