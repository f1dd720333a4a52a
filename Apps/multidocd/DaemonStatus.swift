import Engine
import FileIO
import Foundation

/// `<root>/multidocd.status.json`: what the daemon is doing, rewritten atomically after every
/// pass for `multidoc status`. Field meanings are documented in Docs/DAEMON.md.
struct DaemonStatus: Codable, Sendable, Equatable {
    var pid: Int32
    var startedAt: Date
    var running: Bool
    var root: String
    var container: String
    var device: String
    var containerAvailable: Bool
    var documents: Int
    var passes: Int
    var lastSyncAt: Date?
    var lastImportAt: Date?
    var lastError: String?
    var lastErrorAt: Date?
    var inspecting: String?
    var pingsSent: Int
    var pingsAnswered: Int
}

extension DaemonStatus {
    /// Takes in what a pass did. `lastError` keeps the latest problem until another replaces it.
    mutating func record(_ report: SyncReport, at now: Date) {
        passes += 1
        lastSyncAt = now
        containerAvailable = report.cloudAvailable
        if report.importedLogs > 0 { lastImportAt = now }
        if let problem = report.problems.last {
            lastError = problem.description
            lastErrorAt = now
        }
    }
}

/// Writes the status file; a failed write is logged by the caller, never fatal.
struct StatusFile: Sendable {
    let url: URL

    func write(_ status: DaemonStatus) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Rewritten after every pass and worth nothing after a crash: replaced whole, not
        // fsynced, and without freeing an inode each time (AtomicFile.rewrite says why).
        try AtomicFile.rewrite(try encoder.encode(status) + Data("\n".utf8), to: url)
    }

    func remove() {
        AtomicFile.removeRewritten(url)
    }
}
