import FileIO
import Foundation
import Logging
import Model
import Storage
import Settings
import Sync

// Quiet documents: the stamps that let a pass skip a document nothing changed.
extension DocumentLibrary {
    /// Mixes one document's applied map into a digest: its UUID, then each device's UUID and
    /// sequence in device order.
    static func mix(_ document: DocumentID, _ devices: [DeviceID: UInt64], into hash: inout FNV1a) {
        hash.mix(uuid: document.uuid)
        if devices.count == 1, let (device, sequence) = devices.first {
            hash.mix(uuid: device.uuid)
            hash.mix(sequence)
            return
        }
        for (device, sequence) in devices.sorted(by: { $0.key < $1.key }) {
            hash.mix(uuid: device.uuid)
            hash.mix(sequence)
        }
    }

    /// The trusted quiet mark of a document: its stamps are still the ones the pass saw.
    ///
    /// With `reusingRecentCheck` (the master table only, never a pass), a check made in the
    /// last ``DocumentLibrary/recentCheck`` is taken as is: `list` right after the pass that
    /// checked every document.
    func trustedQuietMark(_ record: LocalDocumentRecord, _ container: Container?, reusingRecentCheck: Bool = false) -> QuietMark? {
        guard let mark = catalog.quiet(record.id) else { return nil }
        if reusingRecentCheck, let checked = quietChecked[record.id], ContinuousClock.now - checked < Self.recentCheck {
            return mark
        }
        guard quietStamps(record, container)?.stamps == mark.stamps else { return nil }
        quietChecked[record.id] = .now
        return mark
    }

    /// The stamps that decide whether a document is still quiet: its container folders and its
    /// local store files (another process of this device saving changes them). Nil when any of
    /// them changed in the last two seconds: file times come from a coarse clock, so a change
    /// in the same tick would not show, and such a document is looked at again next time.
    func quietStamps(_ record: LocalDocumentRecord, _ container: Container?) -> Container.ChangeStamps? {
        Self.quietStamps(record, in: StampFolders(root, container), container, earlier: catalog.quiet(record.id)?.changeStamps)
    }

    /// The stamps of many documents, read on every core (they are `stat` calls: the whole cost
    /// of a pass where nothing changed), relative to folders opened once.
    func quietStamps(_ records: [LocalDocumentRecord], _ container: Container?) -> [Container.ChangeStamps?] {
        let folders = StampFolders(root, container)
        let earlier = records.map { catalog.quiet($0.id)?.changeStamps }
        return SideBySide.compute(records.count) { Self.quietStamps(records[$0], in: folders, container, earlier: earlier[$0]) }
    }

    /// The device's `Documents/` and the container's `documents/`, open for stamping.
    struct StampFolders: Sendable {
        var local: DirectoryHandle?
        var container: DirectoryHandle?

        init(_ root: DeviceRoot, _ container: Container?) {
            local = DirectoryHandle(path: root.documentsDirectory.path)
            self.container = container?.documentsFolder()
        }
    }

    /// `earlier`: the stamps of the document's quiet mark, whose device folders are stamped
    /// again without listing them when `logs/` did not change (see ``Container/changeStamps(_:earlier:in:)``).
    nonisolated static func quietStamps(
        _ record: LocalDocumentRecord, in folders: StampFolders, _ container: Container?, earlier: Container.ChangeStamps?
    ) -> Container.ChangeStamps? {
        var stamps = Container.ChangeStamps(stamps: [], devices: [])
        if record.location == .cloud, let container {
            stamps = container.changeStamps(record.id, earlier: earlier, in: folders.container)
        }
        stamps.stamps += storeStamps(record, in: folders.local)
        let recent = FileStamp.now() - 2_000_000_000
        return stamps.stamps.contains { $0.modified > recent } ? nil : stamps
    }

    /// The stamps of the files a commit to the document's store changes: the store file, and
    /// for SQLite its write-ahead log (a rollback-journal commit rewrites the store file itself,
    /// so the journal, there only during a transaction, adds nothing), for JSON the journal its
    /// commits append to.
    nonisolated static func storeStamps(_ record: LocalDocumentRecord, in documents: DirectoryHandle?) -> [FileStamp] {
        guard let documents else { return [FileStamp(modified: -1, size: 0)] }
        let store = record.id.description + "/" + record.storeFolder.rawValue + "/" + record.store.fileName
        switch record.store {
        case .json:
            return [FileStamp(in: documents, store), FileStamp(in: documents, store + ".journal")]
        case .sqlite:
            // An empty write-ahead log holds nothing (opening a WAL store makes one): the main
            // file's stamp covers it. A commit makes it grow.
            var wal = FileStamp(in: documents, store + "-wal")
            if wal.size == 0 { wal.modified = -1 }
            return [FileStamp(in: documents, store), wal]
        }
    }
}
