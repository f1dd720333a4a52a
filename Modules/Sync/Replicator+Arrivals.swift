import FileIO
import Foundation
import Model
import Storage

// The short way of an edit from a peer: the logs the watcher saw arrive, imported without a
// listing of the document's folders when they continue what the store applied.
extension Replicator {
    /// Imports logs a watcher saw arrive, without listing the document's folders: each device's
    /// arrived logs that continue its applied sequence, read and applied in one transaction
    /// (not synced, as ``importPending(_:into:)``'s). Nil when that is not the whole story and
    /// the caller must run ``importPending(_:into:)``: more arrived than one import transaction
    /// takes (``importBatchSize`` logs, ``importBatchWeight``), the store has applied nothing yet (a first
    /// import builds from baselines), an arrived log does not continue its device's sequence (a
    /// gap, reported there), a log cannot be read or checked (quarantined there), or it waits
    /// for another device's log. What it imports is exactly what ``importPending(_:into:)`` would
    /// import first, so the two can follow each other in any order.
    ///
    /// Returns the report, whether the store held any object before the import (no copy of the
    /// contents is kept through it: one would share the texts, which the import then copies
    /// whole to change them), and the contents after it (read in its transaction: the caller
    /// needs no read of its own).
    public func importArrived(
        _ document: DocumentID, logs arrived: [DeviceID: Set<UInt64>], into store: any DocumentStore
    ) throws -> (report: ImportReport, hadObjects: Bool, after: StoreContents)? {
        // A backlog is the whole import's: said before any log is read.
        guard arrived.values.reduce(0, { $0 + $1.count }) <= importBatchSize else { return nil }
        enum Outcome {
            case wholeImport
            case done(ImportReport, hadObjects: Bool, after: StoreContents)
        }
        // The logs are looked for and read inside the import's transaction, from what it applied
        // as of that transaction: no read of the store before it (a transaction of its own), and
        // nothing another process applies meanwhile is read again.
        let outcome = try store.write(durable: false, notingObjects: true) { contents -> Outcome in
            let hadObjects = !contents.graph.objects.isEmpty
            guard !contents.sync.applied.isEmpty, let (logs, folderStamps) = readArrived(document, arrived, applied: contents.sync.applied) else {
                return .wholeImport
            }
            var report = ImportReport()
            if !logs.isEmpty {
                // A log that waits for another device's: the full import sorts that out, and
                // nothing is changed here then.
                var willHave = contents.sync.applied
                for log in logs {
                    guard log.isNext(after: willHave[log.device] ?? 0), log.dependenciesMet(by: willHave) else { return .wholeImport }
                    willHave[log.device] = log.sequence
                }
                for log in logs {
                    report.summary.formUnion(Merge.apply(log, to: &contents))
                    contents.sync.applied[log.device] = log.sequence
                }
                report.imported = logs.map(ImportedLog.init)
                report.arrivedFolderStamps = folderStamps
            }
            var after = contents
            after.objectJournal = nil
            return .done(report, hadObjects: hadObjects, after: after)
        }
        guard case .done(let report, let hadObjects, let after) = outcome else { return nil }
        return (report, hadObjects, after)
    }

    /// The arrived logs of ``importArrived(_:logs:into:)`` that continue what `applied` holds,
    /// read, with the stamps of their devices' folders as they were before the look for a
    /// later log; nil when the whole import must run (a gap, a log that cannot be read, a later
    /// log already there, more than one transaction's weight).
    private func readArrived(
        _ document: DocumentID, _ arrived: [DeviceID: Set<UInt64>], applied: [DeviceID: UInt64]
    ) -> (logs: [TransactionLog], folderStamps: [DeviceID: FileStamp])? {
        var logs: [TransactionLog] = []
        var weightRead = 0
        var folderStamps: [DeviceID: FileStamp] = [:]
        let documents = container.documentsFolder()
        for (origin, sequences) in arrived.sorted(by: { $0.key < $1.key }) where origin != device.id {
            var next = (applied[origin] ?? 0) + 1
            // Arrived logs already applied (another process, or a pass, took them) need nothing.
            guard sequences.contains(where: { $0 >= next }) else { continue }
            guard sequences.contains(next) else { return nil }
            // Before the look for a later log below: a log landing after it changes the stamp.
            if let documents { folderStamps[origin] = FileStamp(in: documents, document.description + "/logs/" + origin.description) }
            while sequences.contains(next) {
                // Bounded as the whole import bounds a transaction: no log read past the weight.
                guard weightRead < Self.importBatchWeight,
                      let log = try? container.readLog(document, device: origin, sequence: next, refusing: refusedContainers)
                else { return nil }
                logs.append(log)
                weightRead += Self.importWeight(of: log)
                next += 1
            }
            // A later log already there (it waited behind a gap the arrival fills) is the whole
            // import's to take.
            if sequences.contains(where: { $0 > next }) || container.hasLog(document, device: origin, sequence: next) { return nil }
        }
        return (logs, folderStamps)
    }
}
