#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CFileSystem
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
    ///
    /// `durable: false` skips both fsyncs: the file is still replaced whole (a reader sees the
    /// old or the new contents), but a crash may leave the old one. For files that are rewritten
    /// all the time and worth nothing after a crash, like the daemon's status.
    public static func write(_ data: Data, to url: URL, mode: mode_t = 0o600, durable: Bool = true) throws(FileIOError) {
        try write(data, to: url, mode: mode, durability: durable ? .durable : .none)
    }

    /// How much of a replace reaches the disk before ``write(_:to:mode:durability:)`` returns.
    public enum Durability: Sendable {
        /// The file and its folder are fsynced: the new contents survive a power loss.
        case durable
        /// The file is fsynced before the rename, its folder is not: after a power loss the
        /// file holds the old or the new contents, whole (on any file system), but may hold the
        /// old. For a store whose commit is durable elsewhere (its log in the container).
        case whole
        /// Nothing is fsynced: for caches worth nothing after a crash.
        case none
    }

    /// Writes `data` to `url` atomically, as durably as `durability` says.
    ///
    /// `usingSpare`: when an empty file made ahead waits beside `url`
    /// (``spareTemporary(for:)``, see ``makeSpareTemporary(for:)``), it is claimed (renamed to a
    /// temporary name of this write's own, so two writers never share it) and filled instead of
    /// a new file: no inode is made while the caller waits.
    public static func write(_ data: Data, to url: URL, mode: mode_t = 0o600, durability: Durability, usingSpare: Bool = false) throws(FileIOError) {
        _ = try write(data, to: url, mode: mode, durability: durability, usingSpare: usingSpare, replacing: true)
    }

    /// How a write-once file was put in place (``placeOnce(_:at:usingSpare:)``).
    public enum Placement: Sendable, Equatable {
        /// Renamed where nothing was, atomically (`RENAME_NOREPLACE`): the file there is this one.
        case exclusive
        /// Renamed after finding nothing there, on a file system that cannot refuse to replace
        /// (network and FUSE file systems): another process may have put a file there between
        /// the check and the rename, and lost it.
        case checked
        /// A file was there already: it is left alone, and nothing of this write stays.
        case existed
    }

    /// Writes `data` to `url` durably only if nothing is there yet (write-once files), and says
    /// how it was put in place: only ``Placement/exclusive`` proves the file there is this one.
    public static func placeOnce(_ data: Data, at url: URL, usingSpare: Bool = false) throws(FileIOError) -> Placement {
        var info = stat()
        if lstat(url.path, &info) == 0 {
            // The spare made ahead for this name is not needed any more.
            if usingSpare { unlink(spareTemporary(for: url).path) }
            return .existed
        }
        return try write(data, to: url, mode: 0o600, durability: .durable, usingSpare: usingSpare, replacing: false)
    }

    /// ``write(_:to:mode:durability:usingSpare:)``; without `replacing`, the file is put in place
    /// only if nothing is there when it is renamed (``Placement``).
    static func write(
        _ data: Data, to url: URL, mode: mode_t, durability: Durability, usingSpare: Bool, replacing: Bool
    ) throws(FileIOError) -> Placement {
        let path = url.path
        let temporary = try writeTemporary(data, forPath: path, mode: mode, durability: durability, usingSpare: usingSpare)
        return try putInPlace(temporary, atPath: path, durability: durability, replacing: replacing)
    }

    /// Writes `data` into a temporary file of its own beside `path` (the spare made ahead, with
    /// `usingSpare`, when it is there), synced unless `durability` is `none`. Returns its path.
    /// Paths, not URLs: a save's log goes this way, and a URL costs more to build than the
    /// rest of the write's CPU.
    static func writeTemporary(_ data: Data, forPath path: String, mode: mode_t, durability: Durability, usingSpare: Bool) throws(FileIOError) -> String {
        let temporary = "\(path).\(getpid()).\(UInt32.random(in: 0...UInt32.max))".withTemporaryPrefix
        var fd: Int32 = -1
        if usingSpare, rename(spareTemporaryPath(forPath: path), temporary) == 0 {
            fd = open(temporary, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)
            if fd < 0 { unlink(temporary) }
        }
        if fd < 0 { fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode) }
        guard fd >= 0 else { throw FileIOError(path: temporary, operation: "create", errno: errno) }
        var closed = false
        defer {
            if !closed { _ = close(fd) }
        }
        let code = data.withUnsafeBytes { writeAll($0, to: fd) }
        if code != 0 {
            unlink(temporary)
            throw FileIOError(path: path, operation: "write", errno: code)
        }
        if durability != .none, fsync(fd) != 0 {
            let code = errno
            unlink(temporary)
            throw FileIOError(path: path, operation: "fsync", errno: code)
        }
        closed = true
        if close(fd) != 0 {
            let code = errno
            unlink(temporary)
            throw FileIOError(path: path, operation: "close", errno: code)
        }
        return temporary
    }

    /// Renames `temporary` to `path` (without `replacing`, only where nothing is: ``Placement``)
    /// and, when `durability` is `durable`, syncs the folder. The temporary file is gone after,
    /// unless `keepingTemporary` and it was not put in place.
    static func putInPlace(
        _ temporary: String, atPath path: String, durability: Durability, replacing: Bool, keepingTemporary: Bool = false
    ) throws(FileIOError) -> Placement {
        func drop() { if !keepingTemporary { unlink(temporary) } }
        var placement = Placement.exclusive
        if !replacing {
            let placed = multidoc_rename_noreplace(temporary, path)
            let refused = placed == -2 ? ENOSYS : errno
            var info = stat()
            switch placed == 0 ? 0 : refused {
            case 0:
                if durability == .durable { try syncDirectory(path: path.parentPath) }
                return .exclusive
            case EEXIST:
                drop()
                return .existed
            case EINVAL, ENOSYS:
                // The file system cannot refuse to replace: checked just before the rename.
                if lstat(path, &info) == 0 {
                    drop()
                    return .existed
                }
                placement = .checked
            default:
                drop()
                throw FileIOError(path: path, operation: "rename", errno: refused)
            }
        }
        if rename(temporary, path) != 0 {
            let code = errno
            drop()
            throw FileIOError(path: path, operation: "rename", errno: code)
        }
        if durability == .durable { try syncDirectory(path: path.parentPath) }
        return placement
    }

    /// The empty file made ahead beside `url` that a write `usingSpare` fills.
    public static func spareTemporary(for url: URL) -> URL {
        URL(fileURLWithPath: spareTemporaryPath(forPath: url.path), isDirectory: false)
    }

    /// ``spareTemporary(for:)`` of a path.
    public static func spareTemporaryPath(forPath path: String) -> String {
        "\(path).spare".withTemporaryPrefix
    }

    /// Makes ``spareTemporary(for:)`` (empty, mode 0600) if it is not there; with `synced`, syncs
    /// it too (see below).
    public static func makeSpareTemporary(for url: URL, synced: Bool = true) throws(FileIOError) {
        try makeSpareTemporary(forPath: url.path, synced: synced)
    }

    /// ``makeSpareTemporary(for:synced:)`` of a path.
    public static func makeSpareTemporary(forPath path: String, synced: Bool = true) throws(FileIOError) {
        let spare = spareTemporaryPath(forPath: path)
        let fd = open(spare, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileIOError(path: spare, operation: "create", errno: errno) }
        // Synced now, while nobody waits: the first sync of a new file also writes its folders
        // on ext4 without a journal (`ext4_sync_parent`), which the write that fills it would pay
        // (in a folder just made, every folder up to the one synced last).
        if synced { _ = fsync(fd) }
        _ = close(fd)
    }

    /// Renames a file or folder (`rename(2)`: atomic, in one file system; a folder replaces only an
    /// empty one). Nothing is synced: the caller syncs the folders whose names must survive.
    public static func move(_ source: URL, to destination: URL) throws(FileIOError) {
        if rename(source.path, destination.path) != 0 {
            throw FileIOError(path: source.path, operation: "move to \(destination.path)", errno: errno)
        }
    }

    /// Writes `data` to `url` durably only if nothing is there yet (write-once files). Returns
    /// false when a file was there (``placeOnce(_:at:usingSpare:)`` says more).
    @discardableResult
    public static func writeOnce(_ data: Data, to url: URL, usingSpare: Bool = false) throws(FileIOError) -> Bool {
        try placeOnce(data, at: url, usingSpare: usingSpare) != .existed
    }

    /// Appends `data` to the existing file at `url` in one `write` (not durably: for caches
    /// whose reader drops a torn last line).
    public static func append(_ data: Data, to url: URL) throws(FileIOError) {
        let fd = open(url.path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw FileIOError(path: url.path, operation: "open for append", errno: errno) }
        defer { _ = close(fd) }
        let failure = data.withUnsafeBytes { writeAll($0, to: fd) }
        if failure != 0 { throw FileIOError(path: url.path, operation: "append", errno: failure) }
    }

    /// Writes every byte of `bytes` to `fd` (a short write goes on, an interrupted one is
    /// retried). Returns 0, or the `errno` of the write that failed.
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(fd, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return 0
    }

    /// fsyncs a file and its folder: what was written to it, and its name, survive a crash.
    public static func sync(_ url: URL) throws(FileIOError) {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw FileIOError(path: url.path, operation: "open", errno: errno) }
        defer { _ = close(fd) }
        if fsync(fd) != 0 { throw FileIOError(path: url.path, operation: "fsync", errno: errno) }
        try syncDirectory(url.deletingLastPathComponent())
    }

    /// fsyncs a directory so a rename or unlink in it survives a crash.
    public static func syncDirectory(_ url: URL) throws(FileIOError) {
        try syncDirectory(path: url.path)
    }

    /// ``syncDirectory(_:)`` of a path.
    public static func syncDirectory(path: String) throws(FileIOError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileIOError(path: path, operation: "open directory", errno: errno) }
        defer { _ = close(fd) }
        if fsync(fd) != 0, errno != EINVAL {
            throw FileIOError(path: path, operation: "fsync directory", errno: errno)
        }
    }
}

extension String {
    /// This path with ``AtomicFile/temporaryPrefix`` put before its last component: the
    /// temporary name beside it.
    /// Bytes, not characters: a name may start with a combining mark, which makes one
    /// character with the slash before it.
    var withTemporaryPrefix: String {
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return AtomicFile.temporaryPrefix + self }
        let name = utf8.index(after: slash)
        return String(decoding: Array(utf8[..<name]) + Array(AtomicFile.temporaryPrefix.utf8) + Array(utf8[name...]), as: UTF8.self)
    }

    /// The folder this path is in, as `URL.deletingLastPathComponent` gives it for a file's path.
    var parentPath: String {
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == startIndex ? "/" : String(decoding: utf8[..<slash], as: UTF8.self)
    }
}
