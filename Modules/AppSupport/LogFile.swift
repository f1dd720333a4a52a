#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Logging

/// An append-only log file shared by every logger of the process. Each line is one `O_APPEND`
/// write, so lines of several processes logging to one file do not mix.
public final class LogFile: @unchecked Sendable {
    private let lock = NSLock()
    private let descriptor: Int32

    /// Opens (or creates, mode 0600) the file for appending.
    /// - Throws: ``FileIOError`` naming the file when it cannot be opened for writing (a
    ///   missing folder, no permission, a folder in its place): a log that goes nowhere would
    ///   lose every line while the process seemed to run well.
    public init(url: URL) throws(FileIOError) {
        let fd = open(url.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            let detail = code == ENOENT ? "the folder it belongs in does not exist" : nil
            throw FileIOError(path: url.path, operation: "open the log file", errno: code, detail: detail)
        }
        descriptor = fd
    }

    deinit { _ = close(descriptor) }

    public func write(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        var line = line
        _ = line.withUTF8 { AtomicFile.writeAll(UnsafeRawBufferPointer($0), to: descriptor) }
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
