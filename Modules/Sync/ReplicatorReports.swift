#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
import Synchronization
import Text

/// Every device's registry record, read the first time something needs it: a pass over
/// 10,000 documents needs it only when one of them has logs to prune, and each record holds an
/// entry per document, so reading them all costs a fifth of a `list` at that size.
public final class RegistrySnapshot: Sendable {
    private let container: Container
    private let loaded = Mutex<[DeviceRecord]?>(nil)

    public init(_ container: Container) { self.container = container }

    /// Taken as given (tests).
    public init(_ container: Container, records: [DeviceRecord]) {
        self.container = container
        loaded.withLock { $0 = records }
    }

    /// Registry entries a pass did not believe (they claim more of this device's logs than it
    /// wrote), for its report.
    public var refusedClaims: [QuarantinedFile] { refused.withLock { $0.sorted { $0.url.path < $1.url.path } } }
    private let refused = Mutex<Set<QuarantinedFile>>([])

    func refuse(_ file: QuarantinedFile) { _ = refused.withLock { $0.insert(file) } }

    public var records: [DeviceRecord] {
        loaded.withLock { loaded in
            if let loaded { return loaded }
            let records = container.deviceRecords()
            loaded = records
            return records
        }
    }
}

/// A local save: its log and what it changed.
public struct LocalCommit: Sendable {
    public let log: TransactionLog
    public let summary: ChangeSummary
    /// The store's outbox as the commit left it (a save that ships), for the flush after it.
    public var outbox: [UInt64: Data]?
    /// The save's log being written beside its slot while the store committed, for the flush
    /// after it to put in place (``Replicator/flush(_:in:after:)``).
    public var writeAhead: LogWriteAhead?

    init(log: TransactionLog, summary: ChangeSummary) {
        self.log = log
        self.summary = summary
    }
}

/// What an import did.
public struct ImportReport: Sendable {
    public var summary = ChangeSummary()
    public var imported: [ImportedLog] = []
    public var quarantined: [QuarantinedFile] = []
    public var baselinesMerged = 0
    /// Conflict copies the replication engine made in the document's folders (reported, never
    /// imported), found by the import's listing.
    public var conflictCopies: [QuarantinedFile] = []
    /// The document's folders as the import listed them.
    public var listing: DocumentListing?
    /// What the widest trusted baseline in the container covers, when the import read the
    /// baselines (nil: it did not need them).
    public var trustedBaselineCoverage: [DeviceID: UInt64]?
    /// Logs missing while later ones of the same device are there (on their way, or lost).
    public var gaps: [LogGap] = []
    /// A later log is present but an earlier one has not arrived yet.
    public var waitingForGap: Bool { !gaps.isEmpty }
    /// Logs present but not applied because logs of other devices they were made on have not
    /// arrived (or are behind a gap).
    public var waitingForOthers = 0
    /// For each device whose next log waits so, the other device's log it waits for when that
    /// log is not in the container at all (`since`: when the waiting log arrived).
    public var dependencyWaits: [DependencyWait] = []
    public var progress = DownloadProgress(applied: 0, known: 0)
    /// For an import of logs that arrived (``Replicator/importArrived(_:logs:into:)``): the
    /// stamp of each of their devices' log folders, taken before it looked whether a later log
    /// was there (none was). A device that trusted its folders before the import may trust
    /// these, and not list them again before its next save.
    public var arrivedFolderStamps: [DeviceID: FileStamp] = [:]

    /// Everything the container shows of the document is in: nothing quarantined, no gap,
    /// every log known applied.
    public var isComplete: Bool { quarantined.isEmpty && !waitingForGap && waitingForOthers == 0 && progress.percent >= 100 }

    public init() {}
}

/// A device's log missing from the container while a later one is there: the device's later
/// saves wait behind it on every device that has not applied it. Usually a log still on its way
/// (a replication engine delivers files in any order); one missing for long was lost, and a
/// device that applied it can write a baseline that covers it (`multidoc container repair`).
public struct LogGap: Sendable, Hashable, CustomStringConvertible {
    public let device: DeviceID
    /// The first missing sequence, and the next one present.
    public let missing: UInt64
    public let nextPresent: UInt64
    /// When the next present log reached this replica (its file's time): the gap is at least
    /// this old. Nil if it could not be read.
    public let since: Date?

    public var description: String {
        let range = nextPresent > missing + 1 ? "logs \(missing)…\(nextPresent - 1)" : "log \(missing)"
        return "\(range) of device \(device)"
    }
}

/// A device's log that waits for another device's log it was made on, which is not in the
/// container: on its way, lost, or named by a lying file.
public struct DependencyWait: Sendable, Hashable, CustomStringConvertible {
    public let device: DeviceID
    public let sequence: UInt64
    public let waitsFor: DeviceID
    public let missing: UInt64
    /// When the waiting log reached this replica.
    public let since: Date?

    public var description: String {
        "log \(sequence) of device \(device) was made after log \(missing) of device \(waitsFor), which is not in the container"
    }
}

/// One imported log's header (for notifications and latency figures).
public struct ImportedLog: Sendable, Hashable {
    public let device: DeviceID
    public let deviceName: String
    public let sequence: UInt64
    public let committedAt: Date
    public let stamp: Stamp

    init(_ log: TransactionLog) {
        device = log.device
        deviceName = log.deviceName
        sequence = log.sequence
        committedAt = log.committedAt
        stamp = log.stamp
    }
}

/// A file that was not imported, and why.
public struct QuarantinedFile: Sendable, Hashable, CustomStringConvertible {
    public let url: URL
    public let reason: String
    /// What gets the file's content to the devices that refused it, when something does.
    public let wayOut: WayOut?
    public var description: String { "\(url.path): \(reason)" + (wayOut.map { "; \($0)" } ?? "") }

    public init(url: URL, reason: String, wayOut: WayOut? = nil) {
        self.url = url
        self.reason = reason
        self.wayOut = wayOut
    }
}

/// The seed's "percent downloaded": logs applied against logs known.
public struct DownloadProgress: Sendable, Hashable, Codable {
    public var applied: UInt64
    public var known: UInt64

    public var percent: Int {
        guard known > 0 else { return applied > 0 ? 100 : 0 }
        return Int(min(100, (applied * 100) / known))
    }
}

/// What ``Replicator/compact(_:store:)`` did.
public struct CompactionReport: Sendable {
    public var baseline: URL?
    public var prunedLogs = 0
}
