import Engine
import FileIO
import Foundation

/// `<root>/multidocd.status.json`: what the daemon is doing, rewritten atomically after every
/// pass for `multidoc status`. Field meanings are documented in Docs/DAEMON.md.
public struct DaemonStatus: Codable, Sendable, Equatable {
    public var pid: Int32
    public var startedAt: Date
    public var running = true
    public var root: String
    public var container: String
    public var device: String
    public var containerAvailable = true
    public var documents: Int
    public var passes = 0
    public var lastSyncAt: Date?
    public var lastImportAt: Date?
    public var lastError: String?
    public var lastErrorAt: Date?
    public var inspecting: String?
    public var pingsSent = 0
    public var pingsAnswered = 0

    /// A daemon just started: nothing synced yet.
    public init(pid: Int32, startedAt: Date, root: String, container: String, device: String, documents: Int) {
        (self.pid, self.startedAt, self.root, self.container, self.device, self.documents) = (pid, startedAt, root, container, device, documents)
    }
}

extension DaemonStatus {
    /// Takes in what a pass did. `lastError` keeps the latest problem until another replaces it.
    public mutating func record(_ report: SyncReport, at now: Date) {
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
public struct StatusFile: Sendable {
    public let url: URL

    public init(url: URL) { self.url = url }

    public func write(_ status: DaemonStatus) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Rewritten after every pass and worth nothing after a crash: replaced whole, not
        // fsynced, and without freeing an inode each time (AtomicFile.rewrite says why).
        try AtomicFile.rewrite(try encoder.encode(status) + Data("\n".utf8), to: url)
    }

    public func remove() {
        AtomicFile.removeRewritten(url)
    }
}
