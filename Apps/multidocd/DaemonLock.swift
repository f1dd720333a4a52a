#if canImport(Glibc)
import Glibc
#endif
import AppSupport
import Engine
import FileIO
import Foundation

/// One daemon per device root: an exclusive `flock` on `<root>/multidocd.lock`, holding the pid.
/// The kernel drops the lock when the process dies, so a stale file never blocks a restart.
struct DaemonLock: Sendable {
    let lock: FileLock

    /// Takes the root's lock and writes this process's pid into it.
    /// - Throws: `AppError` with status `.alreadyRunning` naming the holder's pid, or
    ///   `FileIOError` if the lock file cannot be opened.
    static func acquire(for root: DeviceRoot) throws -> DaemonLock {
        let lock = try FileLock(url: root.daemonLockURL)
        guard try lock.tryLock(.exclusive) else {
            // The holder writes its pid right after locking; give it a moment if it is empty.
            var pid = ""
            for _ in 0..<20 {
                pid = ((try? AtomicFile.read(root.daemonLockURL)).map { String(decoding: $0, as: UTF8.self) } ?? "")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                if !pid.isEmpty { break }
                usleep(10_000)
            }
            throw AppError(.alreadyRunning, "multidocd is already running for \(root.url.path) (pid \(pid.isEmpty ? "unknown" : pid))")
        }
        lock.writeContents("\(getpid())\n")
        return DaemonLock(lock: lock)
    }

    /// Empties the pid and releases the lock (the last step of a clean stop).
    func release() {
        lock.writeContents("")
        lock.unlock()
    }
}
