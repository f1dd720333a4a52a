import Foundation
import Model
@testable import Storage
import Testing
import TestSupport

/// A store this process made from the template has no write-ahead log yet; its first commit
/// that need not be synced (a document's first import) syncs nothing, and every commit after it
/// is back at the level it asks for, with SQLite's automatic checkpoint on.
@Suite struct FirstCommitTests {
    /// A store made and then synced at once (`new` whose log could not ship): the checkpoint
    /// runs at the store's level, not at the first commit's OFF.
    @Test func syncAfterTheFirstCommitRunsAtTheStoresLevel() throws {
        let folder = try TemporaryDirectory("first-commit")
        defer { folder.remove() }
        let store = try SQLiteDocumentStore(url: folder.appending("store.sqlite"), options: StoreOptions(), create: true)
        defer { store.close() }
        try store.write(durable: false) { $0.graph.apply([Self.change]) }
        try store.sync()
        #expect(try store.connectionSettings().synchronous == 2)
    }

    static let change = Change.insert(ObjectID("entry"), entity: "TextEntry", attributes: ["text": .string("hello")])

    @Test func aNewStoresFirstUnsyncedCommitSyncsNothingAndTheNextAreAsAsked() throws {
        let folder = try TemporaryDirectory("first-commit")
        defer { folder.remove() }
        let store = try SQLiteDocumentStore(url: folder.appending("store.sqlite"), options: StoreOptions(), create: true)
        defer { store.close() }
        try store.write(durable: false) { $0.graph.apply([Self.change]) }
        #expect(store.lastCommitLevel == "OFF")
        // Right after it the connection syncs again (a checkpoint or `sync()` at OFF would
        // sync nothing), with SQLite's automatic checkpoint back on.
        #expect(try store.connectionSettings() == (2, SQLiteDocumentStore.automaticCheckpointPages))
        try store.write(durable: false) { $0.sync.values["k"] = "1" }
        #expect(store.lastCommitLevel == "NORMAL")
        try store.write(durable: true) { $0.sync.values["k"] = "2" }
        #expect(store.lastCommitLevel == "FULL")
        try store.write(durable: false) { $0.sync.values["k"] = "3" }
        #expect(store.lastCommitLevel == "NORMAL")
        #expect(try store.connectionSettings() == (1, SQLiteDocumentStore.automaticCheckpointPages))
        #expect(try store.read().graph.objects[ObjectID("entry")]?.attributes["text"] == .string("hello"))

        // What was committed without a sync is there for the next process.
        store.close()
        let again = try SQLiteDocumentStore(url: folder.appending("store.sqlite"), options: StoreOptions(), create: false)
        defer { again.close() }
        #expect(try again.read().sync.values["k"] == "3")
        #expect(try again.read().graph.objects[ObjectID("entry")] != nil)
    }

    /// A spare: made, closed and moved by another process (the engine's spare stores). Never
    /// written, its first unsynced commit syncs nothing either; its write-ahead log was kept empty.
    @Test func aStoreMadeAheadAndMovedIsNewForItsFirstUnsyncedCommit() throws {
        let folder = try TemporaryDirectory("first-commit")
        defer { folder.remove() }
        let ahead = folder.appending("spare")
        try FileManager.default.createDirectory(at: ahead, withIntermediateDirectories: true)
        let made = try SQLiteDocumentStore(url: ahead.appendingPathComponent("store.sqlite"), options: StoreOptions(), create: true)
        made.close()
        let moved = folder.appending("document")
        try FileManager.default.moveItem(at: ahead, to: moved)
        let url = moved.appendingPathComponent("store.sqlite")
        #expect((try FileManager.default.attributesOfItem(atPath: url.path + "-wal")[.size] as? NSNumber)?.intValue == 0)
        let store = try SQLiteDocumentStore(url: url, options: StoreOptions(), create: true)
        try store.write(durable: false) { $0.graph.apply([Self.change]) }
        #expect(store.lastCommitLevel == "OFF")
        try store.write(durable: false) { $0.sync.values["k"] = "1" }
        #expect(store.lastCommitLevel == "NORMAL")
        try store.sync()
        store.close()
        // The checkpoint copied every commit into the store file: without its write-ahead log
        // it is whole, and written, which its generation says.
        for suffix in ["-wal", "-shm"] { try FileManager.default.removeItem(atPath: url.path + suffix) }
        let again = try SQLiteDocumentStore(url: url, options: StoreOptions(), create: false)
        defer { again.close() }
        #expect(try again.read().graph.objects[ObjectID("entry")] != nil)
        try again.write(durable: false) { $0.sync.values["k"] = "2" }
        #expect(again.lastCommitLevel == "NORMAL", "written before: not in the template's state")
    }

    @Test func aStoreThatHasALogOrWasOpenedKeepsNormalForItsFirstUnsyncedCommit() throws {
        let folder = try TemporaryDirectory("first-commit")
        defer { folder.remove() }
        let url = folder.appending("store.sqlite")
        let made = try SQLiteDocumentStore(url: url, options: StoreOptions(), create: true)
        // A synced first commit: the log exists now, and the next unsynced one is NORMAL.
        try made.write(durable: true) { $0.graph.apply([Self.change]) }
        try made.write(durable: false) { $0.sync.values["k"] = "1" }
        #expect(made.lastCommitLevel == "NORMAL")
        made.close()
        // Opened, not made: never OFF.
        let opened = try SQLiteDocumentStore(url: url, options: StoreOptions(), create: false)
        defer { opened.close() }
        try opened.write(durable: false) { $0.sync.values["k"] = "2" }
        #expect(opened.lastCommitLevel == "NORMAL")
    }
}
