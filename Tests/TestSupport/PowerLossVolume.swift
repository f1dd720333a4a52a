import Foundation
import Model
import Storage
import Synchronization

/// Imports are not synced (Docs/RELIABILITY.md, "One durable step per save"). A power loss can
/// only undo what was not synced, which a kill cannot stage; these stores can: each remembers
/// its last synced contents, and `powerLoss()` puts every store back to it.
public final class PowerLossVolume: Sendable {
    private struct State {
        var current: StoreContents
        var durable: StoreContents
    }

    private let stores = Mutex<[String: State]>([:])

    public init() {}

    /// Every store loses what it committed since it was last synced.
    public func powerLoss() {
        stores.withLock { stores in
            for (key, state) in stores { stores[key]?.current = state.durable }
        }
    }

    /// What every store holds now.
    public func currentContents() -> [StoreContents] { stores.withLock { $0.values.map(\.current) } }

    public var provider: StoreProvider {
        StoreProvider(
            open: { kind, url, create throws(StoreError) in
                let exists = self.stores.withLock { stores -> Bool in
                    if stores[url.path] == nil, create { stores[url.path] = State(current: StoreContents(), durable: StoreContents()) }
                    return stores[url.path] != nil
                }
                guard exists else { throw StoreError(.notFound, path: url.path) }
                return PowerLossStore(kind: kind, url: url, volume: self)
            },
            destroy: { _, url in self.stores.withLock { $0[url.path] = nil } },
            exists: { _, url in self.stores.withLock { $0[url.path] != nil } })
    }

    fileprivate func read(_ url: URL) throws(StoreError) -> StoreContents {
        guard let state = stores.withLock({ $0[url.path] }) else { throw StoreError(.notFound, path: url.path) }
        return state.current
    }

    /// A commit; a synced one makes everything before it durable too (both backends keep
    /// commits in order: SQLite's write-ahead log is synced as a whole, the JSON store's file is
    /// the whole state).
    fileprivate func write<T>(_ url: URL, durable: Bool, _ body: (inout StoreContents) throws -> T) throws -> T {
        try stores.withLock { stores in
            guard var state = stores[url.path] else { throw StoreError(.notFound, path: url.path) }
            let result = try body(&state.current)
            if durable { state.durable = state.current }
            stores[url.path] = state
            return result
        }
    }

    fileprivate func sync(_ url: URL) {
        stores.withLock { stores in
            if let current = stores[url.path]?.current { stores[url.path]?.durable = current }
        }
    }
}

private final class PowerLossStore: DocumentStore {
    let kind: StoreKind
    let url: URL
    private let volume: PowerLossVolume

    init(kind: StoreKind, url: URL, volume: PowerLossVolume) {
        self.kind = kind
        self.url = url
        self.volume = volume
    }

    func read() throws(StoreError) -> StoreContents { try volume.read(url) }
    func write<T>(durable: Bool, _ body: (inout StoreContents) throws -> T) throws -> T { try volume.write(url, durable: durable, body) }
    func sync() throws(StoreError) { volume.sync(url) }
    func close() {}
}

