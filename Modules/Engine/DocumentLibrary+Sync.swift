import FileIO
import Foundation
import Logging
import Model
import Storage
import Settings
import Sync

extension DocumentLibrary {
    /// One sync pass: check the container and its identity, drop deleted documents, discover
    /// new ones, then for every cloud document ship its outbox, import what is waiting, and
    /// compact. Never throws: what went wrong is in the report and the events.
    ///
    /// With `documents`, a targeted pass (after inotify named the documents that changed): only
    /// those are discovered, shipped and imported; identity, tombstones, compaction and the
    /// registry wait for the next full pass.
    ///
    /// `progress`, if given, is called after each document of the pass with how many are done
    /// (front ends show it for long passes: a first sync of many documents, a large backlog).
    @discardableResult
    public func sync(documents only: Set<DocumentID>? = nil, progress: (@Sendable (SyncProgress) -> Void)? = nil) async -> SyncReport {
        var report = SyncReport()
        guard let replicator else {
            report.cloudAvailable = false
            return report
        }
        let container = replicator.container
        guard container.isAvailable else {
            report.cloudAvailable = false
            let detail = "container \(container.root.path) is unavailable; documents keep working locally and are shipped when it is back"
            report.problems.append(detail)
            report.containerError = .containerUnavailable(detail)
            if cloudAvailable {
                setCloudAvailable(false)
                emit(.cloudAvailability(available: false, detail: detail))
                logger.warning("container unavailable", metadata: ["path": "\(container.root.path)"])
            }
            return report
        }
        if !cloudAvailable {
            if !quiet.isEmpty { quiet = [:]; quietChanged = true }
            setCloudAvailable(true)
            emit(.cloudAvailability(available: true, detail: "container \(container.root.path) is available again"))
            logger.notice("container available again")
        }
        if only == nil || !identityChecked {
            do {
                guard try await checkIdentity(container, report: &report) else { return report }
                identityChecked = true
                containerID = (try? root.loadDevice(defaultName: identity.name, model: identity.model, newID: configuration.newUUID))?.containerID
                if containerRefusal != nil {
                    containerRefusal = nil
                    logger.notice("syncing with the container again", metadata: ["path": "\(container.root.path)"])
                }
            } catch {
                if case .containerFormat(let detail) = error as? EngineError { containerRefusal = detail }
                report.containerError = error as? EngineError ?? .containerUnavailable("\(error)")
                report.problems.append("\(error)")
                emit(.failure("\(error)"))
                return report
            }
        }

        if only == nil {
            for copy in container.sharedConflictCopies() {
                report.quarantined.append("\(copy.path): conflict copy made by the replication engine, not imported")
            }
        }
        let scan = only == nil ? container.scanTombstones() : (tombstones: [:], problems: [])
        let tombstones = scan.tombstones
        for file in scan.problems {
            report.quarantined.append(file.description)
            emit(.quarantined(file.description))
            logger.warning("quarantined", metadata: ["file": "\(file.url.path)", "reason": "\(file.reason)"])
        }
        for record in root.records() where record.location == .cloud && tombstones[record.id] != nil {
            await closeDocument(record.id)
            removeLocalCopy(record)
            report.removed.append(record.name.rawValue)
            emit(.documentRemoved(record.id, name: record.name.rawValue))
            logger.info("document deleted by a peer", metadata: ["name": "\(record.name)", "uuid": "\(record.id)"])
        }
        for id in tombstones.keys where FileManager.default.fileExists(atPath: container.documentDirectory(id).path) {
            // A straggler log arrived after the delete: the tombstone wins.
            container.remove(container.documentDirectory(id))
        }

        let records = root.records()
        let known = Set(records.map(\.id))
        let candidates = only.map { Array($0) } ?? container.documentIDs()
        for id in candidates where !known.contains(id) && tombstones[id] == nil {
            if only != nil, !container.tombstones(of: id).isEmpty { continue }
            // A folder of the container before a reset, still in this replica: not a document here.
            if container.isLeftOver(id, inForce: containersInForce) { continue }
            guard let info = container.infos(id).first else {
                if only == nil, let problem = container.symlinkProblem(container.documentDirectory(id).appendingPathComponent("logs", isDirectory: false)) {
                    report.quarantined.append("\(container.documentDirectory(id).path): \(problem)")
                }
                continue
            }
            let record = LocalDocumentRecord(
                id: id, name: info.name, store: StoreKind(rawValue: settings.store) ?? .sqlite, origin: .discovered,
                location: .cloud, createdAt: info.createdAt, createdBy: info.createdBy, container: info.container ?? containerID)
            do {
                _ = try await openDocument(record, create: true, forPass: true)
                try root.save(record)
                report.discovered.append(info.name.rawValue)
                emit(.documentAdded(await summary(of: record)))
                logger.info("discovered document", metadata: ["name": "\(info.name)", "uuid": "\(id)", "creator": "\(info.createdByName)"])
            } catch {
                report.problems.append("cannot create a local copy of \(info.name): \(error)")
            }
            await closeIfThePassOpened(id)
        }

        var applied: [DocumentID: [DeviceID: UInt64]] = [:]
        let passing = root.records().filter { $0.location == .cloud && (only?.contains($0.id) ?? true) }
        var registry: [DeviceRecord]?
        for (index, record) in passing.enumerated() {
            defer { progress?(SyncProgress(done: index + 1, total: passing.count, importedLogs: report.importedLogs)) }
            if only == nil, let mark = trustedQuietMark(record) {
                applied[record.id] = mark.applied
                report.skippedQuiet += 1
                continue
            }
            if quiet.removeValue(forKey: record.id) != nil { quietChanged = true }
            do {
                let document = try await open(record, forPass: true)
                if record.origin == .created,
                   !FileManager.default.fileExists(atPath: container.infoURL(record.id, device: identity.id).path) {
                    try publish(document, baseline: true)
                }
                let wasViewable = !(try document.read().graph.objects.isEmpty)
                report.exportedLogs += try replicator.flush(record.id, in: document.store).count
                let imported = try replicator.importPending(record.id, into: document.store)
                document.invalidate()
                let contents = try document.read()
                report.importedLogs += imported.imported.count
                for file in imported.quarantined {
                    report.quarantined.append(file.description)
                    emit(.quarantined(file.description))
                    logger.warning("quarantined", metadata: ["file": "\(file.url.path)", "reason": "\(file.reason)"])
                }
                let copies = container.conflictCopies(record.id)
                for copy in copies {
                    let note = "\(copy.path): conflict copy made by the replication engine, not imported"
                    if !report.quarantined.contains(note) { report.quarantined.append(note) }
                }
                let fromPeers = imported.imported.filter { $0.device != identity.id }
                if !imported.summary.isEmpty {
                    emit(.didImport(record.id, imported.summary, from: Array(Set(fromPeers.map(\.deviceName))).sorted()))
                    logger.info("imported", metadata: ["name": "\(record.name)", "logs": "\(imported.imported.count)"])
                }
                if !wasViewable, !contents.graph.objects.isEmpty { emit(.becameViewable(record.id)) }
                if imported.progress.percent < 100 { emit(.downloadProgress(record.id, percent: imported.progress.percent)) }
                if !fromPeers.isEmpty { await didImportFromPeers(record, logs: fromPeers) }
                if let carried = contents.graph.carriedName, carried != record.name.rawValue,
                   let newName = try? DocumentName(carried) {
                    await closeDocument(record.id)
                    var renamed = record
                    try renameFolder(of: &renamed, to: newName)
                }
                if only == nil {
                    if registry == nil { registry = container.deviceRecords() }
                    _ = try? replicator.compact(record.id, store: document.store, registry: registry)
                }
                applied[record.id] = contents.sync.applied
                if imported.quarantined.isEmpty, !imported.waitingForGap, imported.progress.percent >= 100,
                   contents.sync.outbox.isEmpty, copies.isEmpty, root.record(record.id) == record, let stamps = quietStamps(record, container) {
                    quiet[record.id] = QuietMark(
                        record: record, stamps: stamps, applied: contents.sync.applied, viewable: !contents.graph.objects.isEmpty,
                        modified: contents.graph.textEntry?.modified, markedAt: FileStamp.now())
                    quietChanged = true
                }
            } catch {
                report.problems.append("\(record.name): \(error)")
            }
            await closeIfThePassOpened(record.id)
        }
        await closeWhatThePassOpened()
        guard only == nil else { return report }
        saveQuietIndex(keeping: Set(passing.map(\.id)))
        do {
            try replicator.register(applied: applied)
        } catch {
            report.problems.append("\(error)")
        }
        return report
    }

