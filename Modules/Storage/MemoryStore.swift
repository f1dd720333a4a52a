import Foundation
import Synchronization

/// An in-memory backend: other modules' tests, and previews (a document's logs read into
/// memory before it has a store). Stores live in a ``MemoryVolume`` so that a store closed and
/// reopened at the same URL keeps its contents, like a file would.
public final class MemoryStore: DocumentStore {
    public let kind: StoreKind
    public let url: URL
    private let volume: MemoryVolume
    private let isClosed = Mutex(false)

    init(kind: StoreKind, url: URL, volume: MemoryVolume) {
        self.kind = kind
        self.url = url
        self.volume = volume
    }

    public func read() throws(StoreError) -> StoreContents {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        guard let contents = volume.contents(at: url) else { throw StoreError(.notFound, path: url.path) }
        return contents
    }

    public func write<T>(durable: Bool, _ body: (inout StoreContents) throws -> T) throws -> T {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        return try volume.update(at: url, body)
    }

    /// Memory is as durable as it gets here.
    public func sync() throws(StoreError) {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
    }

    public func close() { isClosed.withLock { $0 = true } }

    /// An empty store of its own, gone when released.
    public static func scratch(_ kind: StoreKind) throws(StoreError) -> any DocumentStore {
        try MemoryVolume().provider.open(kind, at: URL(fileURLWithPath: "/scratch", isDirectory: false), create: true)
    }
}

/// The "disk" of ``MemoryStore``s.
public final class MemoryVolume: Sendable {
    private let stores = Mutex<[String: StoreContents]>([:])

    public init() {}

    func contents(at url: URL) -> StoreContents? { stores.withLock { $0[url.path] } }

    func update<T>(at url: URL, _ body: (inout StoreContents) throws -> T) throws -> T {
        try stores.withLock { stores in
            guard var contents = stores[url.path] else { throw StoreError(.notFound, path: url.path) }
            let result = try body(&contents)
            contents.textJournal = TextJournal()
            stores[url.path] = contents
            return result
        }
    }

    /// A provider whose every kind is backed by this volume.
    public var provider: StoreProvider {
        StoreProvider(
            open: { kind, url, create throws(StoreError) in
                let exists = self.stores.withLock { stores -> Bool in
                    if stores[url.path] == nil, create { stores[url.path] = StoreContents() }
                    return stores[url.path] != nil
                }
                guard exists else { throw StoreError(.notFound, path: url.path) }
                return MemoryStore(kind: kind, url: url, volume: self)
            },
            destroy: { _, url in self.stores.withLock { $0[url.path] = nil } },
            exists: { _, url in self.stores.withLock { $0[url.path] != nil } }
        )
    }
}
