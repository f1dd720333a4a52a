#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Text
import Synchronization

/// The JSON backend: per store a human-readable snapshot (pretty-printed, sorted keys) and an
/// append-only journal beside it (`<file>.journal`) of what each commit changed since
/// (``JSONStoreDelta``): a save appends one frame, and ``compact()`` folds the journal into a
/// new snapshot (temporary file, fsync, rename, fsync directory) off a save's path. Opening reads
/// the snapshot and the frames after it; a frame cut short by a crash or a power loss ends the
/// journal and is cut off by the next writer (a durable commit has its frame synced before it
/// returns, so only a commit that never returned can be torn). An advisory lock on
/// `<file>.lock` serialises processes: shared to read, exclusive to write, waited for up to the
/// busy timeout; a write reads what another process appended under the exclusive lock, so
/// read-modify-write is safe across processes.
///
/// `flock` locks belong to the open file description, so they do not exclude two threads using
/// one instance (a second `LOCK_EX` on the same descriptor converts the lock instead of waiting,
/// and one thread's unlock drops the other's lock). A per-instance mutex, held around the file
/// lock, serialises this instance's own callers.
public final class JSONDocumentStore: DocumentStore {
    public let kind = StoreKind.json
    public let url: URL
    let journalURL: URL
    private let lock: FileLock
    private let threads = NSLock()
    private let busyTimeout: Duration
    private let cache = Mutex<Loaded?>(nil)
    private let isClosed = Mutex(false)

    /// What this instance last read or wrote, and where the files stood then.
    struct Loaded {
        var snapshot: FileIdentity
        /// The journal's identity (nil: no journal file).
        var journal: FileIdentity?
        /// Where the journal's last whole frame ends.
        var journalLength: Int64
        /// The last frame's sequence (or the snapshot's `journalThrough`).
        var lastSequence: UInt64
        /// Frames after the snapshot.
        var frames: Int
        var contents: StoreContents
    }

    /// The format tag at the top of every file.
    static let formatTag = "multidoc-json-store"

    /// The advisory lock file beside the store at `url`.
    public static func lockURL(for url: URL) -> URL { URL(fileURLWithPath: url.path + ".lock") }

    /// The journal of commits since the snapshot, beside the store at `url`.
    public static func journalURL(for url: URL) -> URL { URL(fileURLWithPath: url.path + ".journal") }

    /// After this many frames, or this many bytes of journal, ``checkpointIfDue()`` compacts.
    public static let compactEvery = 128
    public static let compactAfterBytes: Int64 = 8 << 20

    /// Opens (with `create`, creates) the store at `url`.
    /// - Parameter options: only ``StoreOptions/busyTimeout`` applies: how long to wait for
    ///   another process's lock before ``StoreError/Kind/busy``.
    /// - Throws: ``StoreError`` naming the file and the problem.
    public init(url: URL, options: StoreOptions = StoreOptions(), create: Bool) throws(StoreError) {
        self.url = url
        self.journalURL = Self.journalURL(for: url)
        self.busyTimeout = options.busyTimeout
        let path = url.path
        if !FileManager.default.fileExists(atPath: path) {
            guard create else { throw StoreError(.notFound, path: path) }
            do {
                try AtomicFile.makeDirectory(url.deletingLastPathComponent())
            } catch {
                throw StoreError(.writeFailed, path: path, detail: error.description)
            }
        }
        do {
            lock = try FileLock(url: Self.lockURL(for: url))
        } catch {
            throw StoreError(error.code == EACCES ? .unreadable : .writeFailed, path: path, detail: error.description)
        }
        if create, !FileManager.default.fileExists(atPath: path) {
            try acquire(.exclusive)
            defer { release() }
            if !FileManager.default.fileExists(atPath: path) {
                // A journal left by a store destroyed half-way belongs to no snapshot.
                try? FileManager.default.removeItem(at: journalURL)
                try persistSnapshot(StoreContents(), through: 0, durability: .durable)
            }
        }
        _ = try read()
    }

    public func read() throws(StoreError) -> StoreContents {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        try acquire(.shared)
        defer { release() }
        return try load().contents
    }

