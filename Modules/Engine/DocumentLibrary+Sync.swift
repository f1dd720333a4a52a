import FileIO
import Foundation
import Logging
import Model
import Storage
import Settings
import Sync

/// What a sync pass looks at.
enum PassScope: Sendable, Equatable {
    /// Every document; quiet ones (stamps unchanged) cost a few `stat` calls and are skipped.
    /// Container-wide work (tombstones, discovery, the registry) runs when its folder changed.
    case full
    /// Only these documents (the watcher named them); nothing container-wide.
    case documents(Set<DocumentID>)
    /// A command's pass: container-wide work when its folders changed, then one document.
    case command(DocumentID?)

    var isFull: Bool { self == .full }
}

extension DocumentLibrary {
    /// One sync pass: check the container and its identity, drop deleted documents, discover
    /// new ones, then for every cloud document that changed ship its outbox, import what is
    /// waiting, and compact. Never throws: what went wrong is in the report and the events.
    ///
    /// A document whose container folders and local store files have the stamps a pass saw when
    /// it found the document quiet is skipped without opening its store; tombstones are read and
    /// new documents looked for only when their folders changed. So a pass over thousands of
    /// documents where nothing changed costs a few `stat` calls per document.
    ///
    /// With `documents`, a targeted pass (after the watcher named the documents that changed):
    /// only those are discovered, shipped and imported; tombstones, compaction and the registry
    /// wait for the next full pass.
    ///
    /// `progress`, if given, is called after each document of the pass with how many are done
    /// (front ends show it for long passes: a first sync of many documents, a large backlog).
    ///
    /// `firstImports` says when a full pass makes the stores of documents it discovered (see
    /// ``FirstImports``); a targeted pass always imports the documents it was given.
    ///
    /// `arrivals`: for some of `documents`, the logs the watcher saw arrive and nothing else.
    /// Such a document imports just those logs when they continue what it applied (no listing,
    /// no stamps: the path an edit takes from one device to the next), and gets the whole
    /// targeted pass otherwise.
    @discardableResult
    public func sync(
        documents only: Set<DocumentID>? = nil, arrivals: [DocumentID: [DeviceID: Set<UInt64>]] = [:], firstImports: FirstImports = .now,
        progress: (@Sendable (SyncProgress) -> Void)? = nil
    ) async -> SyncReport {
        await pass(only.map { .documents($0) } ?? .full, arrivals: arrivals, firstImports: firstImports, progress: progress)
    }

    /// A command's pass: brings `document` up to date (ships its outbox, imports what waits for
    /// it) and learns cheaply what else is new in the container: deletes and new documents,
    /// read only when their folders changed since this device last looked (a new document gets
    /// its record; its store waits until something needs it). Other documents' new logs wait
    /// for a full pass (`multidoc sync`, `list`, or the daemon).
    @discardableResult
    public func refresh(_ document: DocumentID?, progress: (@Sendable (SyncProgress) -> Void)? = nil) async -> SyncReport {
        await pass(.command(document), progress: progress)
    }