    /// How long a quiet mark is trusted: five minutes, plus up to five more spread by document
    /// so that re-checks do not all land in one pass. Compaction and pruning depend on what
    /// other devices registered, which a document's own folders do not show.
    static func recheckAfter(_ id: DocumentID) -> Int64 {
        let spread = Int64(id.uuid.uuid.15) * 300_000_000_000 / 255
        return 300_000_000_000 + spread
    }

    /// The document's quiet mark, if it is still true: same record, same stamps, not too old.
    func trustedQuietMark(_ record: LocalDocumentRecord) -> QuietMark? {
        guard let mark = quiet[record.id], mark.record == record, let replicator,
              FileStamp.now() - mark.markedAt < Self.recheckAfter(record.id),
              quietStamps(record, replicator.container) == mark.stamps else { return nil }
        return mark
    }

    static func loadQuietIndex(_ root: DeviceRoot) -> [DocumentID: QuietMark] {
        guard let data = try? Data(contentsOf: root.quietIndexURL),
              let marks = try? JSONDecoder.multidoc.decode([QuietMark].self, from: data) else { return [:] }
        return Dictionary(marks.map { ($0.record.id, $0) }) { first, _ in first }
    }

    /// Writes the quiet marks of documents that still exist, if they changed. A failed write
    /// only costs the next process a slower pass.
    func saveQuietIndex(keeping ids: Set<DocumentID>) {
        let stale = quiet.keys.filter { !ids.contains($0) }
        for id in stale { quiet[id] = nil }
        guard quietChanged || !stale.isEmpty else { return }
        let marks = quiet.values.sorted { $0.record.id < $1.record.id }
        guard let data = try? JSONEncoder.multidoc.encode(marks) else { return }
        do {
            try AtomicFile.write(data, to: root.quietIndexURL, durable: false)  // a cache: a crash costs one slower pass
            quietChanged = false
        } catch {
            logger.debug("cannot write the quiet index", metadata: ["error": "\(error)"])
        }
    }

