import FileIO
import Foundation
import Model
import Sync

/// `<root>/deletions`: the cloud documents this device deleted, or whose deletion by a peer it
/// applied, one a line: `<document>\t<deleted by>\t<deleted at, ms since 1970>\t<container or ->`.
///
/// A tombstone in the container is the only thing that carries a deletion to the other devices,
/// and a tombstone that is damaged or removed there carries nothing: the trash keeps a deleted
/// document 30 days, and only when it was downloaded here. The ledger stays, so a full pass
/// writes the device's tombstone again when the container lost it
/// (`DocumentLibrary.healDeletions`; Docs/DECISIONS.md, "A deletion outlives its tombstone").
///
/// Append-only: each entry is appended in one `write` and synced, so processes sharing the root
/// never lose each other's lines; a line that does not read (torn by a crash) is skipped.
struct DeletionLedger: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var document: DocumentID
        var deletedBy: DeviceID
        var deletedAt: Date
        /// The container identity the document was deleted from (nil: not known).
        var container: UUID?

        var line: String {
            let milliseconds = deletedAt.clampedMilliseconds
            return "\(document)\t\(deletedBy)\t\(milliseconds)\t\(container.map { $0.uuidString.lowercased() } ?? "-")\n"
        }

        init(document: DocumentID, deletedBy: DeviceID, deletedAt: Date, container: UUID?) {
            self.document = document
            self.deletedBy = deletedBy
            self.deletedAt = deletedAt
            self.container = container
        }

        init?(line: Substring) {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 4, let document = DocumentID(String(fields[0])), let device = DeviceID(String(fields[1])),
                  let milliseconds = Int64(fields[2]), milliseconds >= 0, UInt64(milliseconds) <= ContainerBounds.maximumWall else { return nil }
            let container: UUID?
            if fields[3] == "-" {
                container = nil
            } else {
                guard let id = UUID(uuidString: String(fields[3])) else { return nil }
                container = id
            }
            self.init(document: document, deletedBy: device, deletedAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000), container: container)
        }
    }

    /// Every entry, in the order written (a document may have several: its own and a peer's).
    var entries: [Entry] = []

    /// The ledger at `url` (empty when there is none or it cannot be read).
    static func read(_ url: URL) -> DeletionLedger {
        guard let data = try? AtomicFile.read(url, limit: maximumSize) else { return DeletionLedger() }
        let text = String(decoding: data, as: UTF8.self)
        // A last line without its newline was torn by a crash: skipped.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        if !text.hasSuffix("\n"), !lines.isEmpty { lines.removeLast() }
        return DeletionLedger(entries: lines.compactMap(Entry.init(line:)))
    }

    /// Appends `entry` to the ledger at `url` durably (made when there is none).
    static func append(_ entry: Entry, to url: URL) throws(EngineError) {
        do {
            if !FileManager.default.fileExists(atPath: url.path) {
                try AtomicFile.writeOnce(Data(), to: url)
            }
            try AtomicFile.append(Data(entry.line.utf8), to: url)
            try AtomicFile.sync(url)
        } catch {
            throw EngineError.io(url.path, "cannot record the deletion of \(entry.document): \(error)")
        }
    }

    /// The most a ledger is read of: a million deletions.
    static let maximumSize = 128 << 20

    /// The entries of documents deleted from `container` (or from a container not known), by
    /// document; this device's own deletion first.
    func byDocument(in container: UUID?, device: DeviceID) -> [DocumentID: [Entry]] {
        var result: [DocumentID: [Entry]] = [:]
        for entry in entries where entry.container == nil || container == nil || entry.container == container {
            result[entry.document, default: []].append(entry)
        }
        return result.mapValues { entries in entries.sorted { ($0.deletedBy == device ? 0 : 1) < ($1.deletedBy == device ? 0 : 1) } }
    }
}
