import Foundation
import Model
import Storage
import Synchronization

/// Stores held in memory but anchored to the disk: each store is a small marker file at its
/// URL naming its contents. Moving the document's folder (a rename) carries the store along and
/// removing the folder removes it — the way a SQLite or JSON file behaves — without a store's
/// fsyncs, so the simulation can run thousands of steps in CI time.
final class MarkerStores: Sendable {
    private let contents = Mutex<[String: StoreContents]>([:])

    var provider: StoreProvider {
        StoreProvider(
            open: { kind, url, create throws(StoreError) in
                if let token = Self.token(at: url), self.contents.withLock({ $0[token] != nil }) {
                    return MarkerStore(kind: kind, url: url, token: token, stores: self)
                }
                guard create else { throw StoreError(.notFound, path: url.path) }
                let token = UUID().uuidString
                do {
                    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try Data(token.utf8).write(to: url)
                } catch {
                    throw StoreError(.notFound, path: url.path)
                }
                self.contents.withLock { $0[token] = StoreContents() }
                return MarkerStore(kind: kind, url: url, token: token, stores: self)
            },
            destroy: { _, url in
                if let token = Self.token(at: url) { self.contents.withLock { $0[token] = nil } }
                try? FileManager.default.removeItem(at: url)
            },
            exists: StoreProvider.fileExists)
    }

    private static func token(at url: URL) -> String? {
        (try? Data(contentsOf: url)).map { String(decoding: $0, as: UTF8.self) }
    }

    fileprivate func read(_ token: String) -> StoreContents? { contents.withLock { $0[token] } }

    fileprivate func update<T>(_ token: String, _ body: (inout StoreContents) throws -> T) throws -> T {
        try contents.withLock { stores in
            guard var current = stores[token] else { throw StoreError(.notFound, path: token) }
            let result = try body(&current)
            stores[token] = current
            return result
        }
    }
}

private final class MarkerStore: DocumentStore {
    let kind: StoreKind
    let url: URL
    private let token: String
    private let stores: MarkerStores
    private let isClosed = Mutex(false)

    init(kind: StoreKind, url: URL, token: String, stores: MarkerStores) {
        self.kind = kind
        self.url = url
        self.token = token
        self.stores = stores
    }

    func read() throws(StoreError) -> StoreContents {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        guard let contents = stores.read(token) else { throw StoreError(.notFound, path: url.path) }
        return contents
    }

    func sync() throws(StoreError) {}

    func write<T>(durable: Bool, _ body: (inout StoreContents) throws -> T) throws -> T {
        if isClosed.withLock({ $0 }) { throw StoreError(.closed, path: url.path) }
        let result = try stores.update(token, body)
        // A commit changes the file, as a real store's does: the engine's quiet-document check
        // looks at the store file's stamp.
        try? Data(token.utf8).write(to: url)
        return result
    }

    func close() { isClosed.withLock { $0 = true } }
}
