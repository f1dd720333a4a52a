import FileIO
import Foundation
import Model
import Storage
import Synchronization

/// An open document: its record and its store, with the contents cached until the next save.
public final class OpenDocument: Sendable {
    public let record: LocalDocumentRecord
    public let store: any DocumentStore
    /// The store was this device's spare, made and synced ahead (``SpareStores``): its file and
    /// its folder's entries are durable already, and the next document needs a new spare.
    let madeFromSpare: Bool
    private let cache = Mutex<StoreContents?>(nil)

    init(record: LocalDocumentRecord, store: any DocumentStore, madeFromSpare: Bool = false) {
        self.record = record
        self.store = store
        self.madeFromSpare = madeFromSpare
    }

    /// The latest committed contents.
    public func read() throws -> StoreContents {
        if let cached = cache.withLock({ $0 }) { return cached }
        let contents = try store.read()
        cache.withLock { $0 = contents }
        return contents
    }

    /// Forgets the cache (after a save or an import).
    func invalidate() { cache.withLock { $0 = nil } }
}

/// Opens each document once: every caller that asks while it opens waits for the same open
/// (seed 003's handler, without its singleton and without its bug of opening twice).
actor DocumentHandler {
    private let stores: StoreProvider
    private let root: DeviceRoot
    private var open: [DocumentID: OpenDocument] = [:]
    private var opening: [DocumentID: Task<OpenDocument, any Error>] = [:]
    /// How many times a store was actually opened (tests check that concurrent callers share one).
    private(set) var openCount = 0
    /// Calls to ``open(_:create:forPass:)`` per document, and for documents a sync pass opened
    /// (they were closed when it began) the count after the pass's own latest call: if nobody
    /// else asked since, the pass closes them again when it ends.
    private var calls: [DocumentID: Int] = [:]
    private var openedByPass: [DocumentID: Int] = [:]
    /// Pass-like users holding a document now (a pass's work and the autosave's shipping can
    /// overlap while the pass works off the library): the last one out closes it.
    private var passUsers: [DocumentID: Int] = [:]
    /// Spare stores this process opened ahead (``SpareStores``), by backend, with their file's
    /// inode (kept from reuse by the open store itself).
    private var heldSpares: [StoreKind: (store: any DocumentStore, inode: UInt64)] = [:]

    init(stores: StoreProvider, root: DeviceRoot) {
        self.stores = stores
        self.root = root
    }

    func isOpen(_ id: DocumentID) -> Bool { open[id] != nil }

    /// Whether the document is open as `record` says it is (its store there, and open).
    func isOpen(as record: LocalDocumentRecord) -> Bool { open[record.id]?.record == record }

    func open(_ record: LocalDocumentRecord, create: Bool, forPass: Bool = false) async throws -> OpenDocument {
        let document = try await opened(record, create: create, forPass: forPass)
        if forPass { passUsers[record.id, default: 0] += 1 }
        return document
    }

    private func opened(_ record: LocalDocumentRecord, create: Bool, forPass: Bool) async throws -> OpenDocument {
        let count = (calls[record.id] ?? 0) + 1
        calls[record.id] = count
        if forPass, open[record.id] == nil && opening[record.id] == nil || openedByPass[record.id] == count - 1 {
            openedByPass[record.id] = count
        }
        if let document = open[record.id], document.record == record { return document }
        if let task = opening[record.id] { return try await task.value }
        if let stale = open.removeValue(forKey: record.id) { stale.store.close() }
        let stores = self.stores
        let url = root.storeURL(record)
        // A store made ahead goes to its folder here (renames), and when this process holds it
        // open, it carries on open under its new name.
        var madeFromSpare = false
        var carried: (any DocumentStore)?
        if create, !stores.exists(record.store, at: url) {
            let spares = SpareStores(root: root, stores: stores)
            madeFromSpare = spares.takeStore(record.store, for: record.id, as: url.deletingLastPathComponent())
            if madeFromSpare {
                carried = takeHeldSpare(record.store, now: url)
            } else if let held = heldSpares[record.store], FileIdentity(path: spares.storeURL(record.store).path)?.inode != held.inode {
                // Another process took the spare this one holds: it is that process's now.
                heldSpares.removeValue(forKey: record.store)?.store.close()
            }
        }
        let task = Task { [madeFromSpare, carried] () throws -> OpenDocument in
            var madeFromSpare = madeFromSpare
            // AtomicFile's FileIOError names the folder and the reason (Foundation's error
            // printed as "Error Domain=NSCocoaErrorDomain Code=513 …").
            if create, !madeFromSpare { try AtomicFile.makeDirectory(url.deletingLastPathComponent()) }
            let store: any DocumentStore
            do {
                if let carried {
                    _ = try carried.read()
                    store = carried
                } else {
                    store = try Self.openAndRead(stores, record.store, at: url, create: create)
                }
            } catch is StoreError where madeFromSpare {
                carried?.close()
                // A spare damaged since it was made (it holds nothing yet): made again here.
                try? stores.destroy(record.store, at: url)
                madeFromSpare = false
                store = try Self.openAndRead(stores, record.store, at: url, create: true)
            }
            return OpenDocument(record: record, store: store, madeFromSpare: madeFromSpare)
        }
        opening[record.id] = task
        defer { opening[record.id] = nil }
        let document = try await task.value
        openCount += 1
        open[record.id] = document
        return document
    }

    /// The inode of the spare store of `kind` held open, if any.
    func heldSpareInode(_ kind: StoreKind) -> UInt64? { heldSpares[kind]?.inode }

    /// Holds `store`, the spare of `kind` (opened off this actor by whoever made it), open
    /// ahead: the document that takes that spare carries on with it.
    func keepHeldSpare(_ kind: StoreKind, _ store: any DocumentStore, inode: UInt64) {
        if heldSpares[kind]?.inode == inode {
            store.close()
            return
        }
        heldSpares.removeValue(forKey: kind)?.store.close()
        heldSpares[kind] = (store, inode)
    }

    /// The spare held open, carried on under `url` when the store there is that file: another
    /// process may have taken that spare meanwhile (and made another), then it is closed (an
    /// idle connection holds nothing of the other document) and the caller opens the store.
    private func takeHeldSpare(_ kind: StoreKind, now url: URL) -> (any DocumentStore)? {
        guard let held = heldSpares.removeValue(forKey: kind) else { return nil }
        if FileIdentity(path: url.path)?.inode == held.inode, let moved = held.store.relocated(to: url) { return moved }
        held.store.close()
        return nil
    }

    private static func openAndRead(_ stores: StoreProvider, _ kind: StoreKind, at url: URL, create: Bool) throws -> any DocumentStore {
        let store = try stores.open(kind, at: url, create: create)
        do {
            _ = try store.read()
        } catch {
            store.close()
            throw error
        }
        return store
    }

    /// Reads a document's contents, from its open store or by opening it briefly.
    func peek(_ record: LocalDocumentRecord) async throws -> StoreContents {
        if let document = open[record.id], document.record == record { return try document.read() }
        let store = try stores.open(record.store, at: root.storeURL(record), create: false)
        defer { store.close() }
        return try store.read()
    }

    func close(_ id: DocumentID) {
        passUsers[id] = nil
        open.removeValue(forKey: id)?.store.close()
    }

    /// Closes the documents a sync pass opened that nobody else asked for meanwhile (except
    /// `keep`), so a pass over thousands of documents leaves neither thousands of open files
    /// nor their caches behind.
    /// `awaiting`: documents left open for a pass that comes soon (a discovered document whose
    /// first log is on its way); a later pass closes them.
    func closeWhatPassesOpened(except keep: DocumentID?, awaiting: Set<DocumentID> = []) {
        for id in Array(openedByPass.keys) where (passUsers[id] ?? 0) <= 1 { closeIfOpenedByPass(id, except: keep, awaiting: awaiting) }
    }

    /// Closes one document if a pass opened it and nobody else asked for it meanwhile: a pass
    /// closes each document as soon as it is done with it, so a first pass over thousands of
    /// documents holds one open at a time.
    func closeIfOpenedByPass(_ id: DocumentID, except keep: DocumentID?, awaiting: Set<DocumentID> = []) {
        if let users = passUsers[id] {
            // Another pass-like user still works with it: it closes it when done.
            guard users <= 1 else {
                passUsers[id] = users - 1
                return
            }
            passUsers[id] = nil
        }
        if awaiting.contains(id) { return }
        guard let count = openedByPass.removeValue(forKey: id), id != keep, calls[id] == count, opening[id] == nil else { return }
        close(id)
    }

    func closeAll() {
        for held in heldSpares.values { held.store.close() }
        heldSpares.removeAll()
        for document in open.values { document.store.close() }
        open.removeAll()
        passUsers.removeAll()
        openedByPass.removeAll()
    }

    func openCountForTesting() -> Int { openCount }
    var openNow: Int { open.count }
}
