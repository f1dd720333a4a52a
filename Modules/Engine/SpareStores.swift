#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync

/// A document's local folder made ahead, one per backend, in the device's folder
/// (`<root>/.spare-<kind>/`, beside `Documents/`): an empty store in `store/` and an empty file
/// for the document's record. A new document's folder, and a discovered one's, is then one
/// rename, its store another, its record written into the file already there.
///
/// Making a document's folder created six files and folders (the folder, the store's folder, its
/// lock file, the store, SQLite's write-ahead log and shared-memory index), the record's
/// temporary file, and synced the store's first bytes; on ext4 each creation scans the inodes
/// freed in the last seconds, and together they were a fifth of new → viewable on each side
/// (Docs/PERFORMANCE.md). A spare moves all of that to a moment when nobody waits: after a
/// document took it, and when a long-lived process starts.
///
/// A spare is always whole: it is built under `.spare-<kind>.building`, synced, and only then
/// renamed to its name; one process builds at a time (the others skip), and a build a crash cut
/// short is thrown away by the next. Taking it is a `rename(2)`: when two processes race, one
/// gets it and the other makes its own as before.
struct SpareStores: Sendable {
    let root: DeviceRoot
    let stores: StoreProvider

    /// The store's folder inside a spare, and inside a document's folder taken from one until
    /// the store is given its name.
    static let storeFolderName = "store"

    private func spareStore(_ kind: StoreKind) -> URL {
        root.spareStoreDirectory(kind).appendingPathComponent(Self.storeFolderName, isDirectory: false)
    }

    private static func holdsStore(_ folder: URL, _ kind: StoreKind) -> Bool {
        access(folder.appendingPathComponent(kind.fileName, isDirectory: false).path, F_OK) == 0
    }

    /// The store file of the spare of `kind`.
    func storeURL(_ kind: StoreKind) -> URL { spareStore(kind).appendingPathComponent(kind.fileName, isDirectory: false) }

    /// Whether a spare of `kind` is ready.
    func isReady(_ kind: StoreKind) -> Bool { Self.holdsStore(spareStore(kind), kind) }

    /// Makes the spare of `kind` document `id`'s folder, when that folder is not there yet (its
    /// record is then written into the spare's file). False when it is there or there is no spare.
    @discardableResult
    func takeDocumentFolder(_ kind: StoreKind, for id: DocumentID) -> Bool {
        let folder = root.documentDirectory(id)
        guard access(folder.path, F_OK) != 0, isReady(kind) else { return false }
        return (try? AtomicFile.move(root.spareStoreDirectory(kind), to: folder)) != nil
    }

    /// Puts an empty store of `kind` made ahead at `storeFolder` (document `id`'s store folder,
    /// not there yet): the one its document folder holds since it was taken from a spare, or the
    /// spare's. False when there is none: the caller makes the store.
    func takeStore(_ kind: StoreKind, for id: DocumentID, as storeFolder: URL) -> Bool {
        let held = root.documentDirectory(id).appendingPathComponent(Self.storeFolderName, isDirectory: false)
        if !Self.holdsStore(held, kind) { takeDocumentFolder(kind, for: id) }
        if Self.holdsStore(held, kind) {
            if held.standardizedFileURL.path == storeFolder.standardizedFileURL.path { return true }
            if (try? AtomicFile.move(held, to: storeFolder)) != nil { return true }
        }
        // The document's folder was there already: the spare's store alone (the rest of the
        // spare is made whole again by the next ``replenish(_:)``).
        guard isReady(kind) else { return false }
        return (try? AtomicFile.move(spareStore(kind), to: storeFolder)) != nil
    }

    /// Makes the spare of `kind` if there is none and no other process is making it.
    /// - Throws: ``FileIOError`` or ``StoreError`` when it cannot be made (the next document's
    ///   folder is then made the old way; nothing else depends on a spare).
    func replenish(_ kind: StoreKind) throws {
        if isReady(kind) { return }
        let lock = try FileLock(url: root.spareLockURL)
        guard try lock.tryLock() else { return }
        defer { lock.unlock() }
        if isReady(kind) { return }
        // The spare this process or another took last: its old name leaves the root folder for
        // good before a new folder takes it (on a file system without a journal a rename into
        // another folder reaches the disk as two writes; the root's would otherwise wait).
        try AtomicFile.syncDirectory(root.url)
        let building = root.spareBuildingDirectory(kind)
        for leftover in [building, root.spareStoreDirectory(kind)] where access(leftover.path, F_OK) == 0 {
            // A build a crash cut short, or a spare whose store alone was taken (gone meanwhile:
            // taken by another process, as it may be).
            try? FileManager.default.removeItem(at: leftover)
        }
        let store = building.appendingPathComponent(Self.storeFolderName, isDirectory: false)
        try AtomicFile.makeDirectory(store)
        try stores.open(kind, at: store.appendingPathComponent(kind.fileName, isDirectory: false), create: true).close()
        try AtomicFile.makeSpareTemporary(for: building.appendingPathComponent(DeviceRoot.recordFileName, isDirectory: false))
        try AtomicFile.syncDirectory(store)
        try AtomicFile.syncDirectory(building)
        try AtomicFile.move(building, to: root.spareStoreDirectory(kind))
    }
}

