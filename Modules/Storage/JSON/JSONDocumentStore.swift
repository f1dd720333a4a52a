#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Synchronization

/// The JSON backend: one human-readable file per store (pretty-printed, sorted keys), replaced
/// atomically on every commit (temporary file, fsync, rename, fsync directory). An advisory lock
/// on `<file>.lock` serialises processes: shared to read, exclusive to write; a write re-reads
/// the file under the exclusive lock, so read-modify-write is safe across processes.
public final class JSONDocumentStore: DocumentStore {
    public let kind = StoreKind.json
    public let url: URL
    private let lock: FileLock
    private let cache = Mutex<(signature: FileSignature, contents: StoreContents)?>(nil)
    private let isClosed = Mutex(false)

    /// The format tag at the top of every file.
    static let formatTag = "multidoc-json-store"

    public init(url: URL, create: Bool) throws(StoreError) {
        self.url = url
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
            lock = try FileLock(url: URL(fileURLWithPath: path + ".lock"))
        } catch {
            throw StoreError(error.code == EACCES ? .unreadable : .writeFailed, path: path, detail: error.description)
        }
        if create, !FileManager.default.fileExists(atPath: path) {
            do {
                try lock.lock()
                defer { lock.unlock() }
                if !FileManager.default.fileExists(atPath: path) { try persist(StoreContents()) }
            } catch let error as StoreError {
                throw error
            } catch {
                throw StoreError(.writeFailed, path: path, detail: "\(error)")
            }
        }
        _ = try read()
    }

    public func read() throws(StoreError) -> StoreContents {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        do {
            try lock.lock(.shared)
        } catch {
            throw StoreError(.unreadable, path: url.path, detail: error.description)
        }
        defer { lock.unlock() }
        return try load()
    }

    public func write<T>(_ body: (inout StoreContents) throws -> T) throws -> T {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        do {
            try lock.lock(.exclusive)
        } catch {
            throw StoreError(.writeFailed, path: url.path, detail: error.description)
        }
        defer { lock.unlock() }
        let before = try load()
        var after = before
        let result = try body(&after)
        if after != before { try persist(after) }
        return result
    }

    public func close() { isClosed.withLock { $0 = true } }

    /// Removes the store file and its lock file.
    public static func destroy(at url: URL) {
        try? FileManager.default.removeItem(at: url)
        try? FileManager.default.removeItem(atPath: url.path + ".lock")
    }

    // MARK: File

    private func load() throws(StoreError) -> StoreContents {
        let path = url.path
        let signature = FileSignature(path: path)
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

    private func persist(_ contents: StoreContents) throws(StoreError) {
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
            try AtomicFile.write(data + Data("\n".utf8), to: url)
        } catch {
            throw StoreError(.writeFailed, path: url.path, detail: error.description)
        }
        if let signature = FileSignature(path: url.path) { cache.withLock { $0 = (signature, contents) } }
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

/// Identifies one version of a file without reading it (inode, size, modification time).
struct FileSignature: Equatable {
    let inode: UInt64
    let size: Int64
    let seconds: Int
    let nanoseconds: Int

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        seconds = info.st_mtim.tv_sec
        nanoseconds = info.st_mtim.tv_nsec
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
    }

    var contents: StoreContents {
        var outboxBySequence: [UInt64: Data] = [:]
        for (key, value) in outbox { if let sequence = UInt64(key) { outboxBySequence[sequence] = value } }
        return StoreContents(
            graph: ObjectGraph(objects: objects),
            sync: SyncBookkeeping(applied: applied, stamps: stamps, tombstones: tombstones, clock: clock, outbox: outboxBySequence, values: values))
    }
}
