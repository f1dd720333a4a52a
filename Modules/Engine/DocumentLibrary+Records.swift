import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import Text

// The device's records of its documents.
extension DocumentLibrary {
    // MARK: Records

    /// Whether a discovered document has no local store yet (its first import makes it).
    func awaitsFirstImport(_ record: LocalDocumentRecord) -> Bool {
        guard record.origin == .discovered else { return false }
        // The store, not its folder: a process killed between the two leaves the folder.
        return !configuration.stores.exists(record.store, at: root.storeURL(record))
    }

    /// Every local record (checked against the record files: one `stat` each).
    ///
    /// With `reusingRecentCheck` (the master table and the end of a pass), a check of every
    /// record file made in the last ``recentCheck`` is taken as is: `list` right after the pass
    /// that checked them. This process's own writes are in the catalog either way.
    func allRecords(reusingRecentCheck: Bool = false) -> [LocalDocumentRecord] {
        if !reusingRecentCheck || recordsChecked.map({ ContinuousClock.now - $0 >= Self.recentCheck }) ?? true {
            catalog.refresh(root)
            recordsChecked = .now
        }
        return catalog.records
    }

    /// How long a look at every record file, or at a quiet document's stamps, serves the master
    /// table without looking again (the pass a command runs just before listing).
    static let recentCheck: Duration = .seconds(2)

    /// One local record, read again if its file changed.
    func localRecord(_ id: DocumentID) -> LocalDocumentRecord? { catalog.refresh(id, root) }

    /// Writes a record and notes it in the catalog (so the watcher's event for it is known as
    /// this process's own write).
    func saveRecord(_ record: LocalDocumentRecord, durable: Bool = true) throws(EngineError) {
        // A document's first record: its folder is the spare's when there is one.
        if SpareStores(root: root, stores: configuration.stores).takeDocumentFolder(record.store, for: record.id) {
            sparesTaken.insert(record.store)
        }
        try root.save(record, durable: durable)
        catalog.wrote(record, root)
    }

    /// Whether the record file of `id` is the one this process last read or wrote: a change
    /// seen there is its own, or already known.
    public func knowsRecordFile(_ id: DocumentID) -> Bool { catalog.knows(id, root) }

    /// Whether the catalog holds a document for every folder in `Documents/`: one `stat` (a
    /// folder's link count is two more than its subfolders) and, only when that disagrees
    /// (another folder there, or a file system that does not count links), one listing.
    func catalogHoldsEveryDocument() -> Bool {
        let held = catalog.count
        let folder = DirectoryHandle(path: root.documentsDirectory.path)
        if folder?.subfolderCount == held { return true }
        let listed = folder?.entries(".")?.lazy.filter { $0.isFolderOrUnknown && DocumentID($0.name) != nil }.count ?? 0
        return listed == held
    }

    /// How many documents the catalog holds, without checking the record files (the daemon's
    /// status after each pass: passes keep the catalog current).
    public func knownDocumentCount() -> Int { catalog.count }

    /// How many documents this device has (from the catalog, checked by `stat`).
    public func documentCount() -> Int {
        catalog.refresh(root)
        return catalog.count
    }

    /// Writes the catalog for the next process, if it changed. A failed write costs that
    /// process a slower first look.
    func saveCatalog() {
        do {
            try catalog.save(root.catalogURL)
        } catch {
            logger.debug("cannot write the catalog", metadata: ["error": "\(error)"])
        }
    }

    /// Moves a document's store to the other backend (one command for the user).
    public func convert(_ id: DocumentID, to kind: StoreKind) async throws {
        guard var record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        guard record.store != kind else { return }
        let document = try await open(record)
        let directory = root.storeDirectory(record)
        let target = directory.appendingPathComponent(kind.fileName, isDirectory: false)
        let converted = try configuration.stores.convert(document.store, to: kind, at: target)
        converted.close()
        await handler.close(id)
        let oldKind = record.store
        record.store = kind
        try saveRecord(record)
        try? configuration.stores.destroy(oldKind, at: directory.appendingPathComponent(oldKind.fileName, isDirectory: false))
        logger.info("converted document", metadata: ["name": "\(record.name)", "store": "\(kind)"])
    }
}
