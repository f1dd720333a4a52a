#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Text
import Synchronization

/// The JSON backend: one human-readable file per store (pretty-printed, sorted keys), replaced
/// atomically on every commit (temporary file, fsync, rename, fsync directory). An advisory lock
/// on `<file>.lock` serialises processes: shared to read, exclusive to write, waited for up to
/// the busy timeout; a write re-reads the file under the exclusive lock, so read-modify-write is
/// safe across processes.
///
/// `flock` locks belong to the open file description, so they do not exclude two threads using
/// one instance (a second `LOCK_EX` on the same descriptor converts the lock instead of waiting,
/// and one thread's unlock drops the other's lock). A per-instance mutex, held around the file
/// lock, serialises this instance's own callers.
public final class JSONDocumentStore: DocumentStore {
    public let kind = StoreKind.json
    public let url: URL
    private let lock: FileLock
    private let threads = NSLock()
    private let busyTimeout: Duration
    private let cache = Mutex<(signature: FileIdentity, contents: StoreContents)?>(nil)
    private let isClosed = Mutex(false)

    /// The format tag at the top of every file.
    static let formatTag = "multidoc-json-store"

    /// The advisory lock file beside the store at `url`.
    public static func lockURL(for url: URL) -> URL { URL(fileURLWithPath: url.path + ".lock") }

    /// Opens (with `create`, creates) the store at `url`.
    /// - Parameter options: only ``StoreOptions/busyTimeout`` applies: how long to wait for
    ///   another process's lock before ``StoreError/Kind/busy``.
    /// - Throws: ``StoreError`` naming the file and the problem.
    public init(url: URL, options: StoreOptions = StoreOptions(), create: Bool) throws(StoreError) {
        self.url = url
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
            if !FileManager.default.fileExists(atPath: path) { try persist(StoreContents(), durability: .durable) }
        }
        _ = try read()
    }

    public func read() throws(StoreError) -> StoreContents {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        try acquire(.shared)
        defer { release() }
        return try load()
    }

    /// Without `durable` the new file is fsynced before its rename but its folder is not: a
    /// power loss leaves the old file or the new one, whole.
    public func write<T>(durable: Bool, _ body: (inout StoreContents) throws -> T) throws -> T {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        try acquire(.exclusive)
        defer { release() }
        let before = try load()
        var after = before
        let result = try body(&after)
        if after != before { try persist(after, durability: durable ? .durable : .whole) }
        return result
    }

    public func sync() throws(StoreError) {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        try acquire(.shared)
        defer { release() }
        do {
            try AtomicFile.sync(url)
        } catch {
            throw StoreError(.writeFailed, path: url.path, detail: error.description)
        }
    }

    public func close() { isClosed.withLock { $0 = true } }

    /// Removes the store file and its lock file.
    public static func destroy(at url: URL) {
        try? FileManager.default.removeItem(at: url)
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

    private func load() throws(StoreError) -> StoreContents {
        let path = url.path
        let signature = FileIdentity(path: path)
        if let signature, let cached = cache.withLock({ $0 }), cached.signature == signature { return cached.contents }
        let data: Data
        do {
            data = try AtomicFile.read(url)
        } catch {
            if error.isMissing { throw StoreError(.notFound, path: path) }
            throw StoreError(.unreadable, path: path, detail: error.description)
        }
        let contents = try Self.decode(data, path: path)
        if let signature { cache.withLock { $0 = (signature, contents) } }
        return contents
    }

    private func persist(_ contents: StoreContents, durability: AtomicFile.Durability) throws(StoreError) {
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .millisecondsSince1970
            data = try encoder.encode(JSONStoreFile(contents))
        } catch {
            throw StoreError(.writeFailed, path: url.path, detail: "\(error)")
        }
        do {
            try AtomicFile.write(data + Data("\n".utf8), to: url, durability: durability)
        } catch {
            throw StoreError(.writeFailed, path: url.path, detail: error.description)
        }
        if let signature = FileIdentity(path: url.path) { cache.withLock { $0 = (signature, contents) } }
    }

    static func decode(_ data: Data, path: String) throws(StoreError) -> StoreContents {
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
            return try decoder.decode(JSONStoreFile.self, from: data).contents
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
