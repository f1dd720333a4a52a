#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// An advisory lock on a file (`flock(2)`), held until ``unlock()`` or deinit.
///
/// Locks are per open file description, so two instances in one process exclude each other as
/// two processes do; a killed process's locks are released by the kernel.
public final class FileLock: @unchecked Sendable {
    public enum Mode: Sendable { case shared, exclusive }

    private let fd: Int32
    public let path: String

    /// Opens (creating, mode 0600) the lock file at `url`.
    public init(url: URL) throws(FileIOError) {
        let fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileIOError(path: url.path, operation: "open lock file", errno: errno) }
        self.fd = fd
        self.path = url.path
    }

    deinit { _ = close(fd) }

    /// Waits for the lock.
    public func lock(_ mode: Mode = .exclusive) throws(FileIOError) {
        while flock(fd, mode == .exclusive ? LOCK_EX : LOCK_SH) != 0 {
            if errno == EINTR { continue }
            throw FileIOError(path: path, operation: "lock", errno: errno)
        }
    }

    /// Takes the lock if it is free; returns false if another holder has it.
    public func tryLock(_ mode: Mode = .exclusive) throws(FileIOError) -> Bool {
        while flock(fd, (mode == .exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK { return false }
            throw FileIOError(path: path, operation: "lock", errno: errno)
        }
        return true
    }

    public func unlock() { _ = flock(fd, LOCK_UN) }

    /// Runs `body` holding the lock.
    public func withLock<T, E: Error>(_ mode: Mode = .exclusive, _ body: () throws(E) -> T) throws -> T {
        try lock(mode)
        defer { unlock() }
        return try body()
    }

    /// Replaces the lock file's contents (for example with the holder's pid).
    public func writeContents(_ string: String) {
        _ = ftruncate(fd, 0)
        _ = string.withCString { pointer in pwrite(fd, pointer, strlen(pointer), 0) }
        _ = fsync(fd)
    }
}