    func pass(
        _ scope: PassScope, arrivals: [DocumentID: [DeviceID: Set<UInt64>]] = [:], firstImports: FirstImports = .now,
        progress: (@Sendable (SyncProgress) -> Void)?
    ) async -> SyncReport {
        var report = SyncReport()
        var scope = scope
        // Targeted passes follow single saves and must stay fast: the catalog is written by
        // full and command passes, when the library closes, and by a targeted pass that
        // changed records (a discovery, a rename), so commands resolve the new names at once.
        var recordsChanged = false
        defer {
            replenishTakenSpares()
            if case .documents = scope {
                if recordsChanged || !report.discovered.isEmpty { saveCatalog() }
            } else {
                saveCatalog()
            }
        }
        guard var replicator else {
            report.cloudAvailable = false
            return report
        }
        let container = replicator.container
        guard container.isAvailable else {
            report.cloudAvailable = false
            // A folder that is not there and that this device never synced through is a wrong
            // path or a folder not made yet: an error to fix, not a drive that is away.
            let remembered = (try? root.loadDevice(defaultName: identity.name, model: identity.model, newID: configuration.newUUID))?
                .containerID != nil
            if let error = DeviceSetup.missingContainer(container.root, remembered: remembered) {
                report.problems.append(.container(error))
                report.containerError = error
                return report
            }
            let detail = "container \(container.root.path) is unavailable; documents keep working locally and are shipped when it is back"
            report.containerError = .containerUnavailable(detail)
            report.problems.append(.container(.containerUnavailable(detail)))
            if cloudAvailable {
                setCloudAvailable(false)
                emit(.cloudAvailability(available: false, detail: detail))
                logger.warning("container unavailable", metadata: ["path": "\(container.root.path)"])
            }
            return report
        }
        if !cloudAvailable {
            setCloudAvailable(true)
            emit(.cloudAvailability(available: true, detail: "container \(container.root.path) is available again"))
            logger.notice("container available again")
        }
        if scope.isFull || !identityChecked {
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
                let engineError = error as? EngineError ?? .containerUnavailable("\(error)")
                report.containerError = engineError
                report.problems.append(.container(engineError))
                emit(.failure("\(error)"))
                return report
            }
            // The check may have learnt the container's format (and what it refuses).
            replicator = self.replicator ?? replicator
        }
        if case .documents(var ids) = scope, !arrivals.isEmpty {
            for (id, logs) in arrivals.sorted(by: { $0.key < $1.key }) where ids.contains(id) {
                if await importArrived(id, logs: logs, replicator: replicator, report: &report) { ids.remove(id) }
            }
            guard !ids.isEmpty else { return report }
            scope = .documents(ids)
        }

        let only: Set<DocumentID>?
        switch scope {
        case .full, .command: only = nil
        case .documents(let ids): only = ids
        }
        if scope.isFull {
            for copy in container.conflictCopies(in: nil) { quarantine(copy, in: &report) }
        }
        if only == nil { await applyTombstones(container, &report) }
        await discover(container, only: only, &report)

