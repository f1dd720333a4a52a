import Foundation
import Model
import Storage
import Testing
import TestSupport

/// A write whose body notes the objects it changes (``DocumentStore/write(durable:notingObjects:_:)``,
/// what an import runs): every backend keeps exactly what the body did, and a store that takes
/// the notes writes those objects' rows and no other.
@Suite struct NotedObjectsTests {
    private static let device = DeviceID(UUID(uuidString: "aaaaaaaa-0000-4000-8000-000000000001") ?? UUID())

    private static func stamp(_ wall: UInt64) -> Stamp { Stamp(wall: wall, counter: 0, device: device) }

    /// A few hundred rows, so that a walk of every object is not the same as the noted few.
    private static func manyRows() -> StoreContents {
        var contents = StoreContents()
        for index in 0..<300 {
            let id = ObjectID(String(format: "row-%04d", index))
            contents.graph.objects[id] = ObjectRecord(entity: "Row", attributes: ["n": .int(Int64(index)), "label": .string("row \(index)")])
            contents.sync.stamps[id] = ["n": stamp(1), "label": stamp(1)]
        }
        contents.sync.applied = [device: 1]
        return contents
    }

    /// A new store of `backend` in a folder of its own, holding ``manyRows()``.
    private static func storeWithManyRows(_ backend: Backend) throws -> (folder: TemporaryDirectory, store: any DocumentStore) {
        let folder = try TemporaryDirectory("noted")
        let store = try backend.open(folder)
        try store.write { $0 = manyRows() }
        return (folder, store)
    }

    @Test(arguments: Backend.allCases)
    func whatANotingBodyDoesIsKeptAndReadBackWithoutNotes(backend: Backend) throws {
        let (folder, store) = try Self.storeWithManyRows(backend)
        defer { folder.remove() }

        try store.write(durable: false, notingObjects: true) { contents in
            let added = ObjectID("row-new")
            contents.graph.objects[added] = ObjectRecord(entity: "Row", attributes: ["n": .int(-1)])
            contents.sync.stamps[added] = ["n": Self.stamp(2)]
            contents.noteObject(added)
            let changed = ObjectID("row-0007")
            contents.graph.objects[changed]?.attributes["label"] = .string("seventh, changed")
            contents.sync.stamps[changed]?["label"] = Self.stamp(2)
            contents.noteObject(changed)
            let deleted = ObjectID("row-0123")
            contents.graph.objects[deleted] = nil
            contents.sync.stamps[deleted] = nil
            contents.sync.tombstones[deleted] = Self.stamp(2)
            contents.noteObject(deleted)
            // Not objects: compared as in any write.
            contents.sync.applied[Self.device] = 2
            contents.sync.values["name"] = "Noted"
        }

        var expected = Self.manyRows()
        expected.graph.objects[ObjectID("row-new")] = ObjectRecord(entity: "Row", attributes: ["n": .int(-1)])
        expected.sync.stamps[ObjectID("row-new")] = ["n": Self.stamp(2)]
        expected.graph.objects[ObjectID("row-0007")]?.attributes["label"] = .string("seventh, changed")
        expected.sync.stamps[ObjectID("row-0007")]?["label"] = Self.stamp(2)
        expected.graph.objects[ObjectID("row-0123")] = nil
        expected.sync.stamps[ObjectID("row-0123")] = nil
        expected.sync.tombstones[ObjectID("row-0123")] = Self.stamp(2)
        expected.sync.applied[Self.device] = 2
        expected.sync.values["name"] = "Noted"

        let read = try store.read()
        #expect(read == expected)
        #expect(read.objectJournal == nil)
        store.close()
        let reopened = try backend.open(folder, create: false)
        defer { reopened.close() }
        #expect(try reopened.read() == expected)
        // A plain write after a noting one compares every object again.
        try reopened.write { $0.graph.objects[ObjectID("row-0200")]?.attributes["n"] = .int(2000) }
        reopened.close()
        let again = try backend.open(folder, create: false)
        defer { again.close() }
        #expect(try again.read().graph.objects[ObjectID("row-0200")]?.attributes["n"] == .int(2000))
    }

    /// The SQLite store writes the noted rows only: a change the body made without noting it
    /// is not compared for, so it does not reach the file (the contract an import keeps by
    /// noting every object it touches). The JSON store writes the whole document and keeps it.
    @Test(arguments: Backend.allCases)
    func aSQLiteStoreWritesOnlyTheNotedRows(backend: Backend) throws {
        let (folder, store) = try Self.storeWithManyRows(backend)
        defer { folder.remove() }
        try store.write(durable: true, notingObjects: true) { contents in
            contents.graph.objects[ObjectID("row-0001")]?.attributes["n"] = .int(100)
            contents.noteObject(ObjectID("row-0001"))
            contents.graph.objects[ObjectID("row-0002")]?.attributes["n"] = .int(200)
        }
        store.close()
        let reopened = try backend.open(folder, create: false)
        defer { reopened.close() }
        let objects = try reopened.read().graph.objects
        #expect(objects[ObjectID("row-0001")]?.attributes["n"] == .int(100))
        #expect(objects[ObjectID("row-0002")]?.attributes["n"] == (backend.kind == .sqlite ? .int(2) : .int(200)))
    }
}