extension DocumentLibrary {
    /// Makes a spare store of the backend new documents use, if this process keeps spares and
    /// none is ready (a long-lived process calls this when it starts).
    public func prepareSpareStores() async {
        guard configuration.keepsSpareStores else { return }
        await spareWork?.value
        // The container's folder is made ahead only in a container this process accepted.
        if settings.useCloud { await checkContainerOnce() }
        await Self.makeSpares(StoreKind(rawValue: settings.store) ?? .sqlite, spareWorkInputs())
    }

    /// Makes the spares due now and waits until they are ready (tests, and callers that want the
    /// next document's store to be a rename).
    public func waitForSpareStores() async {
        replenishTakenSpares()
        await finishSpareWork()
    }

    /// Waits for the spares being made, starting none.
    func finishSpareWork() async {
        while let work = spareWork {
            await work.value
            if spareWork == work { spareWork = nil }
        }
    }

    /// Makes again the spares documents took, off the library: called as `new` returns and as a
    /// pass ends, never while someone waits for the document that took one. The work runs on no
    /// actor of the library's, so a log that arrives meanwhile is imported at once (made on the
    /// library, the spare held its next pass back by the 2–4 ms it takes).
    ///
    /// Nor while a document this library discovered waits for its first log: the making's
    /// syncs queued on the disk ahead of that log's import, which comes milliseconds later
    /// (new → viewable took 10 ms instead of 3 when they met). A later pass makes them.
    func replenishTakenSpares() {
        guard configuration.keepsSpareStores else {
            sparesTaken = []
            return
        }
        guard !sparesTaken.isEmpty, awaitingFirstLog().isEmpty else { return }
        let kinds = sparesTaken
        sparesTaken = []
        let previous = spareWork, inputs = spareWorkInputs()
        spareWork = Task.detached {
            await previous?.value
            for kind in kinds.sorted(by: { $0.rawValue < $1.rawValue }) { await Self.makeSpares(kind, inputs) }
        }
    }

    /// How long a discovered document's first log is waited for before spares are made and its
    /// store closed anyway (its creator may have stopped between the two files).
    static let firstLogWait: TimeInterval = 2
    /// At most this many discovered documents wait so (a peer creating documents one by one
    /// makes one at a time; a join discovers thousands whose logs are there already).
    static let firstLogWaiters = 4

    /// Notes a document discovered without its log yet.
    func noteAwaitingFirstLog(_ id: DocumentID) {
        guard discoveredAwaitingLog.count < Self.firstLogWaiters else { return }
        discoveredAwaitingLog[id] = configuration.now()
    }

    /// The discovered documents still waiting for their first log, within ``firstLogWait``.
    func awaitingFirstLog() -> Set<DocumentID> {
        guard !discoveredAwaitingLog.isEmpty else { return [] }
        let now = configuration.now()
        discoveredAwaitingLog = discoveredAwaitingLog.filter { now.timeIntervalSince($0.value) < Self.firstLogWait }
        return Set(discoveredAwaitingLog.keys)
    }

    struct SpareWorkInputs: Sendable {
        var spares: SpareStores
        var handler: DocumentHandler
        /// The replicator, when this device publishes to a container it may use now.
        var cloud: Replicator?
        var logger: Logger
    }

    private func spareWorkInputs() -> SpareWorkInputs {
        SpareWorkInputs(
            spares: SpareStores(root: root, stores: configuration.stores), handler: handler,
            // Only into a container this process checked and accepted: a folder the device
            // refuses (not its container, say) gets nothing written into it.
            cloud: settings.useCloud && identityChecked ? cloud : nil, logger: logger)
    }

    /// Makes the spare of `kind` if none is ready and holds it open (the document that takes it
    /// carries on with it open), and this device's next document folder in the container.
    private static func makeSpares(_ kind: StoreKind, _ inputs: SpareWorkInputs) async {
        let held = await inputs.handler.heldSpareInode(kind)
        let opened = await Self.offThePool { () -> (store: any DocumentStore, inode: UInt64)? in
            let spares = inputs.spares
            var opened: (store: any DocumentStore, inode: UInt64)?
            do {
                try spares.replenish(kind)
                let url = spares.storeURL(kind)
                if let inode = FileIdentity(path: url.path)?.inode, held != inode {
                    let store = try spares.stores.open(kind, at: url, create: false)
                    _ = try? store.read()
                    opened = (store, inode)
                }
            } catch {
                inputs.logger.notice("cannot make a spare store; the next document's store is made when it is created", metadata: [
                    "store": "\(kind)", "folder": "\(spares.root.spareStoreDirectory(kind).path)", "error": "\(error)",
                ])
            }
            if let cloud = inputs.cloud, cloud.container.isAvailable {
                do {
                    try cloud.prepareDocumentFolder()
                } catch {
                    inputs.logger.notice("cannot make the next document's folder in the container ahead; it is made when the document is published", metadata: [
                        "error": "\(error)",
                    ])
                }
            }
            return opened
        }
        if let opened { await inputs.handler.keepHeldSpare(kind, opened.store, inode: opened.inode) }
    }

    /// The thread spares are made on: their syncs block a thread for milliseconds, and the
    /// cooperative pool has one per core (two here), which the imports and saves need.
    private static let spareQueue = DispatchQueue(label: "multidoc.spares", qos: .utility)

    private static func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            spareQueue.async { continuation.resume(returning: work()) }
        }
    }
}
