import Foundation
import Logging

/// An append-only log file shared by every logger of the process.
public final class LogFile: @unchecked Sendable {
    private let lock = NSLock()
    private let handle: FileHandle?

    public init(url: URL) {
        if !FileManager.default.fileExists(atPath: url.path) {
            _ = FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        handle = try? FileHandle(forWritingTo: url)
        _ = try? handle?.seekToEnd()
    }

    public func write(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        try? handle?.write(contentsOf: Data(line.utf8))
    }
}

/// Writes log lines to a ``LogFile``: the TUI's terminal belongs to the UI, and a daemon started
/// from a terminal must not draw over whatever runs there next.
public struct FileLogHandler: LogHandler {
    public let label: String
    public let file: LogFile
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info

    public init(label: String, file: LogFile, logLevel: Logger.Level = .info) {
        self.label = label
        self.file = file
        self.logLevel = logLevel
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let details = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let stamp = ISO8601DateFormatter().string(from: Date())
        file.write("\(stamp) \(event.level) \(label): \(event.message)\(details)\n")
    }
}
