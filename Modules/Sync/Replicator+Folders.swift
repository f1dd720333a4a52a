#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
import Synchronization
import Text

// A document's folder made ahead, publishing, and tombstones.
extension Replicator {
    // MARK: A document folder made ahead

    /// Makes this device's next document folder ahead, if it is not there: `logs/<device>/` and
    /// empty files for the info file and the first log, under `documents/.spare-<device>`
    /// (a dot name: every reader, `container verify` and the watchers' reports skip it).
    /// Publishing a document then renames it into place and fills those files: no folder or
    /// file is made in the container while `new` waits (on ext4 each creation scans the inodes
    /// freed in the last seconds; five of them were a fifth of new → viewable). Built under a
    /// `.building` name, synced, then renamed, so a spare is always whole.
    public func prepareDocumentFolder() throws {
        try container.checkAvailable()
        let spare = container.spareDocumentDirectory(device: device.id)
        if FileManager.default.fileExists(atPath: Container.logsDirectory(inDocumentFolder: spare, device: device.id).path) { return }
        let building = container.documentsDirectory.appendingPathComponent(".spare-\(device.id).building", isDirectory: false)
        let logs = Container.logsDirectory(inDocumentFolder: building, device: device.id)
        if let problem = container.symlinkProblem(building) { throw SyncError(.writeFailed, path: building.path, detail: problem) }
        do {
            if FileManager.default.fileExists(atPath: building.path) { try FileManager.default.removeItem(at: building) }
            try AtomicFile.makeDirectory(logs, below: container.root)
            try AtomicFile.makeSpareTemporary(for: Container.infoURL(inDocumentFolder: building, device: device.id))
            try AtomicFile.makeSpareTemporary(for: logs.appendingPathComponent(Container.logFileName(1), isDirectory: false))
            try AtomicFile.syncDirectory(logs)
            try AtomicFile.syncDirectory(logs.deletingLastPathComponent())
            try AtomicFile.syncDirectory(building)
            try AtomicFile.move(building, to: spare)
        } catch {
            throw SyncError(.writeFailed, path: spare.path, detail: "\(error)")
        }
    }

    /// Renames this device's document folder made ahead to `document`'s, when that is not there.
    func takeDocumentFolder(_ document: DocumentID) {
        let folder = container.documentDirectory(document)
        guard !FileManager.default.fileExists(atPath: folder.path) else { return }
        try? AtomicFile.move(container.spareDocumentDirectory(device: device.id), to: folder)
    }

    /// Deletes a document for every device: a tombstone that stays, and the document's folder.
    /// Returns the tombstone written.
    @discardableResult
    public func delete(_ document: DocumentID) throws(SyncError) -> DocumentTombstone {
        let tombstone = try writeTombstone(document, deletedAt: now())
        container.remove(container.documentDirectory(document))
        return tombstone
    }

    /// Writes this device's tombstone of `document` (replacing a damaged one of its own): for a
    /// delete, and again when the tombstone of a deletion this device made or applied is gone
    /// from the container or damaged there, so the deletion still reaches every device.
    @discardableResult
    public func writeTombstone(_ document: DocumentID, deletedAt: Date) throws(SyncError) -> DocumentTombstone {
        try container.checkAvailable()
        // Peers apply tombstones only from registered devices.
        try registerIfMissing()
        let tombstone = DocumentTombstone(document: document, deletedBy: device.id, deletedAt: deletedAt)
        try container.writeJSON(tombstone, to: container.tombstoneURL(document, device: device.id))
        return tombstone
    }
}