    /// Appends what the body changed as one frame of the journal. With `durable` the frame is
    /// synced (and the folder, when the journal is new) before this returns; without, a power
    /// loss may cut it off, leaving the store at an earlier commit.
    public func write<T>(durable: Bool, _ body: (inout StoreContents) throws -> T) throws -> T {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        try acquire(.exclusive)
        defer { release() }
        // Taken out of the cache, and the baseline without its texts' states and long strings:
        // the body then changes each text in place (a copy of a long text costs more than the
        // save), and the texts are compared by revision.
        var loaded = try load(taking: true)
        let committedTexts = SQLiteSchema.revisions(loaded.contents)
        let baseline = WriteBaseline(of: &loaded.contents, history: true)
        let result = try body(&loaded.contents)
        let delta = JSONStoreDelta(sequence: loaded.lastSequence &+ 1, from: baseline, committedTexts: committedTexts, to: loaded.contents)
        loaded.contents.textJournal = TextJournal()
        if let delta { try append(delta, to: &loaded, durable: durable) }
        cache.withLock { $0 = loaded }
        return result
    }

    public func sync() throws(StoreError) {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        try acquire(.shared)
        defer { release() }
        do {
            if FileManager.default.fileExists(atPath: journalURL.path) { try AtomicFile.sync(journalURL) }
            try AtomicFile.sync(url)
        } catch {
            throw StoreError(.writeFailed, path: url.path, detail: error.description)
        }
    }

    /// Compacts when the journal holds ``compactEvery`` frames or ``compactAfterBytes`` bytes.
    public func checkpointIfDue() {
        guard !isClosed.withLock({ $0 }),
              let due = cache.withLock({ $0.map { $0.frames >= Self.compactEvery || $0.journalLength >= Self.compactAfterBytes } }), due
        else { return }
        try? compact()
    }

    /// Writes the contents as a new snapshot that says which frames it holds, then empties the
    /// journal. A crash between the two leaves frames the snapshot already holds, which opening
    /// skips by their sequence.
    public func compact() throws(StoreError) {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        try acquire(.exclusive)
        defer { release() }
        var loaded = try load(taking: true)
        defer { cache.withLock { $0 = loaded } }
        guard (loaded.journal?.size ?? 0) > 0 else { return }
        try persistSnapshot(loaded.contents, through: loaded.lastSequence, durability: .durable)
        do {
            try Self.truncate(journalURL, to: 0, sync: true)
        } catch {
            throw StoreError(.writeFailed, path: journalURL.path, detail: error.description)
        }
        guard let snapshot = FileIdentity(path: url.path) else { throw StoreError(.notFound, path: url.path) }
        loaded.snapshot = snapshot
        loaded.journal = FileIdentity(path: journalURL.path)
        loaded.journalLength = 0
        loaded.frames = 0
    }

    public func close() { isClosed.withLock { $0 = true } }

    /// Removes the store file, its journal and its lock file.
    public static func destroy(at url: URL) {
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.removeItem(at: journalURL(for: url))
        try? FileManager.default.removeItem(atPath: url.path + ".lock")
    }

    // MARK: Locking

