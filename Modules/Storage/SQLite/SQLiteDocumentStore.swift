#if canImport(Glibc)
import Glibc
#endif
import CSQLiteConfig
import FileIO
import Foundation
import GRDB
import Model
import Synchronization

/// The SQLite backend (the default), on GRDB. One `DatabaseQueue` per store object; writers in
/// other processes are serialised by SQLite's locks (`BEGIN IMMEDIATE` plus a busy timeout).
///
/// Each commit bumps a `generation` value in the `meta` table; the contents are cached in memory
/// and reloaded only when another connection committed since, so a write to a large document
/// reads nothing and writes only the rows that changed.
public final class SQLiteDocumentStore: DocumentStore {
    public let kind = StoreKind.sqlite
    public let url: URL
    let queue: DatabaseQueue
    private let cache = Mutex<(generation: Int64, contents: StoreContents)?>(nil)
    let isClosed = Mutex(false)
    /// Commits since this store last asked for a checkpoint (``checkpointEvery``).
    let commitsSinceCheckpoint = Mutex(0)
    /// Rows of text operations appended since the texts' states were last written, as far as
    /// this object knows (``compactEvery``).
    let appendedTextRows = Mutex(0)
    let journalMode: JournalMode
    /// The store's `synchronous` setting: what a durable commit runs with.
    let synchronous: String
    /// The connection's `synchronous` setting now (a commit that need not be synced lowers it).
    let connectionSynchronous: Mutex<String>
    /// The store is in the template's state, never written (made here from the template, or made
    /// ahead and never committed to), and has no write-ahead log yet: its first commit that need
    /// not be synced syncs nothing (``write(durable:_:)``).
    private let writeAheadLogIsNew: Mutex<Bool>
    /// The `synchronous` level the last commit ran at (for tests).
    private let lastCommitLevelSeen = Mutex<String?>(nil)
    /// Logs ``dropShipped(_:)`` took out of the outbox that are still in the committed one:
    /// the next write of this object takes them out in its own transaction, and what it reads
    /// meanwhile leaves them out.
    private let shipped = Mutex<Set<UInt64>>([])
    /// A commit of ``shipped`` is scheduled (``dropShipped(_:)``).
    private let dropScheduled = Mutex(false)
    /// How long shipped logs may wait for the object's next write before a commit of their own
    /// takes them out: a process that stops saving does not leave them for another process of
    /// the device to ship again.
    static let shippedCommitDelay = DispatchTimeInterval.seconds(1)
    var lastCommitLevel: String? { lastCommitLevelSeen.withLock { $0 } }

    /// Paths this process has open as stores, with how many connections each. The header check
    /// reads the file through a descriptor of its own, and closing any descriptor of a file
    /// drops every POSIX lock the process holds on it — the locks SQLite's open connections
    /// rely on ("How To Corrupt An SQLite Database File", 2.2). A file this process already
    /// has open was checked when it was first opened, so it is not checked again.
    private static let openPaths = Mutex<[String: Int]>([:])

    private static func isOpenInThisProcess(_ path: String) -> Bool { openPaths.withLock { ($0[path] ?? 0) > 0 } }

    /// Opens (with `create`, creates) the store and migrates it to the current schema.
    /// - Throws: ``StoreError`` naming the file and the problem.
    public convenience init(url: URL, options: StoreOptions, create: Bool) throws(StoreError) {
        try self.init(url: url, options: options, create: create, useTemplate: true)
    }

