#if canImport(Glibc)
import Glibc
#endif
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
        root.storeDirectory(record).appendingPathComponent("last-good-\(record.store.fileName)", isDirectory: false)
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

    /// What a store that failed to open means. Damage (a file that is not a valid store, cut
    /// short, or gone while its record stays) is recovered when AttemptErrorRecovery is on.
    /// Anything else — another process holding it (perhaps stopped), a full disk, an I/O error,
    /// permissions, a newer schema — is reported as what it is, and the store is never moved:
    /// it is healthy, and recovery would throw away saves that are only there.
    func storeOpenFailed(_ record: LocalDocumentRecord, _ error: StoreError) async throws -> OpenDocument {
        let advice: String
        switch error.kind {
        case .corrupt, .truncated, .notFound:
            if settings.attemptErrorRecovery { return try await recover(record, after: error) }
            advice = "Turn on AttemptErrorRecovery (`multidoc settings set AttemptErrorRecovery on`, or `--attempt-error-recovery on` for one command) to move the damaged store aside and rebuild it\(record.location == .cloud ? " from the container" : " from its last good copy")."
        case .busy:
            problems[record.id] = (.unreadable, error.description)
            throw EngineError.busy(
                "document \(record.name): \(error.description). Another multidoc process (a multidocd, perhaps stopped) holds it; try again when it lets go. Nothing was changed.")
        case .writeFailed:
            let full = Self.diskIsFull(at: root.storeURL(record).deletingLastPathComponent()) ? "The disk is full. " : ""
            let message = (error.detail.isEmpty ? "" : "\(error.detail). ") + "\(full)The store is not damaged: make room (or fix the file system) and try again."
            problems[record.id] = (.unreadable, "\(error.description). \(full)The store is not damaged.")
            logger.error("document failed to open", metadata: ["name": "\(record.name)", "error": "\(error)"])
            throw EngineError.io(error.path, message)
        case .unreadable:
            advice = "The store is not damaged: check the permissions of \(root.storeURL(record).path) and its folders."
        case .newerSchema:
            advice = "A newer multidoc wrote it: use that version (or newer) on this device."
        case .closed:
            advice = "Try again."
        }
        let message = "\(error.description). \(advice)"
        problems[record.id] = (.failed(error), message)
        emit(.failure("\(record.name): \(message)"))
        logger.error("document failed to open", metadata: ["name": "\(record.name)", "error": "\(error)"])
        throw EngineError.storeFailed(document: record.name.rawValue, detail: message)
    }

    /// Whether the file system holding `folder` has no free blocks left for this user.
    static func diskIsFull(at folder: URL) -> Bool {
        var stats = statvfs()
        guard statvfs(folder.path, &stats) == 0 else { return false }
        return stats.f_bavail == 0
    }

    /// The time in the names of files recovery sets aside (`damaged-<stamp>-…`): ISO 8601
    /// without colons, which some file systems and tools refuse.
    func asideStamp() -> String {
        ISO8601DateFormatter().string(from: configuration.now()).replacingOccurrences(of: ":", with: "-")
    }

    /// AttemptErrorRecovery (seed 000's RobustDocument): builds a replacement beside the damaged
    /// store — from the container (baseline + logs) for a cloud document, from its last good copy
    /// for a local one — and only once it is complete moves the damaged store aside (kept for a
    /// bug report) and the replacement into its place. A rebuild that fails leaves everything as
    /// it was. Says what was recovered and what was lost.
    func recover(_ record: LocalDocumentRecord, after error: StoreError) async throws -> OpenDocument {
        let store = root.storeURL(record)
        let folder = store.deletingLastPathComponent()
        let stamp = asideStamp()
        let aside = folder.appendingPathComponent("damaged-\(stamp)-\(record.store.fileName)", isDirectory: false)
        let fresh = folder.appendingPathComponent("rebuilding-\(stamp)-\(record.store.fileName)", isDirectory: false)
        await closeDocument(record.id)
        var report: String
        do {
            try? configuration.stores.destroy(record.store, at: fresh)
            if record.location == .cloud, let replicator = cloud, replicator.container.isAvailable {
                let rebuilt = try configuration.stores.open(record.store, at: fresh, create: true)
                defer { rebuilt.close() }
                let imported = try replicator.importPending(record.id, into: rebuilt)
                report = "rebuilt \(record.name) from the container (\(imported.imported.count) logs, \(imported.baselinesMerged) baselines); edits saved here but not yet shipped when the store broke are lost"
            } else if FileManager.default.fileExists(atPath: lastGoodURL(record).path) {
                let lastGood = try configuration.stores.open(record.store, at: lastGoodURL(record), create: false)
                defer { lastGood.close() }
                try configuration.stores.convert(lastGood, to: record.store, at: fresh).close()
                let date = (try? FileManager.default.attributesOfItem(atPath: lastGoodURL(record).path)[.modificationDate] as? Date) ?? nil
                report = "restored \(record.name) from its last good copy\(date.map { " of \(ISO8601DateFormatter().string(from: $0))" } ?? ""); changes after that copy are lost"
            } else {
                try configuration.stores.open(record.store, at: fresh, create: true).close()
                report = "\(record.name) had no copy to recover from; it was recreated empty and its content is lost"
            }
        } catch let rebuildError {
            try? configuration.stores.destroy(record.store, at: fresh)
            throw EngineError.storeFailed(
                document: record.name.rawValue,
                detail: "\(error.description); recovery could not rebuild it (\(rebuildError)), so the store was left where it is")
        }
        do {
            let manager = FileManager.default
            for suffix in ["", "-wal", "-shm", "-journal", ".journal"] where manager.fileExists(atPath: store.path + suffix) {
                try manager.moveItem(atPath: store.path + suffix, toPath: aside.path + suffix)
            }
            // A SQLite store's recent commits may be in its write-ahead log, which outlives the
            // connection: it moves with the file (its index is rebuilt from it); a JSON store's
            // journal holds the commits after its snapshot.
            for suffix in ["", "-wal", ".journal"] where suffix.isEmpty || manager.fileExists(atPath: fresh.path + suffix) {
                try manager.moveItem(atPath: fresh.path + suffix, toPath: store.path + suffix)
            }
            for suffix in ["-shm", ".lock"] { try? manager.removeItem(atPath: fresh.path + suffix) }
        } catch let moveError {
            throw EngineError.storeFailed(
                document: record.name.rawValue,
                detail: "\(error.description); recovery rebuilt it at \(fresh.path) but could not put it in place: \(moveError)")
        }
        report += " (damaged store kept at \(aside.path); cause: \(error.description))"
        let document = try await openDocument(record, create: false)
        recoveryReports[record.id] = report
        emit(.recovered(record.id, report: report))
        logger.warning("recovered document", metadata: ["name": "\(record.name)", "report": "\(report)"])
        return document
    }

    /// `multidoc container repair`: for every cloud document that a device joining now would
    /// wait on for a missing log, writes a baseline of this device's copy when it holds what is
    /// missing, so every device can go on past the gap; supplies again, the same way, this
    /// device's own logs the container lost (its last ones included, which leave no gap); and
    /// writes again the tombstones of deletions this device made or applied that the container
    /// lost. Returns one outcome per document repaired or stalled.
    public func repairGaps() async throws -> [GapRepair] {
        let replicator = try usableCloud()
        guard replicator.container.isAvailable else {
            throw EngineError.containerUnavailable("container \(replicator.container.root.path) is unavailable")
        }
        var outcomes: [GapRepair] = []
        var report = SyncReport()
        for id in await applyTombstones(replicator.container, always: true, &report) {
            outcomes.append(GapRepair(name: id.description, gaps: [], repaired: true,
                                      detail: "deleted here or by a peer; wrote this device's tombstone again, which the container had lost"))
        }
        for problem in report.problems {
            outcomes.append(GapRepair(name: "tombstones", gaps: [], repaired: false, detail: problem.description))
        }
        for record in allRecords().filter({ $0.location == .cloud && !awaitsFirstImport($0) }).sorted(by: { $0.id < $1.id }) {
            do {
                let document = try await open(record, forPass: true)
                if let supplied = try replicator.resupplyLostLogs(record.id, store: document.store) {
                    let logs = supplied.lost.count == 1 ? "log \(supplied.lost[0])" : "logs \(supplied.lost.map(String.init).joined(separator: ", "))"
                    logger.notice("supplied lost logs again with a baseline", metadata: ["name": "\(record.name)", "baseline": "\(supplied.baseline.lastPathComponent)"])
                    outcomes.append(GapRepair(name: record.name.rawValue, gaps: [], repaired: true,
                                              detail: "this device's \(logs) had gone from the container; wrote baseline \(supplied.baseline.path), which covers them"))
                }
            } catch {
                outcomes.append(GapRepair(name: record.name.rawValue, gaps: [], repaired: false, detail: "could not look for lost logs here: \(error)"))
            }
            await closeIfThePassOpened(record.id)
        }
        for record in allRecords().filter({ $0.location == .cloud }).sorted(by: { $0.id < $1.id }) {
            let gaps = replicator.standingGaps(record.id)
            guard !gaps.isEmpty else { continue }
            // One document that cannot be repaired says so and the others go on.
            do {
                let document = try await open(record, forPass: true)
                let applied = try document.read().sync.applied
                let missing = gaps.filter { gap in (applied[gap.device] ?? 0) < gap.nextPresent - 1 }
                guard missing.isEmpty else {
                    outcomes.append(GapRepair(name: record.name.rawValue, gaps: gaps, repaired: false,
                        detail: "this device does not have \(missing.map(\.description).joined(separator: ", ")) either; run 'multidoc container repair' on the device that wrote it"))
                    await closeIfThePassOpened(record.id)
                    continue
                }
                let url = try replicator.writeBaseline(record.id, from: document.store)
                logger.notice("repaired a gap with a baseline", metadata: ["name": "\(record.name)", "baseline": "\(url.lastPathComponent)"])
                outcomes.append(GapRepair(name: record.name.rawValue, gaps: gaps, repaired: true, detail: "wrote baseline \(url.path)"))
            } catch {
                outcomes.append(GapRepair(name: record.name.rawValue, gaps: gaps, repaired: false, detail: "could not be repaired here: \(error)"))
            }
            await closeIfThePassOpened(record.id)
        }
        await closeWhatThePassOpened()
        return outcomes
    }
}

