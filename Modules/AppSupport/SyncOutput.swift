import Engine
import Foundation
import Model
import Sync

/// What a sync pass did, as `multidoc sync --json` prints it (documented field names).
public struct SyncOutput: Encodable, Sendable {
    public var cloudAvailable: Bool
    public var discovered: [String]
    public var removed: [String]
    public var importedLogs: Int
    public var exportedLogs: Int
    public var quarantined: [String]
    public var problems: [String]
    /// Documents whose saves could not be shipped into the container (exit 10).
    public var unshipped: [String]
    /// Values last-writer-wins decided between concurrent writes (texts merge instead).
    public var conflicts: [ConflictReport]

    /// The output of one pass's report.
    public init(_ report: SyncReport) {
        cloudAvailable = report.cloudAvailable
        discovered = report.discovered
        removed = report.removed
        importedLogs = report.importedLogs
        exportedLogs = report.exportedLogs
        quarantined = report.quarantined.map(\.description)
        problems = report.problems.map(\.description)
        unshipped = report.unshipped
        conflicts = report.conflicts
    }
}

extension SyncReport {
    /// The line `multidoc sync` prints: what the pass moved, and how many container files it
    /// would not trust when there are any (the warnings after it name each and its way out).
    public var summaryLine: String {
        let line = "imported \(importedLogs) logs, exported \(exportedLogs), discovered \(discovered.count), removed \(removed.count)"
        let files = Set(quarantined.map(\.url.path)).count
        guard files > 0 else { return line }
        return line + ", \(files) \(files == 1 ? "file" : "files") quarantined (see the warnings for what to do)"
    }

    /// Saves that stayed on this device are not synced, whatever else the pass did: the error
    /// `sync` ends with (exit 10), or nil when every save shipped.
    public func unshippedError(container: URL?) -> AppError? {
        guard !unshipped.isEmpty else { return nil }
        let which = unshipped.count == 1 ? "\(unshipped[0])'s saves were" : "saves of \(unshipped.count) documents were"
        return AppError(.writeFailed, "\(which) not shipped into the container at \(container?.path ?? "?") "
            + "(the warnings above say why; `multidoc container verify` checks the container); they wait in the outbox for the next sync")
    }

    /// The way out of a container this device refused (its identity changed), as a suffix for
    /// the line that says why nothing was synced; empty when there is none.
    public var containerChangeHint: String {
        problems.lazy.compactMap { if case .containerChanged = $0 { $0.wayOut } else { nil } }.first.map { "; \($0)" } ?? ""
    }
}

extension LibraryEvent {
    /// The event as one line of `sync --watch`, stamped with `date`.
    public func line(at date: Date) -> String {
        let time = ISO8601DateFormatter().string(from: date)
        switch self {
        case .documentAdded(let summary): return "\(time) added \(summary.name) (\(summary.origin.rawValue))"
        case .documentRemoved(_, let name): return "\(time) removed \(name)"
        case .objectsDidChange(let id, _): return "\(time) changed \(id)"
        case .didSave(let id, _): return "\(time) saved \(id)"
        case .didImport(let id, let summary, let from):
            return "\(time) imported into \(id) from \(from.joined(separator: ", ")): \(summary.inserted.count) inserted, \(summary.updated.count) updated, \(summary.deleted.count) deleted"
        case .becameViewable(let id): return "\(time) viewable \(id)"
        case .downloadProgress(let id, let percent): return "\(time) downloading \(id) \(percent)%"
        case .cloudAvailability(_, let detail): return "\(time) \(detail)"
        case .containerChanged(let detail): return "\(time) \(detail)"
        case .quarantined(let detail): return "\(time) quarantined \(detail)"
        case .recovered(_, let report): return "\(time) recovered: \(report)"
        case .failure(let detail): return "\(time) error: \(detail)"
        }
    }
}
