import Foundation
import GRDB
import Model
import Storage
import Testing
import TestSupport

/// A text's history as each backend keeps it: every field back as written, entries an older
/// store wrote as JSON still read, and a damaged entry reported, not trapped on.
@Suite struct HistoryRowTests {
    static let device = DeviceID(UUID(uuidString: "aaaaaaaa-0000-4000-8000-000000000001") ?? UUID())

    static func entries() -> [TextSave] {
        [
            TextSave(
                id: 1, object: ObjectID("t1"), attribute: "text", device: device, deviceName: "Mac de Zoé", sequence: 0,
                committedAt: Date(timeIntervalSinceReferenceDate: 786_000_000.123_456_7), added: 12, removed: 0,
                undo: [TextUndo(at: 0, length: 12, text: "")]),
            TextSave(
                id: 7, object: ObjectID("t1"), attribute: "text", device: device, deviceName: "B", sequence: 1_234_567_890_123,
                committedAt: Date(timeIntervalSince1970: -1.5), added: 3, removed: 4,
                undo: [TextUndo(at: 9, length: 1, text: "日本🎉"), TextUndo(at: 2, length: 2, text: "héllo\nthere")]),
        ]
    }

    @Test(arguments: Backend.allCases)
    func everyFieldOfEveryEntryComesBack(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        try store.write { $0.sync.history = Self.entries() }
        #expect(try store.read().sync.history == Self.entries())
        store.close()
        let reopened = try backend.open(folder, create: false)
        defer { reopened.close() }
        #expect(try reopened.read().sync.history == Self.entries())
    }

    /// Stores written before entries were kept in their binary form hold them as JSON.
    @Test(arguments: [Backend.sqliteRollback, .sqliteWAL])
    func entriesWrittenAsJSONStillRead(backend: Backend) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try backend.open(folder)
        try store.write { $0.sync.values["name"] = "Old" }
        store.close()
        let queue = try DatabaseQueue(path: folder.appending("store.sqlite").path)
        try queue.write { db in
            for entry in Self.entries() {
                try db.execute(sql: "INSERT INTO history (id, entry) VALUES (?, ?)", arguments: [Int64(entry.id), try JSONEncoder().encode(entry)])
            }
        }
        try queue.close()
        let reopened = try backend.open(folder, create: false)
        #expect(try reopened.read().sync.history == Self.entries())
        // A save after it keeps the old entries and adds the new one in the new form.
        var later = Self.entries()[1]
        later.id = 8
        try reopened.write { $0.sync.history.append(later) }
        #expect(try reopened.read().sync.history == Self.entries() + [later])
        reopened.close()
        let again = try backend.open(folder, create: false)
        #expect(try again.read().sync.history == Self.entries() + [later])
        again.close()
        let check = try DatabaseQueue(path: folder.appending("store.sqlite").path)
        let firstBytes = try check.read { db in try Data.fetchAll(db, sql: "SELECT entry FROM history ORDER BY id").map(\.first) }
        try check.close()
        #expect(firstBytes == [UInt8(ascii: "{"), UInt8(ascii: "{"), 1])
    }

    /// A store from before the binary form (its history in JSON, migration "v6" not run) is
    /// migrated on open: every entry in the binary form, the same entries read back.
    @Test func aStoreWithJSONHistoryIsMigratedToTheBinaryForm() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.sqliteWAL.open(folder)
        try store.write { $0.sync.values["name"] = "Old" }
        store.close()
        let path = folder.appending("store.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v6'")
            for entry in Self.entries() {
                try db.execute(sql: "INSERT INTO history (id, entry) VALUES (?, ?)", arguments: [Int64(entry.id), try JSONEncoder().encode(entry)])
            }
        }
        try queue.close()
        let migrated = try Backend.sqliteWAL.open(folder, create: false)
        #expect(try migrated.read().sync.history == Self.entries())
        migrated.close()
        let check = try DatabaseQueue(path: path)
        let firstBytes = try check.read { db in try Data.fetchAll(db, sql: "SELECT entry FROM history ORDER BY id").map(\.first) }
        try check.close()
        #expect(firstBytes == [1, 1])
    }

    @Test(arguments: [
        "X'01'", "X'01FFFFFFFFFFFFFFFFFFFF01'", "substr(entry, 1, length(entry) - 2)", "CAST(entry || X'00' AS BLOB)", "X'7B7D'",
    ])
    func aDamagedEntryIsCorruptNotACrash(damage: String) throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let store = try Backend.sqliteWAL.open(folder)
        try store.write { $0.sync.history = Self.entries() }
        store.close()
        let queue = try DatabaseQueue(path: folder.appending("store.sqlite").path)
        try queue.write { db in try db.execute(sql: "UPDATE history SET entry = \(damage) WHERE id = 7") }
        try queue.close()
        let damaged = try Backend.sqliteWAL.open(folder, create: false)
        defer { damaged.close() }
        let error = #expect(throws: StoreError.self) { try damaged.read() }
        #expect(error?.kind == .corrupt)
        #expect(error?.description.contains("history.entry 7") == true, "\(error?.description ?? "")")
    }
}