        var passing: [LocalDocumentRecord]
        switch scope {
        case .full:
            passing = allRecords().filter { $0.location == .cloud }
        case .documents(let ids):
            passing = ids.compactMap { localRecord($0) }.filter { $0.location == .cloud }
        case .command(let id):
            passing = (id.map { [$0] } ?? []).compactMap { localRecord($0) }.filter { $0.location == .cloud }
        }
        if only == nil { passing += await repairDamagedRecords(container, &report).filter { $0.location == .cloud } }
        passing.sort { $0.id < $1.id }
        let registry = RegistrySnapshot(container)
        let registryStamp = container.peerRegistryStamp(excluding: identity.id)
        let registryChanged = scope.isFull && catalog.containerStamps["devices"] != registryStamp
        if only == nil { readClocks(container, registryStamp: registryStamp, &report) }
        var busy: [LocalDocumentRecord] = []
        // A preview stands for an import only in a pass that previews: any other imports.
        let previewing = scope.isFull && firstImports == .whenNeeded
        let stamps = quietStamps(passing, container)
        let checkedAt = ContinuousClock.now
        quietChecked.reserveCapacity(passing.count)
        for (record, stamp) in zip(passing, stamps) {
            if let mark = catalog.quiet(record.id), let stamp, stamp.stamps == mark.stamps, previewing || !mark.preview {
                quietChecked[record.id] = checkedAt
                report.skippedQuiet += 1
                if registryChanged, mark.ownLogs > 0 {
                    // Others may have applied this device's logs since: prune what they all have.
                    if replicator.prune(record.id, registry: registry) > 0 {
                        catalog.setQuiet(record.id, nil)
                    }
                }
                continue
            }
            busy.append(record)
        }
        var done = report.skippedQuiet
        if done > 0 { progress?(SyncProgress(done: done, total: passing.count, importedLogs: 0)) }
        if previewing {
            let previews = busy.filter { awaitsFirstImport($0) }
            // A few are imported for real, as any pass would: what `list` then says of them
            // (downloaded, viewable, in the trash once a peer deletes them) holds with the
            // container gone. Only a device joining many at once previews them.
            if previews.count > Self.importsBeforePreviewing {
                let ids = Set(previews.map(\.id))
                busy.removeAll { ids.contains($0.id) }
                let imported = report.importedLogs
                await preview(previews, container: container, replicator: replicator, report: &report) { count in
                    done += count
                    progress?(SyncProgress(done: done, total: passing.count, importedLogs: imported))
                }
            }
        }
        // Documents with something to do, a batch at a time: opened here (the handler, error
        // recovery and publishing are the library's), their store and container work run side
        // by side off the library (each on its own store), then what they did is told here.
        // What each document worked here has applied: registering reads them from here
        // instead of loading the stores again (a whole store, to read one map).
        var worked: [DocumentID: [DeviceID: UInt64]] = [:]
        var start = busy.startIndex
        while start < busy.endIndex {
            let end = min(start + Self.passBatch, busy.endIndex)
            let batch = Array(busy[start..<end])
            for record in batch {
                catalog.setQuiet(record.id, nil)
                quietChecked[record.id] = nil
            }
            var opened: [(LocalDocumentRecord, OpenDocument)] = []
            for (record, result) in zip(batch, await openSideBySide(batch)) {
                do {
                    let document = try result.get()
                    if record.origin == .created, !container.isPublished(record.id, by: identity.id) {
                        do { try publish(document, baseline: true) } catch { throw UnshippedSaves(cause: error) }
                    } else if scope.isFull, record.origin != .created, !container.isPublished(record.id, by: record.createdBy),
                              !container.isListed(record.id) {
                        // No device's info file stands (removed, or replaced by another
                        // document's): this device holds the document and publishes it, so a
                        // device joining later still finds it.
                        do { try publish(document, baseline: true) } catch { throw UnshippedSaves(cause: error) }
                        logger.notice("document published again", metadata: ["document": "\(record.id)"])
                    }
                    opened.append((record, document))
                } catch {
                    report.problems.append(Self.problem(record, error))
                    await closeIfThePassOpened(record.id)
                }
            }
            start = end
            let results = await Self.work(opened, replicator: replicator, compactWith: scope.isFull ? registry : nil)
            for ((record, document), result) in zip(opened, results) {
                done += 1
                defer { progress?(SyncProgress(done: done, total: passing.count, importedLogs: report.importedLogs)) }
                do {
                    let outcome = try result.get()
                    worked[record.id] = outcome.contents.sync.applied
                    if try await tell(outcome, record: record, container: container, replicator: replicator, report: &report) {
                        recordsChanged = true
                    }
                } catch {
                    report.problems.append(Self.problem(record, error))
                }
                document.store.checkpointIfDue()
                await closeIfThePassOpened(record.id)
            }
        }
        await closeWhatThePassOpened()
        // Registry entries that claim more of this device's logs than it wrote: not used for pruning.
        for file in registry.refusedClaims { quarantine(file, in: &report) }
        guard scope.isFull else { return report }
        fullPassDone = true
        if registryChanged { actedOn(key: "devices", stamp: registryStamp) }
        await registerIfChanged(replicator, known: worked, &report)
        return report
    }

    /// This device's saves that wait in an outbox because another file holds their slot in the
    /// container (``Replicator/takenSlot(_:outbox:)``), one problem per document, with its way
    /// out. Reads the stores of documents a pass did not find quiet (a quiet one shipped all it
    /// had) and the container; changes nothing (`status`, `container verify`).
    public func stuckSaves() async -> [SyncProblem] {
        guard let replicator else { return [] }
        var problems: [SyncProblem] = []
        for record in allRecords().filter({ $0.location == .cloud && catalog.quiet($0.id) == nil }).sorted(by: { $0.id < $1.id }) {
            guard let contents = try? await peek(record), !contents.sync.outbox.isEmpty,
                  let taken = replicator.takenSlot(record.id, outbox: contents.sync.outbox) else { continue }
            problems.append(.unshipped(name: record.name.rawValue, detail: taken.summary, wayOut: taken.wayOut ?? .makeWritable))
        }
        return problems
    }

    /// Says when this device's clock and its peers' differ (``ClockSkew``), from the peers'
    /// registry entries, read again only when one of them changed (`registryStamp`).
    private func readClocks(_ container: Container, registryStamp: FileStamp, _ report: inout SyncReport) {
        if catalog.containerStamps["clocks"] != registryStamp {
            // File times follow the system clock; a test may give the device a clock of its own.
            let frame = configuration.now().timeIntervalSince(Date())
            catalog.clockReadings = container.clockReadings(excluding: identity.id, frame: frame)
            catalog.setContainerStamp("clocks", registryStamp)
        }
        for skew in ClockSkew.judge(catalog.clockReadings) {
            report.problems.append(.clock(skew))
        }
    }

    /// How long a log may be missing while a later one of its device is there before the pass
    /// reports the document as stalled (a replication engine delivers in any order, within
    /// seconds): one minute.
    static let stallAge: TimeInterval = 60

    /// Shipping a document's saves failed: a pass says so apart from other failures, so that
    /// `multidoc sync` does not exit 0 when peers got nothing.
    struct UnshippedSaves: Error {
        let cause: any Error
    }

    static func problem(_ record: LocalDocumentRecord, _ error: any Error) -> SyncProblem {
        if let error = error as? UnshippedSaves {
            // A save whose slot another copy of this root took needs a new identity; any other
            // failure to ship, a container that takes writes.
            let cause = error.cause as? SyncError
            return .unshipped(name: record.name.rawValue, detail: cause?.summary ?? "\(error.cause)", wayOut: cause?.wayOut ?? .makeWritable)
        }
        return .document(name: record.name.rawValue, detail: "\(error)")
    }

    /// How many documents with work a pass opens at once (bounds open stores and memory).
    static let passBatch = 16
    /// How many documents' store and container work run side by side.
    static let passWidth = 2

    /// What a pass did to one document's store (off the library).
    struct DocumentWork: Sendable {
        var before: StoreContents
        var exported: Int
        var imported: ImportReport
        var contents: StoreContents
        var copies: [QuarantinedFile]
    }

    /// Ships, imports and (with a registry) compacts each document: side by side, each on its
    /// own store. A single document runs inline (a targeted pass after one save).
    static func work(
        _ documents: [(LocalDocumentRecord, OpenDocument)], replicator: Replicator, compactWith registry: RegistrySnapshot?
    ) async -> [Result<DocumentWork, any Error>] {
        @Sendable func one(_ record: LocalDocumentRecord, _ document: OpenDocument) -> Result<DocumentWork, any Error> {
            Result {
                // Neither this copy nor the document's cache keeps the texts through the import,
                // which changes them in place (a text held twice is copied whole).
                var before = try document.read()
                before.sync.texts = [:]
                document.invalidate()
                let flushed: (written: [URL], steppedOver: [QuarantinedFile])
                do { flushed = try replicator.flushReporting(record.id, in: document.store) } catch { throw UnshippedSaves(cause: error) }
                let exported = flushed.written.count
                var imported = try replicator.importPending(record.id, into: document.store)
                imported.quarantined += flushed.steppedOver
                document.invalidate()
                let contents = try document.read()
                let copies = imported.conflictCopies
                if let registry {
                    _ = try? replicator.compact(record.id, store: document.store, registry: registry, after: imported)
                }
                return DocumentWork(before: before, exported: exported, imported: imported, contents: contents, copies: copies)
            }
        }
        return await SideBySide.map(documents, width: passWidth) { one($0.0, $0.1) }
    }

    /// Previews documents not imported yet, a batch at a time, on every core: their logs read
    /// into memory, so the master table can say whether each is viewable, and a quiet mark that
    /// says so when the container holds all of it. Nothing is written but the catalog.
    private func preview(
        _ records: [LocalDocumentRecord], container: Container, replicator: Replicator, report: inout SyncReport,
        done: (Int) -> Void
    ) async {
        var start = records.startIndex
        while start < records.endIndex {
            let end = min(start + Self.previewBatch, records.endIndex)
            let batch = Array(records[start..<end])
            start = end
            let results = SideBySide.compute(batch.count) { index -> Result<(ImportReport, StoreContents), any Error> in
                let record = batch[index]
                return Result {
                    let store = try MemoryStore.scratch(record.store)
                    let imported = try replicator.importPending(record.id, into: store)
                    return (imported, try store.read())
                }
            }
            for (record, result) in zip(batch, results) {
                guard let result else { continue }
                switch result {
                case .success(let (imported, contents)):
                    for file in imported.quarantined { quarantine(file, in: &report) }
                    guard imported.isComplete else { continue }
                    // A rename a peer saved shows at once, as an import would show it.
                    if let carried = contents.graph.carriedName, carried != record.name.rawValue, let newName = try? DocumentName(carried) {
                        var renamed = record
                        do {
                            try renameRecord(&renamed, to: newName)
                        } catch {
                            report.problems.append(.document(name: record.name.rawValue, detail: "\(error)"))
                        }
                    }
                    previewed[record.id] = (!contents.graph.objects.isEmpty, contents.graph.textEntry?.modified, .now)
                    guard let stamps = quietStamps(record, container) else { continue }
                    catalog.setQuiet(record.id, QuietMark(
                        stamps: stamps.stamps, devices: stamps.devices, applied: [:], viewable: !contents.graph.objects.isEmpty,
                        modified: contents.graph.textEntry?.modified, ownLogs: 0, preview: true))
                case .failure(let error):
                    report.problems.append(.document(name: record.name.rawValue, detail: "\(error)"))
                }
            }
            done(batch.count)
        }
    }

    /// How many documents a pass previews at once (bounds the logs held in memory).
    static let previewBatch = 256
    /// The most discovered documents a previewing pass (`list`) imports instead: past this it
    /// previews them all, so that a device joining thousands of documents lists them at once.
    public static let importsBeforePreviewing = 64

    /// Opens a batch of documents (a first import creates each store: the slow part of joining
    /// a container), several at a time: while one open waits on the disk, the next starts.
    private func openSideBySide(_ records: [LocalDocumentRecord]) async -> [Result<OpenDocument, any Error>] {
        await SideBySide.map(records, width: Self.passWidth) { record in
            do { return .success(try await self.open(record, forPass: true)) } catch { return .failure(error) }
        }
    }

    /// Tells what a pass did to one document: the report, the events, the ping's answer, a
    /// rename carried by a peer, and its quiet mark. Returns whether its record changed.
    /// The short way of an edit from a peer: the logs the watcher saw arrive for `id`, imported
    /// when they continue what the document applied (``Replicator/importArrived(_:logs:into:)``),
    /// and told as a pass tells an import. False when the document needs the whole targeted
    /// pass (not viewable here yet, a gap, a log that cannot be read, one that waits for another
    /// device, logs its last whole import left waiting, no full pass yet in this process), and
    /// when it is renamed (the pass does the rename).
    private func importArrived(
        _ id: DocumentID, logs: [DeviceID: Set<UInt64>], replicator: Replicator, report: inout SyncReport
    ) async -> Bool {
        guard fullPassDone, !importsLeftWaiting.contains(id), containerRefusal == nil, let record = localRecord(id), record.location == .cloud,
              !awaitsFirstImport(record) else { return false }
        guard let document = try? await handler.open(record, create: false, forPass: true) else {
            await closeIfThePassOpened(id)
            return false
        }
        let outcome: (report: ImportReport, before: StoreContents, after: StoreContents)?
        do {
            // The cache let go first: the import changes the texts in place.
            document.invalidate()
            outcome = try replicator.importArrived(id, logs: logs, into: document.store)
            if outcome?.report.imported.isEmpty == false { document.invalidate() }
        } catch {
            outcome = nil
        }
        guard let outcome else {
            await closeIfThePassOpened(id)
            return false
        }
        guard !outcome.report.imported.isEmpty else {
            await closeIfThePassOpened(id)
            return true
        }
        // What the container holds of the document was not looked at: the next pass that
        // comes by looks again.
        catalog.setQuiet(id, nil)
        quietChecked[id] = nil
        report.importedLogs += outcome.report.imported.count
        report.importedOnArrival += outcome.report.imported.count
        await announce(outcome.report, before: outcome.before, after: outcome.after, record: record, report: &report)
        document.store.checkpointIfDue()
        await closeIfThePassOpened(id)
        if let carried = outcome.after.graph.carriedName, carried != record.name.rawValue { return false }
        return true
    }

    private func tell(
        _ work: DocumentWork, record: LocalDocumentRecord, container: Container, replicator: Replicator, report: inout SyncReport
    ) async throws -> Bool {
        let imported = work.imported, contents = work.contents
        if imported.isComplete { importsLeftWaiting.remove(record.id) } else { importsLeftWaiting.insert(record.id) }
        report.exportedLogs += work.exported
        report.importedLogs += imported.imported.count
        for file in imported.quarantined { quarantine(file, in: &report) }
        for copy in work.copies { quarantine(copy, in: &report) }
        for gap in imported.gaps {
            let age = gap.since.map { configuration.now().timeIntervalSince($0) } ?? 0
            guard age >= Self.stallAge else { continue }
            report.problems.append(.stalled(name: record.name.rawValue, gap: gap))
        }
        for wait in imported.dependencyWaits {
            let age = wait.since.map { configuration.now().timeIntervalSince($0) } ?? 0
            guard age >= Self.stallAge else { continue }
            report.problems.append(.waitingForPeer(name: record.name.rawValue, wait: wait))
        }
        await announce(imported, before: work.before, after: contents, record: record, report: &report)
        if let carried = contents.graph.carriedName, carried != record.name.rawValue, let newName = try? DocumentName(carried) {
            await closeDocument(record.id)
            var renamed = record
            try renameRecord(&renamed, to: newName)
            return true
        }
        if imported.isComplete, contents.sync.outbox.isEmpty, work.copies.isEmpty, localRecord(record.id) == record {
            await closeIfThePassOpened(record.id)
            if let stamps = quietStamps(record, container) {
                catalog.setQuiet(record.id, QuietMark(
                    stamps: stamps.stamps, devices: stamps.devices, applied: contents.sync.applied, viewable: !contents.graph.objects.isEmpty,
                    modified: contents.graph.textEntry?.modified, ownLogs: replicator.lowestLog(record.id) ?? 0))
            }
        }
        return false
    }

    /// Tells what an import changed: conflicts (report and log), the events, and the peers'
    /// logs to the ping stunt.
    private func announce(
        _ imported: ImportReport, before: StoreContents, after contents: StoreContents, record: LocalDocumentRecord, report: inout SyncReport
    ) async {
        let fromPeers = imported.imported.filter { $0.device != identity.id }
        if !imported.imported.isEmpty { discoveredAwaitingLog[record.id] = nil }
        if !imported.summary.conflicts.isEmpty {
            var names = Dictionary(fromPeers.map { ($0.device, $0.deviceName) }, uniquingKeysWith: { first, _ in first })
            names[identity.id] = identity.name + " (this device)"
            func who(_ device: DeviceID) -> String { names[device].map { "\($0) \(device)" } ?? "device \(device)" }
            for conflict in imported.summary.conflicts {
                let entry = ConflictReport(
                    document: record.name.rawValue, attribute: "\(conflict.entity).\(conflict.attribute)",
                    kept: Conflict.short(conflict.kept), keptBy: who(conflict.keptBy),
                    overwritten: Conflict.short(conflict.lost), overwrittenBy: who(conflict.lostBy))
                report.conflicts.append(entry)
                logger.notice("conflict: last writer wins", metadata: [
                    "name": "\(record.name)", "attribute": "\(entry.attribute)", "kept": "\(entry.kept)", "keptBy": "\(entry.keptBy)",
                    "overwritten": "\(entry.overwritten)", "overwrittenBy": "\(entry.overwrittenBy)",
                ])
            }
        }
        if !imported.summary.isEmpty {
            emit(.didImport(record.id, imported.summary, from: Array(Set(fromPeers.map(\.deviceName))).sorted()))
            logger.info("imported", metadata: ["name": "\(record.name)", "logs": "\(imported.imported.count)"])
        }
        if before.graph.objects.isEmpty, !contents.graph.objects.isEmpty { emit(.becameViewable(record.id)) }
        // Only an import that listed the document's folders knows how far it is.
        if imported.listing != nil, imported.progress.percent < 100 { emit(.downloadProgress(record.id, percent: imported.progress.percent)) }
        if !fromPeers.isEmpty { await didImportFromPeers(record, logs: fromPeers) }
    }

    func quarantine(_ file: QuarantinedFile, in report: inout SyncReport) {
        guard !report.quarantined.contains(file) else { return }
        report.quarantined.append(file)
        emit(.quarantined(file.description))
        logger.warning("quarantined", metadata: ["file": "\(file.url.path)", "reason": "\(file.reason)"])
    }

    /// Remembers the stamp of a container folder whose contents this pass acted on, unless it
    /// is too recent to prove anything (a change in the same tick would not show).
    func actedOn(key: String, stamp: FileStamp) {
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
        guard always || catalog.containerStamps["tombstones"] != stamp else { return [] }
        let scan = container.applyTombstones()
        for file in scan.problems { quarantine(file, in: &report) }
        var remembered = rememberedDeletions()
        for record in allRecords() where record.location == .cloud && (scan.deleted.contains(record.id) || remembered[record.id] != nil) {
            let deleter = scan.deletedBy[record.id] ?? remembered[record.id]?.first?.deletedBy
            if remembered[record.id] == nil, let deleter {
                let entry = DeletionLedger.Entry(document: record.id, deletedBy: deleter, deletedAt: configuration.now(), container: containerID)
                remember(entry)
                remembered[record.id] = [entry]
            }
            await closeDocument(record.id)
            moveToTrash(record, deletedBy: deleter.map { $0 == identity.id ? "this device" : $0.description } ?? "a peer")
            report.removed.append(record.name.rawValue)
            emit(.documentRemoved(record.id, name: record.name.rawValue))
            logger.info("document deleted by a peer", metadata: ["name": "\(record.name)", "uuid": "\(record.id)"])
        }
        let healed = healDeletions(remembered, scan: scan, &report)
        if scan.problems.isEmpty, healed.isEmpty { actedOn(key: "tombstones", stamp: stamp) } else { catalog.setContainerStamp("tombstones", nil) }
        return healed
    }

    /// Gives every document the container has and this device does not a local record (looked
    /// for only when `documents/` changed, or among `only`; the store waits for the first
    /// import). What it found is in `report.discovered`.
    private func discover(_ container: Container, only: Set<DocumentID>?, _ report: inout SyncReport) async {
        let stamp = container.stamp(.documents)
        if only == nil, catalog.containerStamps["documents"] == stamp { return }
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
            actedOn(key: "documents", stamp: stamp)
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
    private func repairDamagedRecords(_ container: Container, _ report: inout SyncReport) async -> [LocalDocumentRecord] {
        var rebuilt: [LocalDocumentRecord] = []
        for (id, reason) in catalog.damaged.sorted(by: { $0.key < $1.key }) {
            let path = root.recordURL(id).path
            let found = settings.attemptErrorRecovery
                ? container.discover(known: [], only: [id], inForce: containersInForce, deleted: []).found.first : nil
            guard let info = found else {
                let way = settings.attemptErrorRecovery
                    ? "the container does not have this document, so it cannot be rebuilt; its store is in \(root.documentsDirectory.path)/\(id)"
                    : "turn on AttemptErrorRecovery to rebuild it from the container"
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
    private func registerIfChanged(_ replicator: Replicator, known: [DocumentID: [DeviceID: UInt64]], _ report: inout SyncReport) async {
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

    /// Whether to go on syncing with this container; asks the front end's policy if its
    /// identity changed (seed 002). The container's protocol (election, seeding, adoption) is
    /// Sync's; what to do with local records is decided here.
    private func checkIdentity(_ container: Container, report: inout SyncReport) async throws -> Bool {
        var device = try root.loadDevice(defaultName: identity.name, model: identity.model, newID: configuration.newUUID)
        // The trust this device remembers comes first: in a signed container, an unsigned
        // identity file cannot take the election.
        let trust = device.signingRoot.map { root in (container: root.container, loaded: container.loadTrust(container: root.container, remembered: root)) }
        let outcome: (check: IdentityCheck, inForce: Set<UUID>, replaced: Set<UUID>, passedOver: [QuarantinedFile])
        do {
            outcome = try container.checkIdentity(
                // Only a device that never synced through a container seeds one: a folder that
                // is empty where this device's container was is an unmounted drive or a replica
                // not filled yet, whatever this device shares (`container adopt` starts anew).
                remembered: device.containerID, canSeed: { [remembered = device.containerID] in
                    remembered == nil && !self.allRecords().contains { $0.location == .cloud }
                },
                device: identity.id, now: configuration.now(),
                newID: configuration.newUUID())
        } catch {
            if case .unknownFormat = error.kind { throw EngineError.containerFormat(error.description) }
            throw EngineError.containerUnavailable(error.description)
        }
        containersInForce = outcome.inForce
        replicator?.refusedContainers = outcome.replaced
        for file in outcome.passedOver { quarantine(file, in: &report) }
        switch outcome.check {
        case .agreed(let current, let remember, let found):
            // The format a device has seen of a container is its own state and only moves
            // forward: what a file in the container says (a damaged or removed format file)
            // never takes it back to a weaker format, whose saves its stores would not show.
            let seen = device.containerID == current ? device.containerFormat ?? 1 : 1
            let format = max(seen, found)
            if found < seen {
                report.problems.append(.formatKept(seen: seen, found: found))
            }
            if let remember { device.containerID = remember }
            if remember != nil || (device.containerFormat ?? 1) != format {
                device.containerFormat = format
                try root.saveDevice(device)
            }
            // What the replicator writes on its own (baselines) follows the container's format.
            replicator?.format = device.logFormat
            // The records read above stand when the container is the one remembered.
            try checkTrust(container, current: current, loaded: trust?.container == current ? trust?.loaded : nil, report: &report)
            return true
        case .changed(let remembered, let found, let error):
            let message = error.description
            if let containerRefusal, containerRefusal == message + "; staying local" {
                // Asked already in this process, and nothing changed since.
                report.containerError = .containerUnavailable(containerRefusal)
                report.problems.append(.containerChanged(message))
                return false
            }
            emit(.containerChanged(message))
            logger.warning("container identity changed", metadata: ["remembered": "\(remembered)", "found": "\(found?.uuidString ?? "none")"])
            switch configuration.onContainerChange(message) {
            case .adoptNew:
                let adopted: (identity: ContainerIdentity, shared: Set<DocumentID>)
                do {
                    adopted = try container.adopt(replacing: remembered, device: identity.id, now: configuration.now(), newID: configuration.newUUID())
                } catch {
                    throw EngineError.containerUnavailable(error.description)
                }
                // What was shared under another identity stays behind: a record says where it
                // was shared (records of earlier versions fall back on what the replica holds).
                for var record in allRecords() where record.location == .cloud
                    && !(record.container.map { $0 == adopted.identity.containerID } ?? adopted.shared.contains(record.id)) {
                    await closeDocument(record.id)
                    record.location = .local
                    record.container = nil
                    try saveRecord(record)
                    report.problems.append(.keptLocal(name: record.name.rawValue))
                }
                containersInForce = [adopted.identity.containerID]
                replicator?.refusedContainers.insert(remembered)
                catalog.setContainerStamp("documents", nil)
                catalog.setContainerStamp("tombstones", nil)
                device.containerID = adopted.identity.containerID
                device.containerFormat = adopted.identity.format
                try root.saveDevice(device)
                // The adopted container's trust, before anything of it is read.
                try checkTrust(container, current: adopted.identity.containerID, loaded: nil, report: &report)
                return true
            case .stayLocal:
                // Nothing is demoted: a mistyped --container or a replica that is briefly wrong
                // must not detach every document for good. Saves wait in their outboxes until
                // the known identity is back or the user adopts this container.
                let refusal = message + "; staying local"
                containerRefusal = refusal
                report.containerError = .containerUnavailable(refusal)
                report.problems.append(.containerChanged(message))
                return false
            }
        }
    }
}
