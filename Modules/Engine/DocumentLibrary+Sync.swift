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

    /// The short way of the logs the watcher saw arrive (``importArrived(_:logs:replicator:report:)``)
    /// for the documents of a targeted `scope`; the documents it did not settle stay in it.
    /// Returns true when none is left.
    private func importArrivals(
        _ arrivals: [DocumentID: [DeviceID: Set<UInt64>]], scope: inout PassScope, replicator: Replicator, report: inout SyncReport
    ) async -> Bool {
        guard case .documents(var ids) = scope, !arrivals.isEmpty else { return false }
        for (id, logs) in arrivals.sorted(by: { $0.key < $1.key }) where ids.contains(id) {
            if await importArrived(id, logs: logs, replicator: replicator, report: &report) { ids.remove(id) }
        }
        scope = .documents(ids)
        return ids.isEmpty
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
        // Logs the watcher saw arrive in a container this process syncs with: imported first.
        // That they can be read says the container is there; when they cannot, the look below
        // says what happened to it.
        let arrivalsFirst = identityChecked && cloudAvailable
        if arrivalsFirst, await importArrivals(arrivals, scope: &scope, replicator: replicator, report: &report) { return report }
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
        if !arrivalsFirst, await importArrivals(arrivals, scope: &scope, replicator: replicator, report: &report) { return report }

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
        // Only a pass over every document looks at the registry (a pass of a few documents, as
        // an arrival's, stats no peer's entry).
        let registryStamp = scope.isFull || only == nil ? container.peerRegistryStamp(excluding: identity.id) : nil
        let registryChanged = scope.isFull && catalog.containerStamps[.devices] != registryStamp
        if only == nil, let registryStamp { readClocks(container, registryStamp: registryStamp, &report) }
        var busy: [LocalDocumentRecord] = []
        // A preview stands for an import only in a pass that previews: any other imports.
        let previewing = scope.isFull && firstImports == .whenNeeded
        let stamps = quietStamps(passing, container)
        let checkedAt = ContinuousClock.now
        quietChecked.reserveCapacity(passing.count)
        for (record, stamp) in zip(passing, stamps) {
            if let mark = catalog.quiet(record.id), let stamp, stamp.stamps == mark.stamps, previewing || mark.life != .previewed {
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
        if registryChanged, let registryStamp { actedOn(key: .devices, stamp: registryStamp) }
        await registerIfChanged(replicator, known: worked, &report)
        return report
    }
}
