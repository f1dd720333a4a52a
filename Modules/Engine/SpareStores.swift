#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Logging
import Settings
import Storage

/// Empty stores made ahead of time, one per backend, in the device's folder
/// (`<root>/.spare-<kind>/`, beside `Documents/`): a document's first store is then one rename
/// instead of a store made while someone waits.
///
/// Making a store creates five files and folders (its folder, the lock file, the store, and
/// SQLite's write-ahead log and shared-memory index) and syncs the store's first bytes; on ext4
/// each creation scans the inodes freed in the last seconds, and together they were a fifth of
/// new → viewable on each side (Docs/PERFORMANCE.md). A spare moves all of that to a moment
/// when nobody waits: after a document took the spare, and when a long-lived process starts.
///
/// A spare is always whole: it is built under `.spare-<kind>.building`, synced, and only then
/// renamed to its name; one process builds at a time (the others skip), and a build a crash
/// cut short is thrown away by the next. Taking it is one `rename(2)`: when two processes race,
/// one gets it and the other makes its store as before.
struct SpareStores: Sendable {
    let root: DeviceRoot
    let stores: StoreProvider

    /// Moves the spare store of `kind` to `folder` (a store's folder: absent or empty, its parent
    /// there). False when there is no spare or it cannot go there: the caller makes the store.
    func take(_ kind: StoreKind, as folder: URL) -> Bool {
        (try? AtomicFile.move(root.spareStoreDirectory(kind), to: folder)) != nil
    }

    /// Whether a spare of `kind` is ready.
    func isReady(_ kind: StoreKind) -> Bool { access(root.spareStoreDirectory(kind).path, F_OK) == 0 }

    /// Makes the spare of `kind` if there is none and no other process is making it.
    /// - Throws: ``FileIOError`` or ``StoreError`` when it cannot be made (the next document's
    ///   store is then made the old way; nothing else depends on a spare).
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
        if access(building.path, F_OK) == 0 { try FileManager.default.removeItem(at: building) }
        try AtomicFile.makeDirectory(building)
        let store = try stores.open(kind, at: building.appendingPathComponent(kind.fileName, isDirectory: false), create: true)
        store.close()
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
        makeSpareStore(StoreKind(rawValue: settings.store) ?? .sqlite)
    }

    /// Waits until the spare store being made, if any, is ready (tests, and callers that want the
    /// next document's store to be a rename).
    public func waitForSpareStores() async {
        while let work = spareWork {
            await work.value
            if spareWork == work { spareWork = nil }
        }
    }

    /// Makes again, once the library is free, the spares documents took: called as `new` returns
    /// and as a pass ends, never while someone waits for the document that took one (a task
    /// started as the spare was taken would run at the pass's next suspension, before its import).
    func replenishTakenSpares() {
        let kinds = sparesTaken
        sparesTaken = []
        guard configuration.keepsSpareStores, !kinds.isEmpty else { return }
        let previous = spareWork
        spareWork = Task { [weak self] in
            await previous?.value
            for kind in kinds.sorted(by: { $0.rawValue < $1.rawValue }) { await self?.makeSpareStore(kind) }
        }
    }

    private func makeSpareStore(_ kind: StoreKind) {
        let spares = SpareStores(root: root, stores: configuration.stores)
        do {
            try spares.replenish(kind)
        } catch {
            logger.notice("cannot make a spare store; the next document's store is made when it is created", metadata: [
                "store": "\(kind)", "folder": "\(root.spareStoreDirectory(kind).path)", "error": "\(error)",
            ])
        }
    }
}