/// What `container repair` did about one stalled document.
public struct GapRepair: Sendable {
    public let name: String
    public let gaps: [LogGap]
    public let repaired: Bool
    public let detail: String
}

extension DocumentLibrary {
    /// `multidoc container upgrade`: moves the container to format 2, after one sync so that
    /// every save of this device is in it and every log in it is applied here. Refuses (and
    /// names them) while a registered device is not known to read format 2, unless `force`:
    /// such a device would stop syncing with the container until it is updated.
    public func upgradeContainer(force: Bool) async throws -> ContainerUpgrade {
        let replicator = try usableCloud()
        let report = await sync()
        if let error = report.containerError { throw error }
        let waiting = replicator.container.devicesNotReading(format: Container.formatVersion, except: identity.id)
        if !waiting.isEmpty, !force {
            return ContainerUpgrade(format: 1, already: false, upgraded: false, devicesNotReady: waiting.map { "\($0.name) (\($0.device))" })
        }
        let outcome: (identity: ContainerIdentity, already: Bool)
        do {
            outcome = try replicator.container.upgrade(device: identity.id, now: configuration.now())
        } catch {
            throw EngineError.containerUnavailable(error.description)
        }
        logger.notice("container moved to format \(outcome.identity.format)", metadata: ["already": "\(outcome.already)"])
        // Look at the identity again, so this process writes the new format from now on.
        identityChecked = false
        await sync()
        return ContainerUpgrade(format: Container.formatVersion, already: outcome.already, upgraded: !outcome.already,
                                devicesNotReady: waiting.map { "\($0.name) (\($0.device))" })
    }
}

/// What `container upgrade` did.
public struct ContainerUpgrade: Sendable, Encodable {
    /// The container's format now.
    public let format: Int
    /// It was of that format already.
    public let already: Bool
    /// This run moved it.
    public let upgraded: Bool
    /// Registered devices not known to read the new format (with `--force`: moved anyway).
    public let devicesNotReady: [String]
}
