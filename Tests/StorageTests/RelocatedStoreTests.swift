import Foundation
import Model
@testable import Storage
import Testing
import TestSupport

/// An open SQLite store carried across a rename of its folder (the engine's spare stores are
/// made and opened ahead, then renamed into a document's folder).
@Suite struct RelocatedStoreTests {
    static func change(_ id: String, _ text: String) -> Change {
        .insert(ObjectID(id), entity: "TextEntry", attributes: ["text": .string(text)])
    }

    @Test func aWriteAheadLogStoreWorksOnUnderItsNewNameAndSharesItWithOthers() throws {
        let folder = try TemporaryDirectory("relocated")
        defer { folder.remove() }
        let before = folder.appending("spare")
        try FileManager.default.createDirectory(at: before, withIntermediateDirectories: true)
        let held = try SQLiteDocumentStore(url: before.appendingPathComponent("store.sqlite"), options: StoreOptions(), create: true)
        _ = try held.read()
        let after = folder.appending("document")
        try FileManager.default.moveItem(at: before, to: after)
        let url = after.appendingPathComponent("store.sqlite")
        let moved = try #require(held.relocated(to: url))
        #expect(moved.url == url)
        #expect(throws: StoreError.self) { try held.read() }

        // Never written: its first unsynced commit is a new log's, as in a store made here.
        try moved.write(durable: false) { $0.graph.apply([Self.change("a", "one")]) }
        #expect((moved as? SQLiteDocumentStore)?.lastCommitLevel == "OFF")
        // Another connection under the new name sees it, and the moved one sees its commits.
        let other = try SQLiteDocumentStore(url: url, options: StoreOptions(), create: false)
        #expect(try other.read().graph.objects[ObjectID("a")] != nil)
        try other.write(durable: true) { $0.graph.apply([Self.change("b", "two")]) }
        #expect(try moved.read().graph.objects[ObjectID("b")] != nil)
        try moved.write(durable: true) { $0.graph.apply([Self.change("c", "three")]) }
        #expect(try other.read().graph.objects[ObjectID("c")] != nil)
        other.close()
        moved.close()
        #expect(!FileManager.default.fileExists(atPath: before.path), "nothing is made under the old name")

        let reopened = try SQLiteDocumentStore(url: url, options: StoreOptions(), create: false)
        defer { reopened.close() }
        #expect(Set(try reopened.read().graph.objects.keys) == [ObjectID("a"), ObjectID("b"), ObjectID("c")])
    }

    @Test func aRollbackJournalStoreIsNotCarried() throws {
        let folder = try TemporaryDirectory("relocated")
        defer { folder.remove() }
        let store = try SQLiteDocumentStore(url: folder.appending("store.sqlite"), options: StoreOptions(journalMode: .rollback), create: true)
        defer { store.close() }
        #expect(store.relocated(to: folder.appending("elsewhere.sqlite")) == nil)
        #expect(try store.read().graph.objects.isEmpty, "left open and usable")
    }
}
