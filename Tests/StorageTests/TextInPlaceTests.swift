import Foundation
import GRDB
import Model
import Storage
import Testing
import TestSupport
import Text

/// Texts whose saves append their operations (Docs/STORAGE.md, "Texts in place"), on every
/// backend: what a save appended comes back after a reopen, a compaction, a crash between the
/// two, and a torn write-ahead log.
@Suite struct TextInPlaceTests {
    private let object = ObjectID("t1")
    private let agent = Agent(high: 7, low: 9)

    /// A store holding one text entry whose text is a sequence, then `saves` saves each appending
    /// one character through ``StoreContents/applyText(_:object:attribute:seed:)``.
    private func fill(_ store: any DocumentStore, saves: Int, start: Int = 0) throws {
        if start == 0 {
            try store.write { contents in
                var sequence = TextSequence()
                _ = try sequence.insert("héllo wörld, a long text", at: 0, by: agent)
                contents.sync.texts[object] = ["text": sequence]
                contents.graph.objects[object] = ObjectRecord(entity: Entity.textEntry, attributes: ["text": .string(sequence.text), "n": .int(0)])
            }
        }
        for index in start..<(start + saves) {
            try store.write { contents in
                guard let sequence = contents.sync.texts[object]?["text"] else { return }
                var scratch = sequence
                let operation = try scratch.insert("\(index % 10)", at: index % max(1, sequence.count), by: agent)
                let (changes, count) = contents.applyText([operation], object: object, attribute: "text") { TextSequence() }
                let old = contents.graph.objects[object]?.attributes["text"]?.stringValue ?? ""
                contents.graph.objects[object]?.attributes["text"] = TextChange.applying(changes, to: old, count: count).map(AttributeValue.string)
                contents.graph.objects[object]?.attributes["n"] = .int(Int64(index + 1))
            }
        }
    }

    private func expectConsistent(_ contents: StoreContents, saves: Int) throws {
        let sequence = try #require(contents.sync.texts[object]?["text"])
        #expect(contents.graph.objects[object]?.attributes["text"] == .string(sequence.text))
        #expect(contents.graph.objects[object]?.attributes["n"] == .int(Int64(saves)))
        #expect(sequence.count == "héllo wörld, a long text".unicodeScalars.count + saves)
    }

    @Test(arguments: Backend.allCases)
    func appendedSavesComeBackAfterAReopen(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        try fill(store, saves: 20)
        let written = try store.read()
        try expectConsistent(written, saves: 20)
        store.close()
        let reopened = try backend.open(folder, create: false)
        defer { reopened.close() }
        #expect(try reopened.read() == written)
    }

    @Test(arguments: Backend.allCases)
    func compactionKeepsTheContents(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        try fill(store, saves: 10)
        try store.compact()
        try fill(store, saves: 5, start: 10)
        let written = try store.read()
        try expectConsistent(written, saves: 15)
        store.close()
        let reopened = try backend.open(folder, create: false)
        #expect(try reopened.read() == written)
        try reopened.compact()
        reopened.close()
        let again = try backend.open(folder, create: false)
        defer { again.close() }
        #expect(try again.read() == written)
    }

    /// A process that appended and died before compacting (its store never closed): another
    /// opens the state and every appended save.
    @Test(arguments: Backend.allCases)
    func aCrashBetweenAppendsAndCompactionLosesNothing(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let crashed = try backend.open(folder)
        try fill(crashed, saves: SQLiteDocumentStore.compactEvery + 3)
        let written = try crashed.read()
        // Due, but never run: the process is gone.
        let other = try backend.open(folder, create: false)
        defer { other.close() }
        #expect(try other.read() == written)
        try other.compact()
        #expect(try other.read() == written)
        #expect(try crashed.read() == written)
    }

