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
