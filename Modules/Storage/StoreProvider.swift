import Foundation

/// Opens and destroys stores of every kind. The app builds one at the top (``standard(options:)``)
/// and passes it down; tests pass one over ``MemoryStore``s or a failing fake.
public struct StoreProvider: Sendable {
    public typealias Open = @Sendable (_ kind: StoreKind, _ url: URL, _ create: Bool) throws(StoreError) -> any DocumentStore
    public typealias Destroy = @Sendable (_ kind: StoreKind, _ url: URL) throws(StoreError) -> Void
    public typealias Exists = @Sendable (_ kind: StoreKind, _ url: URL) -> Bool

    private let openStore: Open
    private let destroyStore: Destroy
    private let existsStore: Exists

    /// `exists` says whether a store is at a URL (``fileExists(_:_:)`` for backends of files).
    public init(open: @escaping Open, destroy: @escaping Destroy, exists: @escaping Exists) {
        self.openStore = open
        self.destroyStore = destroy
        self.existsStore = exists
    }

    /// Whether a file is at `url`: a store of the file backends is there.
    @Sendable public static func fileExists(_ kind: StoreKind, _ url: URL) -> Bool { access(url.path, F_OK) == 0 }

    /// Whether a store is at `url` (one `stat` for the file backends).
    public func exists(_ kind: StoreKind, at url: URL) -> Bool { existsStore(kind, url) }

    /// Opens the store at `url`; with `create`, makes an empty one if none is there.
    public func open(_ kind: StoreKind, at url: URL, create: Bool = false) throws(StoreError) -> any DocumentStore {
        try openStore(kind, url, create)
    }

    /// Removes the store's files.
    public func destroy(_ kind: StoreKind, at url: URL) throws(StoreError) {
        try destroyStore(kind, url)
    }

    /// Copies a store's whole contents into a new store of another kind at `destination`.
    /// The source is left as it is; the caller swaps them.
    public func convert(_ source: any DocumentStore, to kind: StoreKind, at destination: URL) throws -> any DocumentStore {
        let contents = try source.read()
        let target = try open(kind, at: destination, create: true)
        do {
            try target.write { $0 = contents }
        } catch {
            target.close()
            try? destroy(kind, at: destination)
            throw error
        }
        return target
    }
}
