import FileIO
import Foundation
import Logging
import Model
import Storage
import Settings
import Sync

// Tombstones applied, documents discovered, damaged records repaired, the registry written.
extension DocumentLibrary {
    func quarantine(_ file: QuarantinedFile, in report: inout SyncReport) {
        guard !report.quarantined.contains(file) else { return }
        report.quarantined.append(file)
        emit(.quarantined(file.description))
        logger.warning("quarantined", metadata: ["file": "\(file.url.path)", "reason": "\(file.reason)"])
    }

    /// Remembers the stamp of a container folder whose contents this pass acted on, unless it
    /// is too recent to prove anything (a change in the same tick would not show).
    func actedOn(key: ContainerStampKey, stamp: FileStamp) {
        let recent = FileStamp.now() - 2_000_000_000
        // A missing folder (-1) is a stamp too: creating it changes it.
        catalog.setContainerStamp(key, stamp.modified > recent ? nil : stamp)
    }

    /// Drops local copies of documents a peer deleted, remembers those deletions, and writes
    /// again the tombstones of deletions the device remembers that the container lost
    /// (``healDeletions(_:scan:_:)``). Tombstones are read only when their folder changed (or
    /// with `always`: `container repair`); a folder with a damaged tombstone is read again next time.
    @discardableResult
    func applyTombstones(_ container: Container, always: Bool = false, _ report: inout SyncReport) async -> [DocumentID] {
        let stamp = container.stamp(.tombstones)
        guard always || catalog.containerStamps[.tombstones] != stamp else { return [] }
        let scan = container.applyTombstones()
        for file in scan.problems { quarantine(file, in: &report) }
        var remembered = rememberedDeletions()
        // Peers by name in the trash's BY column, read only when a peer's deletion is applied.
        var names: [DeviceID: String]?
        func deleterName(_ device: DeviceID) -> String {
            if device == identity.id { return "this device" }
            if names == nil { names = Dictionary(container.deviceRecords().map { ($0.device, $0.name) }, uniquingKeysWith: { first, _ in first }) }
            let short = String(device.description.prefix(8))
            return names?[device].map { "\($0) (\(short))" } ?? device.description
        }
        for record in allRecords() where record.location == .cloud && (scan.deleted.contains(record.id) || remembered[record.id] != nil) {
            let deleter = scan.deletedBy[record.id] ?? remembered[record.id]?.first?.deletedBy
            if remembered[record.id] == nil, let deleter {
                let entry = DeletionLedger.Entry(document: record.id, deletedBy: deleter, deletedAt: configuration.now(), container: containerID)
                remember(entry)
                remembered[record.id] = [entry]
            }
            await closeDocument(record.id)
            moveToTrash(record, deletedBy: deleter.map(deleterName) ?? "a peer")
            report.removed.append(record.name.rawValue)
            emit(.documentRemoved(record.id, name: record.name.rawValue))
            logger.info("document deleted by a peer", metadata: ["name": "\(record.name)", "uuid": "\(record.id)"])
        }
        let healed = healDeletions(remembered, scan: scan, &report)
        if scan.problems.isEmpty, healed.isEmpty { actedOn(key: .tombstones, stamp: stamp) } else { catalog.setContainerStamp(.tombstones, nil) }
        return healed
    }

    /// Gives every document the container has and this device does not a local record (looked
    /// for only when `documents/` changed, or among `only`; the store waits for the first
    /// import). What it found is in `report.discovered`.
    func discover(_ container: Container, only: Set<DocumentID>?, _ report: inout SyncReport) async {
        let stamp = container.stamp(.documents)
        if only == nil, catalog.containerStamps[.documents] == stamp { return }
        // What the catalog holds is known; a folder it does not hold may still have a record
        // made by another process since, which is read rather than discovered again.
        var known = catalog.ids
        if let only { for id in only where !known.contains(id) && localRecord(id) != nil { known.insert(id) } }
        // A document this device saw deleted is not found again, even while its tombstone is
        // lost (the pass that applies tombstones writes it again).
        let deleted = only == nil ? Set(rememberedDeletions().keys) : []
        var discovery = container.discover(known: known, only: only, inForce: containersInForce, deleted: deleted)
        // A damaged record is not rewritten behind the user's back (see repairDamagedRecords),
        // unless nothing but the record is there: a discovered record cut short by a power loss.
        discovery.found.removeAll { info in
            localRecord(info.document) != nil || (catalog.damaged[info.document] != nil && holdsMoreThanItsRecord(info.document))
        }
        for file in discovery.problems { quarantine(file, in: &report) }
        // A folder a `new` of this device left when it was killed before its info file went in
        // place: only its own temporary files, their process gone (full passes).
        if only == nil, let replicator {
            discovery.waiting.removeAll { id in
                guard localRecord(id) == nil, replicator.removeAbandonedNewDocument(id) else { return false }
                logger.notice("removed the folder a killed `new` left in the container", metadata: ["uuid": "\(id)"])
                return true
            }
        }
        catalog.reserve(more: discovery.found.count)
        for info in discovery.found {
            let record = LocalDocumentRecord(
                id: info.document, name: info.name, store: StoreKind(rawValue: settings.store) ?? .sqlite, origin: .discovered,
                location: .cloud, createdAt: info.createdAt, createdBy: info.createdBy, container: info.container ?? containerID)
            do {
                // The record only: the store is made by the pass that imports the document, so a
                // discovery never holds stores open. Not flushed to the disk: a record lost in a
                // crash is discovered again (the container has the document).
                try saveRecord(record, durable: false)
                // Its first log usually lands a moment after its info file.
                noteAwaitingFirstLog(record.id)
                report.discovered.append(info.name.rawValue)
                emit(.documentAdded(await summary(of: record)))
                logger.info("discovered document", metadata: ["name": "\(info.name)", "uuid": "\(record.id)", "creator": "\(info.createdByName)"])
            } catch {
                report.problems.append(.discovery(name: info.name.rawValue, detail: "\(error)"))
            }
        }
        // Nothing is remembered while a folder waits for its info file: the file lands inside
        // the document's folder, which does not change `documents/`.
        if only == nil, discovery.problems.isEmpty, discovery.waiting.isEmpty, report.problems.isEmpty {
            actedOn(key: .documents, stamp: stamp)
        }
    }

