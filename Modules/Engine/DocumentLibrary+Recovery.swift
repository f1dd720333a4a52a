import FileIO
import Foundation
import Logging
import Model
import Storage
import Settings
import Sync

extension DocumentLibrary {
    /// The last good copy of a local-only document's store, kept beside it.
    func lastGoodURL(_ record: LocalDocumentRecord) -> URL {
        root.storeDirectory(record.id, name: record.name).appendingPathComponent("last-good-\(record.store.fileName)", isDirectory: false)
    }

    /// Snapshots a store that just opened cleanly (through the store itself, so a WAL
    /// database's recent commits are included), so a later corruption can fall back to it.
    func keepLastGoodCopy(of document: OpenDocument) {
        guard let contents = try? document.read() else { return }
        let url = lastGoodURL(document.record)
        guard let copy = try? configuration.stores.open(document.record.store, at: url, create: true) else { return }
        defer { copy.close() }
        try? copy.write { $0 = contents }
    }

    /// AttemptErrorRecovery (seed 000's RobustDocument): moves the damaged store aside (kept for
    /// a bug report), then rebuilds a cloud document from the container (baseline + logs) or
    /// restores a local one from its last good copy, and says what was recovered and lost.
    func recover(_ record: LocalDocumentRecord, after error: StoreError) async throws -> OpenDocument {
        let store = root.storeURL(record)
        let stamp = ISO8601DateFormatter().string(from: configuration.now()).replacingOccurrences(of: ":", with: "-")
        let aside = store.deletingLastPathComponent().appendingPathComponent("damaged-\(stamp)-\(record.store.fileName)", isDirectory: false)
        await closeDocument(record.id)
        do {
            if FileManager.default.fileExists(atPath: store.path) {
                try FileManager.default.moveItem(at: store, to: aside)
            }
            for suffix in ["-wal", "-shm", "-journal", ".lock"] {
                try? FileManager.default.removeItem(atPath: store.path + suffix)
            }
        } catch let moveError {
            throw EngineError.storeFailed(document: record.name.rawValue, detail: "\(error.description); recovery could not move the damaged store aside: \(moveError)")
        }
        var report: String
        if record.location == .cloud, let replicator = cloud, replicator.container.isAvailable {
            let document = try await openDocument(record, create: true)
            let imported = try replicator.importPending(record.id, into: document.store)
            document.invalidate()
            report = "rebuilt \(record.name) from the container (\(imported.imported.count) logs, \(imported.baselinesMerged) baselines); edits saved here but not yet shipped when the store broke are lost"
        } else if FileManager.default.fileExists(atPath: lastGoodURL(record).path) {
            let lastGood = try configuration.stores.open(record.store, at: lastGoodURL(record), create: false)
            defer { lastGood.close() }
            try configuration.stores.convert(lastGood, to: record.store, at: store).close()
            let date = (try? FileManager.default.attributesOfItem(atPath: lastGoodURL(record).path)[.modificationDate] as? Date) ?? nil
            report = "restored \(record.name) from its last good copy\(date.map { " of \(ISO8601DateFormatter().string(from: $0))" } ?? ""); changes after that copy are lost"
        } else {
            let document = try await openDocument(record, create: true)
            _ = document
            report = "\(record.name) had no copy to recover from; it was recreated empty and its content is lost"
        }
        report += " (damaged store kept at \(aside.path); cause: \(error.description))"
        let document = try await openDocument(record, create: false)
        recoveryReports[record.id] = report
        emit(.recovered(record.id, report: report))
        logger.warning("recovered document", metadata: ["name": "\(record.name)", "report": "\(report)"])
        return document
    }
}
