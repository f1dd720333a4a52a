import Foundation
import Logging
import Model
import Sync

/// Deletions that outlive their tombstones (``DeletionLedger``; Docs/DECISIONS.md, "A deletion
/// outlives its tombstone").
extension DocumentLibrary {
    /// Deletes `id` from the container (its tombstone, its folder) and remembers the deletion
    /// in the device's ledger, so a full pass writes the tombstone again if the container loses it.
    func deleteFromContainer(_ id: DocumentID, _ replicator: Replicator) throws(SyncError) {
        let tombstone = try replicator.delete(id)
        remember(DeletionLedger.Entry(document: id, deletedBy: identity.id, deletedAt: tombstone.deletedAt, container: containerID))
    }

    /// Adds `entry` to the ledger. A ledger that cannot be written is said, not thrown: the
    /// deletion itself is done (its tombstone is in the container).
    func remember(_ entry: DeletionLedger.Entry) {
        do {
            try DeletionLedger.append(entry, to: root.deletionsURL)
        } catch {
            logger.warning("could not record a deletion in the device's ledger", metadata: ["error": "\(error)"])
        }
    }

    /// The documents the ledger says were deleted from the container in force, by document.
    func rememberedDeletions() -> [DocumentID: [DeletionLedger.Entry]] {
        DeletionLedger.read(root.deletionsURL).byDocument(in: containerID, device: identity.id)
    }

    /// Writes this device's tombstone again for each deletion it remembers whose tombstone the
    /// container lost (`scan`: the valid tombstones there now): a deletion made here when this
    /// device's own tombstone is missing or damaged; a peer's deletion applied here when no
    /// valid tombstone of the document is left at all (under this device's name: it writes
    /// no other device's file). Returns the documents whose tombstone it wrote.
    func healDeletions(_ remembered: [DocumentID: [DeletionLedger.Entry]], scan: TombstoneScan, _ report: inout SyncReport) -> [DocumentID] {
        guard let replicator = cloud else { return [] }
        var written: [DocumentID] = []
        for (id, entries) in remembered.sorted(by: { $0.key < $1.key }) {
            guard let first = entries.first else { continue }
            let valid = scan.deleters[id] ?? []
            let mine = first.deletedBy == identity.id
            guard mine ? !valid.contains(identity.id) : valid.isEmpty else { continue }
            do {
                try replicator.writeTombstone(id, deletedAt: first.deletedAt)
                written.append(id)
                logger.notice("wrote a lost tombstone again", metadata: [
                    "uuid": "\(id)", "deletedBy": "\(first.deletedBy)", "own": "\(mine)",
                ])
            } catch {
                report.problems.append(.document(
                    name: id.description, detail: "deleted, but its tombstone is not in the container and cannot be written again: \(error)"))
            }
        }
        return written
    }
}