    /// The stamps that decide whether a document is still quiet: its container folders and its
    /// local store files (another process of this device saving changes them). Nil when any of
    /// them changed in the last two seconds: file times come from a coarse clock, so a change
    /// in the same tick would not show, and such a document is looked at again next time.
    func quietStamps(_ record: LocalDocumentRecord, _ container: Container) -> [FileStamp]? {
        let store = root.storeURL(record).path
        // An empty write-ahead log holds nothing (opening a WAL store makes one): the main file's
        // stamp covers it. A commit makes it grow.
        var wal = FileStamp(path: store + "-wal")
        if wal.size == 0 { wal.modified = -1 }
        let stamps = container.folderSignature(record.id)
            + [FileStamp(path: store), wal, FileStamp(path: store + "-journal")]
        let recent = FileStamp.now() - 2_000_000_000
        return stamps.contains { $0.modified > recent } ? nil : stamps
    }

    /// Whether to go on syncing with this container; asks the front end's policy if its
    /// identity changed (seed 002).
    private func checkIdentity(_ container: Container, report: inout SyncReport) async throws -> Bool {
        var device = try root.loadDevice(defaultName: identity.name, model: identity.model, newID: configuration.newUUID)
        let identities: [ContainerIdentity]
        switch Result(catching: { () throws(SyncError) -> [ContainerIdentity] in try container.identities() }) {
        case .success(let found):
            identities = found
        case .failure(let error):
            if case .unknownFormat = error.kind { throw EngineError.containerFormat(error.description) }
            throw EngineError.containerUnavailable(error.description)
        }
        let current = Container.elect(identities)
        let replaced = Container.replacedIDs(identities)
        // In force: every identity present that no reset replaced (both sides of a seeding race).
        let inForce = Set(identities.map(\.containerID)).subtracting(replaced)
        containersInForce = inForce
        let hasCloudDocuments = root.records().contains { $0.location == .cloud }
        if let remembered = device.containerID {
            if current?.containerID == remembered { return true }
            if !replaced.contains(remembered), identities.contains(where: { $0.containerID == remembered }), let current {
                // Two devices seeded an empty container at once; the smaller UUID wins for all.
                device.containerID = current.containerID
                try root.saveDevice(device)
                return true
            }
            if current == nil, !hasCloudDocuments {
                device.containerID = try container.seedIdentity(device: identity.id, now: configuration.now(), newID: configuration.newUUID()).containerID
                try root.saveDevice(device)
                return true
            }
            let found = current?.containerID.uuidString.lowercased()
            let message = SyncError(.identityChanged(remembered: remembered.uuidString.lowercased(), found: found), path: container.root.path).description
            if let containerRefusal, containerRefusal == message + "; staying local" {
                // Asked already in this process, and nothing changed since.
                report.containerError = .containerUnavailable(containerRefusal)
                report.problems.append(containerRefusal)
                return false
            }
            emit(.containerChanged(message))
            logger.warning("container identity changed", metadata: ["remembered": "\(remembered)", "found": "\(found ?? "none")"])
            switch configuration.onContainerChange(message) {
            case .adoptNew:
                // What was shared under another identity stays behind: folders of the old
                // container may still be in this replica, so a record says where it was shared
                // (records of earlier versions fall back on what the replica holds).
                let adoptedID = current?.containerID ?? configuration.newUUID()
                let present = Set(container.documentIDs().filter { !container.isLeftOver($0, inForce: [adoptedID]) })
                for var record in root.records() where record.location == .cloud
                    && !(record.container.map { $0 == adoptedID } ?? present.contains(record.id)) {
                    await closeDocument(record.id)
                    record.location = .local
                    record.container = nil
                    try root.save(record)
                    report.problems.append("\(record.name) is not in the new container; kept as a local document")
                }
                let adopted = try current ?? container.seedIdentity(
                    device: identity.id, now: configuration.now(), newID: adoptedID, replacing: [remembered])
                containersInForce = [adopted.containerID]
                device.containerID = adopted.containerID
                try root.saveDevice(device)
                return true
            case .stayLocal:
                // Nothing is demoted: a mistyped --container or a replica that is briefly wrong
                // must not detach every document for good. Saves wait in their outboxes until
                // the known identity is back or the user adopts this container.
                let refusal = message + "; staying local"
                containerRefusal = refusal
                report.containerError = .containerUnavailable(refusal)
                report.problems.append(refusal)
                return false
            }
        }
        let seeded = try current ?? container.seedIdentity(device: identity.id, now: configuration.now(), newID: configuration.newUUID())
        device.containerID = seeded.containerID
        try root.saveDevice(device)
        return true
    }
}