    /// A write-ahead log cut short (a power loss mid-write): the store opens at a committed
    /// state whose text and appended operations agree.
    @Test func aTornWriteAheadLogOpensAtACommittedState() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.sqliteWAL.open(folder)
        try fill(store, saves: 12)
        store.close()
        let wal = folder.appending("store.sqlite").path + "-wal"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int)
        #expect(size > 4_096)
        let handle = try #require(FileHandle(forWritingAtPath: wal))
        try handle.truncate(atOffset: UInt64(size - 1_000))
        try handle.close()
        let reopened = try Backend.sqliteWAL.open(folder, create: false)
        defer { reopened.close() }
        let contents = try reopened.read()
        let saves = try #require(contents.graph.objects[object]?.attributes["n"]?.intValue)
        #expect(saves < 12)
        try expectConsistent(contents, saves: Int(saves))
    }

    /// A save writes its operations, not the text: the row of the text's state is written once,
    /// and each save adds one small row.
    @Test func aSaveAppendsARowAndLeavesTheStateAlone() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.sqliteWAL.open(folder)
        try fill(store, saves: 5)
        store.close()
        let queue = try DatabaseQueue(path: folder.appending("store.sqlite").path)
        defer { try? queue.close() }
        let (rows, largest) = try queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM text_operations") ?? 0,
             try Int.fetchOne(db, sql: "SELECT max(length(operations)) FROM text_operations") ?? 0)
        }
        #expect(rows == 5)
        #expect(largest < 64)
    }

    /// A paste that outweighs the text it goes into writes the text's state instead of a row
    /// that every later open would replay; the small save after it appends again.
    @Test func aLongPasteWritesTheStateAndASmallSaveAppendsAgain() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.sqliteWAL.open(folder)
        try fill(store, saves: 2)
        let paste = String(repeating: "pasted ", count: 2_000)
        try store.write { contents in
            guard var scratch = contents.sync.texts[object]?["text"] else { return }
            let operation = try scratch.insert(paste, at: 3, by: agent)
            let (changes, count) = contents.applyText([operation], object: object, attribute: "text") { TextSequence() }
            let old = contents.graph.objects[object]?.attributes["text"]?.stringValue ?? ""
            contents.graph.objects[object]?.attributes["text"] = TextChange.applying(changes, to: old, count: count).map(AttributeValue.string)
        }
        func rows() throws -> Int {
            let queue = try DatabaseQueue(path: folder.appending("store.sqlite").path)
            defer { try? queue.close() }
            return try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM text_operations") ?? 0 }
        }
        #expect(try rows() == 0)
        try fill(store, saves: 1, start: 2)
        #expect(try rows() == 1)
        let written = try store.read()
        store.close()
        let reopened = try Backend.sqliteWAL.open(folder, create: false)
        defer { reopened.close() }
        let contents = try reopened.read()
        #expect(contents == written)
        #expect(contents.sync.texts[object]?["text"]?.text.contains(paste) == true)
    }

    /// A damaged row of appended operations is reported, naming it, not a crash.
    @Test func aDamagedOperationsRowIsCorrupt() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.sqliteRollback.open(folder)
        try fill(store, saves: 2)
        store.close()
        let queue = try DatabaseQueue(path: folder.appending("store.sqlite").path)
        try queue.write { db in try db.execute(sql: "UPDATE text_operations SET operations = x'05FF' WHERE sequence = 2") }
        try queue.close()
        let reopened = try Backend.sqliteRollback.open(folder, create: false)
        defer { reopened.close() }
        let error = #expect(throws: StoreError.self) { try reopened.read() }
        #expect(error?.kind == .corrupt)
        #expect(error?.description.contains("text_operations of t1.text") == true, "\(error?.description ?? "")")
    }

    /// A long text's state (read by SQLite's blob reader) and a short one (read from the row)
    /// both open as they were written, and each damaged is reported naming it, not a crash:
    /// garbage of a long state's length, a short state stored as text.
    @Test func longAndShortStatesOpenAndTheirDamageIsNamed() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.sqliteRollback.open(folder)
        let long = String(repeating: "a long line of text, again and again.\n", count: 2_000)
        let short = ObjectID("t2")
        try store.write { contents in
            var sequence = TextSequence()
            _ = try sequence.insert(long, at: 0, by: agent)
            contents.sync.texts[object] = ["text": sequence]
            contents.graph.objects[object] = ObjectRecord(entity: Entity.textEntry, attributes: ["text": .string(long)])
            var small = TextSequence()
            _ = try small.insert("short", at: 0, by: agent)
            contents.sync.texts[short] = ["text": small]
            contents.graph.objects[short] = ObjectRecord(entity: Entity.textEntry, attributes: ["text": .string("short")])
        }
        store.close()
        let path = folder.appending("store.sqlite").path
        let queue = try DatabaseQueue(path: path)
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT length(state) FROM texts WHERE object_id = 't1'") } ?? 0 >= 64 * 1024)
        try queue.close()
        let reopened = try Backend.sqliteRollback.open(folder, create: false)
        let contents = try reopened.read()
        #expect(contents.sync.texts[object]?["text"]?.text == long)
        #expect(contents.sync.texts[short]?["text"]?.text == "short")
        reopened.close()

        for (damage, names) in [
            ("UPDATE texts SET state = zeroblob(length(state)) WHERE object_id = 't1'", "texts.state of t1.text"),
            ("UPDATE texts SET state = 'short' WHERE object_id = 't2'", "a blob"),
        ] {
            let copy = try TemporaryDirectory("store")
            defer { copy.remove() }
            try FileManager.default.copyItem(atPath: path, toPath: copy.appending("store.sqlite").path)
            let queue = try DatabaseQueue(path: copy.appending("store.sqlite").path)
            try queue.write { db in try db.execute(sql: damage) }
            try queue.close()
            let damaged = try Backend.sqliteRollback.open(copy, create: false)
            defer { damaged.close() }
            let error = #expect(throws: StoreError.self) { try damaged.read() }
            #expect(error?.kind == .corrupt, "\(damage): \(error?.description ?? "")")
            #expect(error?.description.contains(names) == true, "\(damage): \(error?.description ?? "")")
        }
    }

    /// A text long enough that a write's baseline leaves its string out (so an append changes
    /// it in place): the record's other attributes, a text that stops being a sequence and a
    /// removed object are all written, and what a reopen reads is what the writes left.
    @Test(arguments: Backend.allCases)
    func aLongTextsRecordIsWrittenWhenItsStringIsLeftOutOfTheBaseline(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        let long = String(repeating: "a long line of text, again and again.\n", count: 2_000)
        let other = ObjectID("t2"), short = ObjectID("t3")
        try store.write { contents in
            var sequence = TextSequence()
            _ = try sequence.insert(long, at: 0, by: agent)
            contents.sync.texts[object] = ["text": sequence]
            contents.graph.objects[object] = ObjectRecord(entity: Entity.textEntry, attributes: ["text": .string(sequence.text), "n": .int(0)])
            contents.sync.texts[other] = ["text": sequence]
            contents.graph.objects[other] = ObjectRecord(entity: Entity.textEntry, attributes: ["text": .string(sequence.text)])
            var small = TextSequence()
            _ = try small.insert("short", at: 0, by: agent)
            contents.sync.texts[short] = ["text": small]
            contents.graph.objects[short] = ObjectRecord(entity: Entity.textEntry, attributes: ["text": .string("short")])
        }
        #expect(long.utf8.count > 64 * 1024)
        // Appends at the end, each with a change of `n`; then `n` alone; then nothing.
        for index in 0..<5 {
            try store.write { contents in
                guard let sequence = contents.sync.texts[object]?["text"] else { return }
                var scratch = sequence
                let operation = try scratch.insert("\(index)", at: sequence.count, by: agent)
                let (changes, count) = contents.applyText([operation], object: object, attribute: "text") { TextSequence() }
                var text = contents.graph.objects[object]?.attributes["text"]?.stringValue ?? ""
                contents.graph.objects[object]?.attributes["text"] = nil
                #expect(TextChange.apply(changes, to: &text, count: count))
                contents.graph.objects[object]?.attributes["text"] = .string(text)
                contents.graph.objects[object]?.attributes["n"] = .int(Int64(index + 1))
            }
        }
        try store.write { contents in contents.graph.objects[object]?.attributes["n"] = .int(42) }
        try store.write { _ in }
        var expected = try store.read()
        #expect(expected.graph.objects[object]?.attributes["n"] == .int(42))
        #expect(expected.graph.objects[object]?.attributes["text"] == .string(long + "01234"))
        #expect(expected.sync.texts[object]?["text"]?.text == long + "01234")
        // The other texts stop being sequences: their strings are plain values from now on.
        try store.write { contents in
            contents.sync.texts[other] = nil
            contents.sync.texts[short] = nil
        }
        expected = try store.read()
        #expect(expected.sync.texts[other] == nil && expected.sync.texts[short] == nil)
        #expect(expected.graph.objects[other]?.attributes["text"] == .string(long))
        #expect(expected.graph.objects[short]?.attributes["text"] == .string("short"))
        store.close()
        var reopened = try backend.open(folder, create: false)
        #expect(try reopened.read() == expected)
        // The long text's object removed.
        try reopened.write { contents in
            contents.graph.objects[object] = nil
            contents.sync.texts[object] = nil
        }
        expected = try reopened.read()
        #expect(expected.graph.objects[object] == nil)
        reopened.close()
        reopened = try backend.open(folder, create: false)
        defer { reopened.close() }
        #expect(try reopened.read() == expected)
    }
}