    /// `durable`: commits reach the disk before they return (off only for the template).
    init(url: URL, options: StoreOptions, create: Bool, useTemplate: Bool, durable: Bool = true) throws(StoreError) {
        self.url = url
        let path = url.path
        if !FileManager.default.fileExists(atPath: path), !create { throw StoreError(.notFound, path: path) }
        // Creating and migrating happen under an exclusive lock, so a process that opens the
        // store while another creates it waits instead of migrating the same file twice.
        let openLock: FileLock
        do {
            try AtomicFile.makeDirectory(url.deletingLastPathComponent())
            openLock = try FileLock(url: URL(fileURLWithPath: path + ".lock"))
            try openLock.lock()
        } catch {
            throw StoreError(error.code == EACCES ? .unreadable : .writeFailed, path: path, detail: error.description)
        }
        defer { openLock.unlock() }
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists, !create { throw StoreError(.notFound, path: path) }
        if exists, !Self.isOpenInThisProcess(path) { try Self.checkHeader(path, pageCount: false) }
        var configuration = Configuration()
        let seconds = Double(options.busyTimeout.components.seconds) + Double(options.busyTimeout.components.attoseconds) / 1e18
        configuration.busyMode = .timeout(seconds)
        configuration.journalMode = .default
        let journal = options.journalMode
        let synchronous = durable ? "FULL" : "OFF"
        self.journalMode = journal
        self.synchronous = synchronous
        self.connectionSynchronous = Mutex(synchronous)
        var madeFromTemplate = false
        configuration.prepareDatabase { db in
            // Before the journal mode: switching it is a synced write of its own.
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            switch journal {
            case .rollback:
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
            case .wal:
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                // The write-ahead log outlives the connection (a durable store only: the
                // template is read as one file). Commits are synced into it either way.
                if durable { _ = multidoc_sqlite_keep_wal_on_close(db.sqliteConnection) }
            }
        }
        if !exists {
            // A new store starts as a copy of an empty, migrated store made once per process:
            // running the migrations cost a dozen synced transactions and a hundred page writes
            // per store, most of a first import (joining 10,000 documents).
            if useTemplate, let template = Self.template(for: options) {
                // Whole, but its folder not synced here: the store's first synced commit syncs
                // the folder (SQLite syncs the folder of a new write-ahead log or journal the
                // first time it syncs one), and a store only ever imported into is built again
                // from the container if a power loss takes its name.
                do {
                    try AtomicFile.write(template, to: url, durability: .whole)
                } catch {
                    throw StoreError(.writeFailed, path: path, detail: error.description)
                }
                madeFromTemplate = true
            } else {
                let fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
                if fd >= 0 { _ = Glibc.close(fd) }
            }
        }
        var neverWritten = madeFromTemplate
        do throws(any Error) {
            queue = try DatabaseQueue(path: path, configuration: configuration)
            let migrator = SQLiteSchema.migrator
            if try queue.read({ db in try migrator.hasBeenSuperseded(db) }) {
                let (found, unknown) = try queue.read { db in try SQLiteSchema.newerVersion(db, known: migrator.migrations) }
                throw StoreError(
                    .newerSchema(found: found, supported: SchemaVersion.current), path: path,
                    detail: "migrations this build does not know: \(unknown.joined(separator: ", "))")
            }
            try migrator.migrate(queue)
            try queue.read { db in
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM records")
                // A store made ahead and never written (a spare, SpareStores in the engine) is in
                // the template's state like one made here: no commit ever bumped its generation.
                // (A damaged generation is reported by the first read, as before: not new.)
                if !neverWritten { neverWritten = (try? SQLiteSchema.generation(db)) == 0 }
            }
        } catch let error as StoreError {
            throw error
        } catch {
            // Say "truncated" when the header proves it; otherwise report what SQLite said.
            if !Self.isOpenInThisProcess(path) { try Self.checkHeader(path, pageCount: true) }
            throw Self.map(error, path: path)
        }
        writeAheadLogIsNew = Mutex(neverWritten && durable && journal == .wal)
        Self.openPaths.withLock { $0[path, default: 0] += 1 }
    }

    /// The same connection under the store's new name. Only in write-ahead-log mode: SQLite
    /// keeps the store, its log and its shared-memory index open by descriptor and never looks
    /// them up by name again (a rollback journal is made by name beside the file at each write,
    /// in the old folder). The folder holds all three, so another process opening the new name
    /// shares them, and its locks, with this connection.
    public func relocated(to url: URL) -> (any DocumentStore)? {
        guard journalMode == .wal, !isClosed.withLock({ $0 }) else { return nil }
        return SQLiteDocumentStore(moving: self, to: url)
    }

    private init(moving other: SQLiteDocumentStore, to url: URL) {
        self.url = url
        queue = other.queue
        shipped.withLock { $0 = other.shipped.withLock { $0 } }
        cache.withLock { $0 = other.cache.withLock { $0 } }
        commitsSinceCheckpoint.withLock { $0 = other.commitsSinceCheckpoint.withLock { $0 } }
        appendedTextRows.withLock { $0 = other.appendedTextRows.withLock { $0 } }
        journalMode = other.journalMode
        synchronous = other.synchronous
        connectionSynchronous = Mutex(other.connectionSynchronous.withLock { $0 })
        writeAheadLogIsNew = Mutex(other.writeAheadLogIsNew.withLock { $0 })
        // The old object is closed without closing the connection this one carries on.
        other.isClosed.withLock { $0 = true }
        Self.openPaths.withLock { paths in
            let count = (paths[other.url.path] ?? 1) - 1
            paths[other.url.path] = count > 0 ? count : nil
            paths[url.path, default: 0] += 1
        }
    }

