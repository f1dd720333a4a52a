#if canImport(Glibc)
import Glibc
#endif
import CSQLiteConfig
import FileIO
import Foundation
import GRDB
import Model
import Synchronization

extension SQLiteDocumentStore {
    /// After this many commits, ``checkpointIfDue()`` checkpoints. SQLite's own checkpoint
    /// (every 1,000 pages of write-ahead log) runs inside the commit that crosses the line,
    /// copying the pages into the store file and syncing both while an edit waits (12 ms once
    /// every 60 or so pings); 64 small commits stay well under it, so a process that calls
    /// ``checkpointIfDue()`` when an edit is done leaves the automatic one to large commits,
    /// and a process that never calls it (a command) keeps it.
    public static let checkpointEvery = 64

    /// Queues a passive checkpoint on the store's connection when ``checkpointEvery`` commits
    /// were made since the last one, and returns at once: the store's next read or write waits
    /// for it (a store closed meanwhile turns it into an error that is ignored).
    public func checkpointIfDue() {
        let compactionDue = appendedTextRows.withLock { $0 >= Self.compactEvery }
        let due = commitsSinceCheckpoint.withLock { count -> Bool in
            guard count >= Self.checkpointEvery else { return false }
            count = 0
            return true
        }
        guard due || compactionDue, !isClosed.withLock({ $0 }) else { return }
        queue.asyncWriteWithoutTransaction { db in
            if compactionDue { _ = try? self.compactTexts(db) }
            guard due, (try? self.restoreSyncingLevel(db)) != nil else { return }
            guard let done = try? db.checkpoint(.passive), done.walFrameCount > 0, done.checkpointedFrameCount == done.walFrameCount else { return }
            _ = try? self.restartWriteAheadLog(db)
        }
    }

    /// Starts the write-ahead log over, right after a checkpoint that copied all of it into the
    /// store file: the first commit into a log started over writes its header and syncs it
    /// (at any level but OFF; frames of the old generation must never pass for new ones), two
    /// syncs that would otherwise land on the next save, or on the next import of a peer's
    /// edit. One write of the schema's version, unchanged, does it here instead, off their way
    /// (at NORMAL: the header is synced, and the commit, which changes nothing, need not be).
    private func restartWriteAheadLog(_ db: Database) throws {
        if connectionSynchronous.withLock({ $0 }) == "FULL" {
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            connectionSynchronous.withLock { $0 = "NORMAL" }
        }
        let version = try Int32.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        try db.execute(sql: "PRAGMA user_version = \(version)")
    }

    /// After this many rows of text operations, ``checkpointIfDue()`` writes the texts' states
    /// again (``compact()``): a save appends its operations, and opening a store reads each
    /// text's state and the rows after it.
    public static let compactEvery = 128

    /// Writes the state of every text with appended operations and drops those rows, in one
    /// durable transaction; the contents do not change. Housekeeping, off a save's path
    /// (``checkpointIfDue()`` runs it when due); a crash at any point leaves either the old
    /// state and its rows or the new state.
    public func compact() throws(StoreError) {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        do {
            try queue.writeWithoutTransaction { db in _ = try self.compactTexts(db) }
        } catch {
            throw Self.map(error, path: url.path)
        }
    }

    private func compactTexts(_ db: Database) throws -> Int {
        try restoreSyncingLevel(db)
        if connectionSynchronous.withLock({ $0 }) != synchronous {
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            connectionSynchronous.withLock { $0 = synchronous }
        }
        var rewritten = 0
        try db.inTransaction(.immediate) {
            let (_, contents) = try self.current(db)
            rewritten = try SQLiteSchema.compactTexts(contents, in: db)
            return .commit
        }
        appendedTextRows.withLock { $0 = 0 }
        return rewritten
    }

    /// A checkpoint syncs only at NORMAL or above: the connection leaves OFF (a store's first
    /// commit) before one runs.
    private func restoreSyncingLevel(_ db: Database) throws {
        guard connectionSynchronous.withLock({ $0 }) == "OFF", synchronous != "OFF" else { return }
        try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
        connectionSynchronous.withLock { $0 = synchronous }
    }

    /// The connection's `synchronous` level (0 OFF, 1 NORMAL, 2 FULL) and automatic checkpoint
    /// threshold, as SQLite reports them (for tests).
    func connectionSettings() throws -> (synchronous: Int, automaticCheckpoint: Int) {
        try queue.inDatabase { db in
            (try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1, try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? -1)
        }
    }

    /// A checkpoint in FULL mode syncs the write-ahead log (every commit in it) and the file.
    public func sync() throws(StoreError) {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        do {
            try queue.writeWithoutTransaction { db in
                if journalMode == .wal {
                    try restoreSyncingLevel(db)
                    try db.execute(sql: "PRAGMA wal_checkpoint(FULL)")
                }
            }
        } catch {
            throw Self.map(error, path: url.path)
        }
    }
}
