#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFileSystem
import Foundation

// Files one process rewrites all the time, and their readers.
extension AtomicFile {
    /// Replaces a file that one process rewrites all the time (the daemon's status after every
    /// pass), whole but not durably, like `write(_:to:durable: false)`, without freeing an
    /// inode each time: the new contents go into a spare file beside it (``temporaryPrefix``,
    /// kept between calls), which is then swapped with the file (`renameat2` with
    /// `RENAME_EXCHANGE`). A rename over the file freed its old inode on every call, and ext4
    /// without a journal scans every inode freed in the last 5–10 s each time it creates a file
    /// (`find_inode_bit`, `recently_deleted`): a daemon's status written 50 times a second made
    /// every log it created cost a scan of hundreds. Where the swap cannot be made (the first
    /// write, a file system without it) the spare is renamed over the file as before.
    ///
    /// The spare is the file readers had a moment ago: a reader that opened it then may still
    /// be reading it. Readers use ``readRewritten(_:limit:)``, which reads under a shared
    /// `flock`; the writer empties and fills the spare only under an exclusive one, and writes
    /// a new file as before while a reader holds the spare.
    ///
    /// One writer at a time: two processes rewriting the same file would share the spare.
    public static func rewrite(_ data: Data, to url: URL, mode: mode_t = 0o600) throws(FileIOError) {
        let spare = spareTemporary(for: url)
        let fd = open(spare.path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw FileIOError(path: spare.path, operation: "create", errno: errno) }
        var locked = flock(fd, LOCK_EX | LOCK_NB) == 0
        while !locked, errno == EINTR { locked = flock(fd, LOCK_EX | LOCK_NB) == 0 }
        guard locked else {
            // A reader is still on it: a new file this time (its inode freed when replaced).
            _ = close(fd)
            return try write(data, to: url, mode: mode, durability: .none)
        }
        // The lock goes with the descriptor, once the new contents are in place.
        defer { _ = close(fd) }
        // Written over from the start, then cut to its length: a file cut to nothing first
        // makes ext4 start writing it back when it is closed (`auto_da_alloc`, meant for files
        // rewritten without a sync), a write to the disk on every call that a peer's log sync
        // then waits behind.
        var code = lseek(fd, 0, SEEK_SET) == 0 ? data.withUnsafeBytes { writeAll($0, to: fd) } : errno
        if code == 0, ftruncate(fd, off_t(data.count)) != 0 { code = errno }
        if code != 0 {
            unlink(spare.path)
            throw FileIOError(path: url.path, operation: "write", errno: code)
        }
        let exchanged = multidoc_rename_exchange(spare.path, url.path)
        if exchanged == 0 { return }
        let refused = exchanged == -2 ? ENOSYS : errno
        guard refused == ENOENT || refused == EINVAL || refused == ENOSYS || refused == EPERM else {
            unlink(spare.path)
            throw FileIOError(path: url.path, operation: "exchange", errno: refused)
        }
        if rename(spare.path, url.path) != 0 {
            let failure = errno
            unlink(spare.path)
            throw FileIOError(path: url.path, operation: "rename", errno: failure)
        }
    }

    /// Removes a file ``rewrite(_:to:mode:)`` keeps, and its spare.
    public static func removeRewritten(_ url: URL) {
        unlink(url.path)
        unlink(spareTemporary(for: url).path)
    }

    /// Reads a file that ``rewrite(_:to:mode:)`` keeps, whole: under a shared `flock`, which the
    /// writer's exclusive one excludes while it fills the file this reader may have opened.
    public static func readRewritten(_ url: URL, limit: Int = defaultReadLimit) throws(FileIOError) -> Data {
        Data(try readBytes(url, limit: limit, followSymlinks: true, sharedLock: true))
    }
}