    public func read() throws(StoreError) -> StoreContents {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        do {
            // A deferred transaction, not `queue.read`: GRDB's read turns `query_only` on and
            // off around it, and changing that flag expires every prepared statement of the
            // connection, so each later statement was compiled again (a fifth of an edit's
            // import went to SQLite's parser).
            var contents = try queue.inDatabase { db in
                var contents = StoreContents()
                try db.inTransaction(.deferred) {
                    contents = try self.current(db).contents
                    return .commit
                }
                return contents
            }
            for sequence in shipped.withLock({ $0 }) { contents.sync.outbox[sequence] = nil }
            return contents
        } catch let error as StoreError {
            throw error
        } catch {
            throw Self.map(error, path: url.path)
        }
    }

    /// Without `durable`, a commit to a store in write-ahead-log mode is not synced
    /// (`synchronous = NORMAL`: consistent after a power loss, perhaps at an earlier commit); the
    /// next synced commit or checkpoint makes it durable. A rollback-journal store syncs every
    /// commit (NORMAL there may corrupt on old file systems).
    public func write<T>(durable: Bool, _ body: (inout StoreContents) throws -> T) throws -> T {
        try write(durable: durable, notingObjects: false, body)
    }

    /// With `notingObjects`, the rows written are those of the objects the body noted, and no
    /// other object is compared or copied (Docs/STORAGE.md, "Objects a write noted").
    public func write<T>(durable: Bool, notingObjects: Bool, _ body: (inout StoreContents) throws -> T) throws -> T {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        var result: T?
        do {
            try queue.writeWithoutTransaction { db in
                result = try transaction(db, durable: durable, notingObjects: notingObjects, body)
            }
        } catch let error as DatabaseError {
            throw Self.map(error, path: url.path)
        }
        guard let result else { throw StoreError(.writeFailed, path: url.path, detail: "transaction did not run") }
        return result
    }