    /// Whether a document's local folder holds anything besides its record (a store folder).
    func holdsMoreThanItsRecord(_ id: DocumentID) -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.documentDirectory(id).path)) ?? []
        return names.contains { $0 != "document.json" && !$0.hasPrefix(".") && !$0.hasPrefix("damaged-") }
    }

    /// Record files this process found damaged. With AttemptErrorRecovery, a document the
    /// container has gets its record again from its info file (the damaged file is kept beside
    /// it for a bug report, and the store is then opened, or rebuilt, as usual); otherwise — or
    /// for a document only this device has — it is reported, so it never just vanishes from
    /// the list. Returns the rebuilt records.
    func repairDamagedRecords(_ container: Container, _ report: inout SyncReport) async -> [LocalDocumentRecord] {
        var rebuilt: [LocalDocumentRecord] = []
        for (id, reason) in catalog.damaged.sorted(by: { $0.key < $1.key }) {
            let path = root.recordURL(id).path
            let found = settings.attemptErrorRecovery
                ? container.discover(known: [], only: [id], inForce: containersInForce, deleted: []).found.first : nil
            guard let info = found else {
                let way = settings.attemptErrorRecovery
                    ? "the container does not have this document, so it cannot be rebuilt; its store is in \(root.documentsDirectory.path)/\(id)"
                    : "turn on AttemptErrorRecovery (`multidoc settings set AttemptErrorRecovery on`, or `--attempt-error-recovery on` for one command) to rebuild it from the container"
                report.problems.append(.document(name: id.description, detail: "its record \(path) is damaged (\(reason)); \(way)"))
                continue
            }
            let aside = root.recordURL(id).deletingLastPathComponent().appendingPathComponent("damaged-\(asideStamp())-document.json", isDirectory: false)
            let record = LocalDocumentRecord(
                id: id, name: info.name, store: StoreKind(rawValue: settings.store) ?? .sqlite, origin: .discovered,
                location: .cloud, createdAt: info.createdAt, createdBy: info.createdBy, container: info.container ?? containerID)
            do {
                try? FileManager.default.moveItem(atPath: path, toPath: aside.path)
                try saveRecord(record)
                rebuilt.append(record)
                let message = "rebuilt the damaged record of \(info.name) from the container (damaged file kept at \(aside.path); cause: \(reason))"
                recoveryReports[id] = message
                emit(.recovered(id, report: message))
                logger.warning("recovered record", metadata: ["name": "\(info.name)", "uuid": "\(id)", "cause": "\(reason)"])
            } catch {
                report.problems.append(.document(name: info.name.rawValue, detail: "its record \(path) is damaged (\(reason)) and could not be rebuilt: \(error)"))
            }
        }
        return rebuilt
    }

    /// Writes this device's registry file when what it has applied differs from what it last
    /// wrote there (or the file is not the one it wrote). Quiet documents give their applied
    /// map from the catalog, so this costs no store opened.
    /// `known`: what documents this pass worked have applied (the others' come from their quiet
    /// marks, or from their stores).
    func registerIfChanged(_ replicator: Replicator, known: [DocumentID: [DeviceID: UInt64]], _ report: inout SyncReport) async {
        // The digest is made while walking the records in order (no map of 10,000 maps built
        // for a registry that, most times, did not change); the map is built only to write it.
        var hash = FNV1a()
        // The format this build reads is in the entry too: an updated build registers again.
        hash.mix(UInt64(Container.formatVersion))
        // Documents without a quiet mark: what this pass worked, or what their stores hold.
        var unmarked: [DocumentID: [DeviceID: UInt64]] = [:]
        // Walked in UUID order through sorted indices (moving whole records while sorting cost
        // more than the walk).
        let records = allRecords(reusingRecentCheck: true).filter { $0.location == .cloud }
        let order = records.indices.sorted { records[$0].id < records[$1].id }
        for record in order.lazy.map({ records[$0] }) {
            let applied: [DeviceID: UInt64]
            if let mark = catalog.quiet(record.id) {
                applied = mark.applied
            } else if let worked = known[record.id] {
                applied = worked
                unmarked[record.id] = applied
            } else if let contents = try? await peek(record) {
                applied = contents.sync.applied
                unmarked[record.id] = applied
            } else {
                continue
            }
            Self.mix(record.id, applied, into: &hash)
        }
        let digest = hash.value
        if let registration = catalog.registration, registration.digest == digest,
           registration.stamp == replicator.container.registryStamp(of: identity.id) {
            return
        }
        var applied: [DocumentID: [DeviceID: UInt64]] = unmarked
        for record in records where unmarked[record.id] == nil {
            if let mark = catalog.quiet(record.id) { applied[record.id] = mark.applied }
        }
        do {
            try replicator.register(applied: applied)
            catalog.registration = (digest, replicator.container.registryStamp(of: identity.id))
        } catch {
            report.problems.append(.registration("\(error)"))
        }
    }
}
