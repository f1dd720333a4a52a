#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

// Whole files read with their size checked first: no FIFO blocks a reader, no file over its limit is loaded.
extension AtomicFile {
    /// The most bytes ``read(_:limit:followSymlinks:)`` reads unless told otherwise: nothing
    /// multidoc reads is ever loaded into memory whatever its size.
    public static let defaultReadLimit = 256 * 1024 * 1024

    /// Reads a whole regular file of at most `limit` bytes.
    ///
    /// The file is opened non-blocking and checked with `fstat` before a byte is read, so a FIFO,
    /// a device or a folder put where a file belongs is refused at once (a FIFO would otherwise
    /// block the reader forever), and a file over `limit` is refused without being read.
    /// - Parameters:
    ///   - limit: the largest size accepted, in bytes.
    ///   - followSymlinks: false refuses a path whose last component is a symbolic link.
    /// - Throws: ``FileIOError`` naming the path: missing (`ENOENT`), unreadable (`EACCES`),
    ///   a symbolic link (`ELOOP`), not a regular file, or larger than `limit` (`EFBIG`).
    public static func read(_ url: URL, limit: Int = defaultReadLimit, followSymlinks: Bool = true) throws(FileIOError) -> Data {
        Data(try readBytes(url, limit: limit, followSymlinks: followSymlinks))
    }

    /// ``read(_:limit:followSymlinks:)`` into bytes, read straight into one array of the
    /// file's size (the catalog of 10,000 documents is megabytes: growing a `Data` by chunks
    /// and copying it into an array was a fifth of a command).
    public static func readBytes(_ url: URL, limit: Int = defaultReadLimit, followSymlinks: Bool = true) throws(FileIOError) -> [UInt8] {
        try readBytes(url, limit: limit, followSymlinks: followSymlinks, sharedLock: false)
    }

    /// ``readBytes(_:limit:followSymlinks:)`` of a path (no URL built).
    public static func readBytes(path: String, limit: Int = defaultReadLimit, followSymlinks: Bool = true) throws(FileIOError) -> [UInt8] {
        try readBytes(path: path, limit: limit, followSymlinks: followSymlinks, sharedLock: false)
    }

    static func readBytes(_ url: URL, limit: Int, followSymlinks: Bool, sharedLock: Bool) throws(FileIOError) -> [UInt8] {
        try readBytes(path: url.path, limit: limit, followSymlinks: followSymlinks, sharedLock: sharedLock)
    }

    static func readBytes(path: String, limit: Int, followSymlinks: Bool, sharedLock: Bool) throws(FileIOError) -> [UInt8] {
        var flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK
        if !followSymlinks { flags |= O_NOFOLLOW }
        let fd = open(path, flags)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP, !followSymlinks {
                throw FileIOError(path: path, operation: "read", errno: code, detail: "it is a symbolic link, which is not followed")
            }
            throw FileIOError(path: path, operation: "read", errno: code)
        }
        defer { _ = close(fd) }
        if sharedLock {
            while flock(fd, LOCK_SH) != 0 {
                if errno != EINTR { throw FileIOError(path: path, operation: "lock", errno: errno) }
            }
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileIOError(path: path, operation: "read", errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw FileIOError(path: path, operation: "read", errno: EINVAL, detail: "not a regular file")
        }
        let size = Int(info.st_size)
        guard size >= 0, size <= limit else {
            throw FileIOError(path: path, operation: "read", errno: EFBIG, detail: "\(size) bytes, larger than the \(limit)-byte limit")
        }
        // The file may grow while it is read: never more than one byte past the limit is read
        // (that byte says it grew too much).
        let capacity = limit == Int.max ? Int.max : limit + 1
        let first = size < capacity ? size + 1 : capacity
        var failure: Int32 = 0
        var bytes = [UInt8](unsafeUninitializedCapacity: first) { buffer, count in
            count = 0
            guard let base = buffer.baseAddress else { return }
            while count < first {
                let got = Glibc.read(fd, base + count, first - count)
                if got < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if got == 0 { return }
                count += got
            }
        }
        if bytes.count == first {
            // It grew: the rest in chunks.
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while failure == 0, bytes.count < capacity {
                let wanted = min(chunk.count, capacity - bytes.count)
                let got = chunk.withUnsafeMutableBytes { buffer in Glibc.read(fd, buffer.baseAddress, wanted) }
                if got < 0 {
                    if errno != EINTR { failure = errno }
                    continue
                }
                if got == 0 { break }
                bytes.append(contentsOf: chunk[0..<got])
            }
        }
        if failure != 0 { throw FileIOError(path: path, operation: "read", errno: failure) }
        guard bytes.count <= limit else {
            throw FileIOError(path: path, operation: "read", errno: EFBIG, detail: "it grew past the \(limit)-byte limit while being read")
        }
        return bytes
    }
}
