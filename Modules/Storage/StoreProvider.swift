import Foundation

/// Opens and destroys stores of every kind. The app builds one at the top (``standard(options:)``)
/// and passes it down; tests pass one over ``MemoryStore``s or a failing fake.
public struct StoreProvider: Sendable {
    public typealias Open = @Sendable (_ kind: StoreKind, _ url: URL, _ create: Bool) throws(StoreError) -> any DocumentStore
    public typealias Destroy = @Sendable (_ kind: StoreKind, _ url: URL) throws(StoreError) -> Void

    private let openStore: Open
    private let destroyStore: Destroy

    public init(open: @escaping Open, destroy: @escaping Destroy) {
        self.openStore = open
        self.destroyStore = destroy
    }

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
