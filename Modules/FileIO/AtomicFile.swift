#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Durable file operations that Foundation on Linux gets wrong or leaves out.
///
/// `FileManager.replaceItemAt` renames the wrong way on this Foundation and loses the new file,
/// so every replace here is: write a temporary file beside the target, fsync it, `rename(2)` it
/// over the target, fsync the directory.
public enum AtomicFile {
    /// The prefix of temporary files. Readers of shared folders skip names that start with a dot.
    public static let temporaryPrefix = ".tmp-"

    /// Writes `data` to `url` atomically and durably: after a crash the file holds either the old
    /// or the new contents, never a mix. Files are created with mode 0600.
    /// - Throws: ``FileIOError`` naming the path and the failing step.
    public static func write(_ data: Data, to url: URL, mode: mode_t = 0o600) throws(FileIOError) {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(
            "\(temporaryPrefix)\(url.lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max))")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw FileIOError(path: temporary.path, operation: "create", errno: errno) }
        var closed = false
        defer {
            if !closed { _ = close(fd) }
        }
        let written = data.withUnsafeBytes { buffer -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            var offset = 0
            while offset < buffer.count {
                let result = Glibc.write(fd, base + offset, buffer.count - offset)
                if result < 0 {
                    if errno == EINTR { continue }
                    return -1
                }
                offset += result
            }
            return offset
        }
        if written < 0 {
            let code = errno
            unlink(temporary.path)
            throw FileIOError(path: url.path, operation: "write", errno: code)
        }
        if fsync(fd) != 0 {
            let code = errno
            unlink(temporary.path)
            throw FileIOError(path: url.path, operation: "fsync", errno: code)
        }
        closed = true
        if close(fd) != 0 {
            let code = errno
            unlink(temporary.path)
            throw FileIOError(path: url.path, operation: "close", errno: code)
        }
        if rename(temporary.path, url.path) != 0 {
            let code = errno
            unlink(temporary.path)
            throw FileIOError(path: url.path, operation: "rename", errno: code)
        }
        try syncDirectory(directory)
    }

    /// Writes `data` to `url` only if nothing is there yet (write-once files). Returns false when a
    /// file already exists; the existing file is left alone.
    @discardableResult
    public static func writeOnce(_ data: Data, to url: URL) throws(FileIOError) -> Bool {
        if FileManager.default.fileExists(atPath: url.path) { return false }
        try write(data, to: url)
        return true
    }

    /// fsyncs a directory so a rename or unlink in it survives a crash.
    public static func syncDirectory(_ url: URL) throws(FileIOError) {
        let fd = open(url.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileIOError(path: url.path, operation: "open directory", errno: errno) }
        defer { _ = close(fd) }
        if fsync(fd) != 0, errno != EINVAL {
            throw FileIOError(path: url.path, operation: "fsync directory", errno: errno)
        }
    }

    /// Creates a directory and its parents with mode 0700 (files multidoc makes are private).
    public static func makeDirectory(_ url: URL) throws(FileIOError) {
        do {
            try FileManager.default.createDirectory(
                at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
                return
            }
            throw FileIOError(path: url.path, operation: "create directory", errno: (error as NSError).code == 0 ? EIO : Int32(EACCES), detail: "\(error.localizedDescription)")
        }
    }

    /// Reads a whole file.
    public static func read(_ url: URL) throws(FileIOError) -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            let code: Int32
            if !FileManager.default.fileExists(atPath: url.path) { code = ENOENT }
            else if !FileManager.default.isReadableFile(atPath: url.path) { code = EACCES }
            else { code = EIO }
            throw FileIOError(path: url.path, operation: "read", errno: code)
        }
    }
}

/// A file operation that failed, with the path and the system's reason.
public struct FileIOError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let operation: String
    public let code: Int32
    public let detail: String?

    public init(path: String, operation: String, errno code: Int32, detail: String? = nil) {
        self.path = path
        self.operation = operation
        self.code = code
        self.detail = detail
    }

    public var isMissing: Bool { code == ENOENT }

    public var description: String {
        let reason = detail ?? String(cString: strerror(code))
        return "cannot \(operation) \(path): \(reason)"
    }
}