    /// The outbox's shipped logs taken out by this object's next write, in its transaction (or
    /// at ``close()``, or by a commit of their own a second later if no write came): a save's
    /// shipped log costs no commit of its own while saves follow each other. Until then what
    /// this object reads leaves them out; another process, or another object on the same file,
    /// still finds them in the outbox and, shipping them again, the same bytes in place.
    public func dropShipped(_ sequences: Set<UInt64>) throws {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        shipped.withLock { $0.formUnion(sequences) }
        let schedule = dropScheduled.withLock { scheduled -> Bool in
            defer { scheduled = true }
            return !scheduled
        }
        guard schedule else { return }
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + Self.shippedCommitDelay) { [weak self] in
            guard let self else { return }
            self.dropScheduled.withLock { $0 = false }
            guard !self.shipped.withLock({ $0.isEmpty }), !self.isClosed.withLock({ $0 }) else { return }
            // A failure leaves them to the next write, or to a flush that finds them in place.
            _ = try? self.write(durable: false) { _ in }
        }
    }

    /// One transaction on the store's connection: `body` changes the contents, what changed is
    /// written, and the commit is synced as `durable` says (``write(durable:_:)``). On a throw
    /// nothing is committed and the cache is dropped.
    private func transaction<T>(
        _ db: Database, durable: Bool, notingObjects: Bool = false, _ body: (inout StoreContents) throws -> T
    ) throws -> T {
        // The level this commit needs; the connection keeps the last one set (setting it is a
        // statement of its own, run only when it changes).
        // Only a store's first write can be its log's first: the mark goes whatever this one is.
        let wasNew = writeAheadLogIsNew.withLock { isNew in
            defer { isNew = false }
            return isNew
        }
        let first = !durable && journalMode == .wal && wasNew && hasNoWriteAheadLog
        let level = first ? "OFF" : !durable && journalMode == .wal && synchronous == "FULL" ? "NORMAL" : synchronous
        var result: T?
        var committed = false
        let dropping = shipped.withLock { $0 }
        do {
            if connectionSynchronous.withLock({ $0 }) != level {
                try db.execute(sql: "PRAGMA synchronous = \(level)")
                connectionSynchronous.withLock { $0 = level }
            }
            // The first commit into a new write-ahead log syncs its header and then its folder
            // (SQLite syncs a new file's folder the first time it syncs the file), even at
            // NORMAL: two syncs, most of a document's first import. The header is synced so
            // that frames written after a restart of the log are never mixed with an old
            // generation's; a new log has none, and a power loss leaves it whole, torn (its
            // frames fail their checksums and are ignored) or gone, the store then at the
            // template's empty state, which the container fills again. OFF for that one
            // commit, with the automatic checkpoint off too: a checkpoint without syncs could
            // lose pages the log no longer holds.
            if first { try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
            defer {
                if first {
                    // Back to the store's level at once: a checkpoint (``sync()``, which a
                    // save runs when its log could not be shipped, or ``checkpointIfDue()``)
                    // run at OFF would sync nothing.
                    if (try? db.execute(sql: "PRAGMA synchronous = \(synchronous)")) != nil {
                        connectionSynchronous.withLock { $0 = synchronous }
                    }
                    try? db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.automaticCheckpointPages)")
                }
            }
            try db.inTransaction(.immediate) {
                // Taken out of the cache, and the baseline without its texts' states and long
                // strings: the body then changes each text in place (a copy of a long text
                // costs more than the save), and the texts are compared by revision.
                var (current, after) = try self.takeCurrent(db)
                let committedTexts = SQLiteSchema.revisions(after)
                // The history by its entries' ids, for the same reason: a baseline holding it
                // made each save's new entry copy every entry kept (thousands, each retained).
                let committedHistory = after.sync.history.map(\.id)
                let baseline = WriteBaseline(of: &after, history: false, objects: !notingObjects)
                if notingObjects { after.objectJournal = [] }
                for sequence in dropping { after.sync.outbox[sequence] = nil }
                result = try body(&after)
                // The write's flag, not the body, says which way objects are written: a noting
                // body that drops its notes writes no object (its baseline holds none to compare).
                let (changed, appended) = try SQLiteSchema.save(
                    from: baseline, committedTexts: committedTexts, committedHistory: committedHistory, to: after,
                    noted: notingObjects ? after.objectJournal ?? [] : nil, in: db)
                after.textJournal = TextJournal()
                after.objectJournal = nil
                guard changed else {
                    self.cache.withLock { $0 = (current, after) }
                    return .commit
                }
                current = try SQLiteSchema.bumpGeneration(from: current, db)
                self.cache.withLock { $0 = (current, after) }
                if appended > 0 { self.appendedTextRows.withLock { $0 += appended } }
                self.lastCommitLevelSeen.withLock { $0 = level }
                committed = true
                return .commit
            }
        } catch {
            cache.withLock { $0 = nil }
            throw error
        }
        guard let result else { throw StoreError(.writeFailed, path: url.path, detail: "transaction did not run") }
        if !dropping.isEmpty { shipped.withLock { $0.subtract(dropping) } }
        if committed, journalMode == .wal { commitsSinceCheckpoint.withLock { $0 += 1 } }
        return result
    }

    /// SQLite's automatic checkpoint threshold (its default), put back after a store's first commit.
    static let automaticCheckpointPages = 1_000

    /// No write-ahead log beside the store, or an empty one: nobody has committed into it.
    private var hasNoWriteAheadLog: Bool {
        var info = stat()
        return stat(url.path + "-wal", &info) != 0 || info.st_size == 0
    }

    /// The contents as of `db`'s transaction, from the cache when nothing was committed since.
    func current(_ db: Database) throws -> (generation: Int64, contents: StoreContents) {
        let generation = try SQLiteSchema.generation(db)
        if let cached = cache.withLock({ $0 }), cached.generation == generation { return cached }
        let (contents, appended) = try SQLiteSchema.load(db)
        appendedTextRows.withLock { $0 = appended }
        cache.withLock { $0 = (generation, contents) }
        return (generation, contents)
    }

    /// ``current(_:)`` taken out of the cache, so that the caller holds the only reference to
    /// its texts (the caller puts back what it commits).
    private func takeCurrent(_ db: Database) throws -> (generation: Int64, contents: StoreContents) {
        let generation = try SQLiteSchema.generation(db)
        if let cached = cache.withLock({ cache in
            defer { cache = nil }
            return cache
        }), cached.generation == generation {
            return cached
        }
        let (contents, appended) = try SQLiteSchema.load(db)
        appendedTextRows.withLock { $0 = appended }
        return (generation, contents)
    }

    public func close() {
        if !shipped.withLock({ $0.isEmpty }), !isClosed.withLock({ $0 }) {
            // Not synced, as the drop would have been: a power loss leaves them in the outbox.
            _ = try? write(durable: false) { _ in }
        }
        let wasClosed = isClosed.withLock { closed -> Bool in
            defer { closed = true }
            return closed
        }
        if !wasClosed {
            try? queue.close()
            Self.openPaths.withLock { paths in
                let count = (paths[url.path] ?? 1) - 1
                paths[url.path] = count > 0 ? count : nil
            }
        }
    }

    /// Removes the store file and SQLite's siblings.
    public static func destroy(at url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal", ".lock"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }
}