    /// Takes this instance's mutex, then the file lock, polling it until the busy timeout.
    ///
    /// Polling rather than a blocking `flock`: a blocking one cannot time out, so a stopped
    /// process holding the lock would hang every other reader and writer forever. The mutex is
    /// waited for without a limit, as GRDB's queue is: it is only held by this process's own
    /// calls, which do not stop.
    private func acquire(_ mode: FileLock.Mode) throws(StoreError) {
        threads.lock()
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: busyTimeout)
        var pause = Duration.milliseconds(1)
        while true {
            let taken: Bool
            do {
                taken = try lock.tryLock(mode)
            } catch {
                threads.unlock()
                throw StoreError(mode == .exclusive ? .writeFailed : .unreadable, path: url.path, detail: error.description)
            }
            if taken { return }
            let now = clock.now
            guard now < deadline else {
                threads.unlock()
                throw StoreError(
                    .busy, path: url.path,
                    detail: "another process holds its lock (\(lock.path)) and did not release it within the busy timeout of \(busyTimeout)")
            }
            let nap = min(pause, deadline - now).components
            usleep(UInt32(clamping: nap.seconds * 1_000_000 + nap.attoseconds / 1_000_000_000_000))
            pause = min(pause * 2, .milliseconds(20))
        }
    }

    private func release() {
        lock.unlock()
        threads.unlock()
    }

    // MARK: File

    /// The contents: the cached ones when neither file changed, the cached ones and the frames
    /// another process appended when only the journal grew, otherwise the snapshot and every
    /// frame after it. With `taking`, the cache is left empty (the caller puts back what it
    /// commits), so the caller holds the only reference to the texts.
    private func load(taking: Bool = false) throws(StoreError) -> Loaded {
        let cached = cache.withLock { cache in
            defer { if taking { cache = nil } }
            return cache
        }
        guard let snapshot = FileIdentity(path: url.path) else { throw StoreError(.notFound, path: url.path) }
        let journal = FileIdentity(path: journalURL.path)
        if var cached, cached.snapshot == snapshot {
            if cached.journal == journal { return cached }
            if let journal, let before = cached.journal, journal.inode == before.inode, journal.size > cached.journalLength {
                try readJournal(into: &cached, from: cached.journalLength)
                cached.journal = journal
                if !taking { cache.withLock { $0 = cached } }
                return cached
            }
        }
        let data: Data
        do {
            data = try AtomicFile.read(url)
        } catch {
            if error.isMissing { throw StoreError(.notFound, path: url.path) }
            throw StoreError(.unreadable, path: url.path, detail: error.description)
        }
        let (contents, through) = try Self.decode(data, path: url.path)
        var loaded = Loaded(snapshot: snapshot, journal: journal, journalLength: 0, lastSequence: through, frames: 0, contents: contents)
        if journal != nil { try readJournal(into: &loaded, from: 0) }
        if !taking { cache.withLock { $0 = loaded } }
        return loaded
    }

    /// The snapshot's contents and the last journal frame it holds.
    static func decode(_ data: Data, path: String) throws(StoreError) -> (contents: StoreContents, journalThrough: UInt64) {
        if data.isEmpty { throw StoreError(.truncated, path: path, detail: "the file is empty") }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw StoreError(.corrupt, path: path, detail: "not valid JSON (truncated or damaged)")
        }
        guard let dictionary = object as? [String: Any], dictionary["format"] as? String == formatTag else {
            throw StoreError(.corrupt, path: path, detail: "valid JSON but not a multidoc store")
        }
        if let version = dictionary["schemaVersion"] as? Int, version > SchemaVersion.current {
            throw StoreError(.newerSchema(found: Int64(version), supported: SchemaVersion.current), path: path)
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .millisecondsSince1970
            let file = try decoder.decode(JSONStoreFile.self, from: data)
            return (file.contents, file.journalThrough ?? 0)
        } catch {
            throw StoreError(.corrupt, path: path, detail: "a multidoc store of the wrong shape: \(error)")
        }
    }
}

/// The file's shape: readable field names, string keys everywhere.
struct JSONStoreFile: Codable {
    var format: String
    var schemaVersion: Int64
    var objects: [ObjectID: ObjectRecord]
    var stamps: [ObjectID: [String: Stamp]]
    var tombstones: [ObjectID: Stamp]
    var applied: [DeviceID: UInt64]
    var clock: HybridLogicalClock
    var outbox: [String: Data]
    var values: [String: String]
    /// Absent in files written before texts merged as sequences.
    var texts: [ObjectID: [String: TextSequence]]?
    var history: [TextSave]?
    /// The last journal frame this snapshot holds (absent: none, as in files written before the
    /// journal).
    var journalThrough: UInt64?

    init(_ contents: StoreContents) {
        format = JSONDocumentStore.formatTag
        schemaVersion = SchemaVersion.current
        objects = contents.graph.objects
        stamps = contents.sync.stamps
        tombstones = contents.sync.tombstones
        applied = contents.sync.applied
        clock = contents.sync.clock
        outbox = Dictionary(uniqueKeysWithValues: contents.sync.outbox.map { ("\($0.key)", $0.value) })
        values = contents.sync.values
        texts = contents.sync.texts.isEmpty ? nil : contents.sync.texts
        history = contents.sync.history.isEmpty ? nil : contents.sync.history
    }

    var contents: StoreContents {
        var outboxBySequence: [UInt64: Data] = [:]
        for (key, value) in outbox { if let sequence = UInt64(key) { outboxBySequence[sequence] = value } }
        var contents = StoreContents(
            graph: ObjectGraph(objects: objects),
            sync: SyncBookkeeping(applied: applied, stamps: stamps, tombstones: tombstones, clock: clock, outbox: outboxBySequence, values: values,
                                 texts: texts ?? [:]))
        contents.sync.history = history ?? []
        return contents
    }
}
