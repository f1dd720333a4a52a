import FileIO
import Foundation
import Logging
import Model
import Storage
import Settings
import Sync

// A pass's work per document: stuck saves, clocks, opening side by side, importing what arrived, previews and events.
extension DocumentLibrary {
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
    func readClocks(_ container: Container, registryStamp: FileStamp, _ report: inout SyncReport) {
        if catalog.containerStamps[.clocks] != registryStamp {
            // File times follow the system clock; a test may give the device a clock of its own.
            let frame = configuration.now().timeIntervalSince(Date())
            catalog.clockReadings = container.clockReadings(excluding: identity.id, frame: frame)
            catalog.setContainerStamp(.clocks, registryStamp)
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
        // The problem names its document already: an error about that document says the rest.
        let about = (error as? EngineError)?.aboutDocument
        return .document(name: record.name.rawValue, detail: about?.document == record.name.rawValue ? about?.detail ?? "\(error)" : "\(error)")
    }

    /// How many documents with work a pass opens at once (bounds open stores and memory).
    static let passBatch = 16
    /// How many documents' store and container work run side by side.
    static let passWidth = 2

    /// What a pass did to one document's store (off the library).
    struct DocumentWork: Sendable {
        /// Whether the store held any object before the import (it became viewable if it does now).
        var hadObjects: Bool
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
                // No copy of the contents, and not the document's cache, is kept through the
                // import, which changes the texts in place (a text held twice is copied whole).
                let hadObjects = !(try document.read().graph.objects.isEmpty)
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
                return DocumentWork(hadObjects: hadObjects, exported: exported, imported: imported, contents: contents, copies: copies)
            }
        }
        return await SideBySide.map(documents, width: passWidth) { one($0.0, $0.1) }
    }

    /// Previews documents not imported yet, a batch at a time, on every core: their logs read
    /// into memory, so the master table can say whether each is viewable, and a quiet mark that
    /// says so when the container holds all of it. Nothing is written but the catalog.
    func preview(
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
                        modified: contents.graph.textEntry?.modified, ownLogs: 0, life: .previewed))
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
    func openSideBySide(_ records: [LocalDocumentRecord]) async -> [Result<OpenDocument, any Error>] {
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
    func importArrived(
        _ id: DocumentID, logs: [DeviceID: Set<UInt64>], replicator: Replicator, report: inout SyncReport
    ) async -> Bool {
        guard fullPassDone, !importsLeftWaiting.contains(id), containerRefusal == nil, let record = localRecord(id), record.location == .cloud
        else { return false }
        // A document open here as its record says has its store (asked first: the store's path
        // is a URL made).
        if await !handler.isOpen(as: record), awaitsFirstImport(record) { return false }
        guard let document = try? await handler.open(record, create: false, forPass: true) else {
            await closeIfThePassOpened(id)
            return false
        }
        let outcome: (report: ImportReport, hadObjects: Bool, after: StoreContents)?
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
        restampArrived(id, outcome.report.arrivedFolderStamps)
        // What the container holds of the document was not looked at: the next pass that
        // comes by looks again.
        catalog.setQuiet(id, nil)
        quietChecked[id] = nil
        report.importedLogs += outcome.report.imported.count
        report.importedOnArrival += outcome.report.imported.count
        let carriesRename = outcome.after.graph.carriedName.map { $0 != record.name.rawValue } ?? false
        let renamed = carriesRename ? try? await renameAsCarried(record, in: outcome.after) : nil
        await announce(outcome.report, hadObjects: outcome.hadObjects, after: outcome.after, record: renamed ?? record, report: &report)
        document.store.checkpointIfDue()
        await closeIfThePassOpened(id)
        // A rename that could not be made here: the whole pass makes it.
        return !carriesRename || renamed != nil
    }

    /// Renames the record as an import's contents name the document (a peer's rename travels
    /// in its saves), before the import is told: whoever hears of the import finds the record
    /// under its new name. Nil when they name it as the record does (or by no valid name).
    func renameAsCarried(_ record: LocalDocumentRecord, in contents: StoreContents) async throws -> LocalDocumentRecord? {
        guard let carried = contents.graph.carriedName, carried != record.name.rawValue, let newName = try? DocumentName(carried) else { return nil }
        await closeDocument(record.id)
        var renamed = record
        try renameRecord(&renamed, to: newName)
        return renamed
    }

    func tell(
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
        let renamed: LocalDocumentRecord?
        do {
            renamed = try await renameAsCarried(record, in: contents)
        } catch {
            await announce(imported, hadObjects: work.hadObjects, after: contents, record: record, report: &report)
            throw error
        }
        await announce(imported, hadObjects: work.hadObjects, after: contents, record: renamed ?? record, report: &report)
        if renamed != nil { return true }
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
    func announce(
        _ imported: ImportReport, hadObjects: Bool, after contents: StoreContents, record: LocalDocumentRecord, report: inout SyncReport
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
        if !hadObjects, !contents.graph.objects.isEmpty { emit(.becameViewable(record.id)) }
        // Only an import that listed the document's folders knows how far it is.
        if imported.listing != nil, imported.progress.percent < 100 { emit(.downloadProgress(record.id, percent: imported.progress.percent)) }
        if !fromPeers.isEmpty { await didImportFromPeers(record, logs: fromPeers) }
    }
}
