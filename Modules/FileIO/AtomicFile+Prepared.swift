#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

extension AtomicFile {
    /// A write-once file written and synced under a temporary name beside its place, and not
    /// put in place yet (``prepare(_:for:usingSpare:)``): the slow half of ``placeOnce(_:at:usingSpare:)``,
    /// done while the caller does something else. ``placeOnce(_:)`` puts it in place,
    /// ``discard(_:)`` drops it; one of the two must follow.
    public struct PreparedFile: Sendable {
        /// Where the file goes.
        public let path: String
        /// The synced file under its temporary name.
        let temporary: String

        /// ``path`` as a URL.
        public var url: URL { URL(fileURLWithPath: path, isDirectory: false) }
    }

    /// Writes `data` beside `url` under a temporary name of its own and syncs it (into the spare
    /// made ahead for `url`, with `usingSpare`, when one is there). Nothing is at `url` yet.
    /// - Throws: ``FileIOError`` naming the failing step; nothing is left behind.
    public static func prepare(_ data: Data, for url: URL, usingSpare: Bool = false) throws(FileIOError) -> PreparedFile {
        try prepare(data, forPath: url.path, usingSpare: usingSpare)
    }

    /// ``prepare(_:for:usingSpare:)`` of a path (a save's log: no URL on its way).
    public static func prepare(_ data: Data, forPath path: String, usingSpare: Bool = false) throws(FileIOError) -> PreparedFile {
        PreparedFile(path: path, temporary: try writeTemporary(data, forPath: path, mode: 0o600, durability: .durable, usingSpare: usingSpare))
    }

    /// Puts a prepared file at its place if nothing is there (`RENAME_NOREPLACE`), then syncs
    /// the folder unless `syncingFolder` is false: what ``placeOnce(_:at:usingSpare:)`` does
    /// after its write. The temporary file is gone after, in place or removed.
    ///
    /// Without the folder's sync the rename may not survive a power loss, while the file does
    /// under its temporary name (a journaling file system makes a new file's name durable with
    /// the file's sync): for a caller that puts such a file in place again after a restart
    /// (``isPreparedName(_:of:)`` tells its name).
    /// - Throws: ``FileIOError`` if the rename or the folder's sync fails.
    public static func placeOnce(_ prepared: PreparedFile, syncingFolder: Bool = true) throws(FileIOError) -> Placement {
        try putInPlace(prepared.temporary, atPath: prepared.path, durability: syncingFolder ? .durable : .none, replacing: false)
    }

    /// Puts a prepared file at its place, replacing what is there, and syncs the folder unless
    /// `syncingFolder` is false: what ``write(_:to:mode:durability:usingSpare:)`` does after
    /// its write. The temporary file is gone after.
    /// - Throws: ``FileIOError`` if the rename or the folder's sync fails.
    public static func replace(with prepared: PreparedFile, syncingFolder: Bool = true) throws(FileIOError) {
        _ = try putInPlace(prepared.temporary, atPath: prepared.path, durability: syncingFolder ? .durable : .none, replacing: true)
    }

    /// Whether `name` is a temporary name ``prepare(_:forPath:usingSpare:)`` gives a file whose
    /// place is named `placeName` (`.tmp-<place>.<process>.<number>`), and not the spare made
    /// ahead for it.
    public static func isPreparedName(_ name: String, of placeName: String) -> Bool {
        preparedMaker(name, of: placeName) != nil
    }

    /// The process that wrote the prepared file named `name` for the place `placeName`
    /// (``isPreparedName(_:of:)``), or nil for any other name.
    public static func preparedMaker(_ name: String, of placeName: String) -> pid_t? {
        let prefix = temporaryPrefix + placeName + "."
        guard name.hasPrefix(prefix) else { return nil }
        let rest = name.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard rest.count == 2, rest.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }),
              let maker = pid_t(rest[0]), maker > 0 else { return nil }
        return maker
    }

    /// Whether process `pid` runs (one this user may not signal runs too).
    public static func isRunning(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }

    /// Renames `temporary` to `path` where nothing is (`RENAME_NOREPLACE`, or a check just
    /// before where the file system cannot refuse), and syncs the folder. Unlike
    /// ``placeOnce(_:syncingFolder:)`` the temporary file stays where it is when anything is in
    /// the way. Returns whether it was put in place (a folder that could not be synced after
    /// the rename does not undo it).
    public static func placeKeeping(temporary: String, atPath path: String) -> Bool {
        do {
            return try putInPlace(temporary, atPath: path, durability: .durable, replacing: false, keepingTemporary: true) != .existed
        } catch {
            // Only the folder's sync fails after the rename: the temporary name is gone then.
            var info = stat()
            return lstat(temporary, &info) != 0 && errno == ENOENT
        }
    }

    /// An empty file made ahead in a folder under a temporary name of its own, open for
    /// writing (``makeStandby(inFolder:)``): ``prepare(_:forPath:into:)`` gives it the temporary
    /// name of a file going beside it and fills it, so the file's creation (an inode found and
    /// a folder entry written) happens before the data is there. ``discard(_:)-(StandbyFile)``
    /// drops one not used.
    public struct StandbyFile: Sendable {
        let folder: String
        let path: String
        let descriptor: Int32
    }

    /// Makes a ``StandbyFile`` in `folder` (`.tmp-standby.<process>.<number>`), or nil when it
    /// cannot be made there.
    public static func makeStandby(inFolder folder: String) -> StandbyFile? {
        let path = folder + "/" + temporaryPrefix + "standby.\(getpid()).\(UInt32.random(in: 0...UInt32.max))"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        return StandbyFile(folder: folder, path: path, descriptor: descriptor)
    }

    /// The process that made the standby file named `name` (``makeStandby(inFolder:)``), or nil
    /// for any other name.
    public static func standbyMaker(_ name: String) -> pid_t? {
        let prefix = temporaryPrefix + "standby."
        guard name.hasPrefix(prefix) else { return nil }
        let parts = name.dropFirst(prefix.count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let pid = pid_t(parts[0]), pid > 0, UInt32(parts[1]) != nil else { return nil }
        return pid
    }

    /// Removes a standby file that is not going to be used.
    public static func discard(_ standby: StandbyFile) {
        close(standby.descriptor)
        unlink(standby.path)
    }

    /// ``prepare(_:forPath:usingSpare:)`` into `standby` when it is in the folder of `path`
    /// (renamed to the temporary name, then written and synced); otherwise `standby` is dropped
    /// and a file is made as ``prepare(_:forPath:usingSpare:)`` makes it.
    public static func prepare(_ data: Data, forPath path: String, into standby: StandbyFile) throws(FileIOError) -> PreparedFile {
        let temporary = "\(path).\(getpid()).\(UInt32.random(in: 0...UInt32.max))".withTemporaryPrefix
        guard path.parentPath == standby.folder, rename(standby.path, temporary) == 0 else {
            discard(standby)
            return try prepare(data, forPath: path)
        }
        let fd = standby.descriptor
        let written = data.withUnsafeBytes { writeAll($0, to: fd) }
        let synced = written == 0 ? (fsync(fd) == 0 ? 0 : errno) : written
        let closed = close(fd) == 0 ? 0 : errno
        if written != 0 || synced != 0 || closed != 0 {
            unlink(temporary)
            throw FileIOError(path: path, operation: written != 0 ? "write" : synced != 0 ? "fsync" : "close", errno: written != 0 ? written : synced != 0 ? synced : closed)
        }
        return PreparedFile(path: path, temporary: temporary)
    }

    /// Removes a prepared file that is not going to be put in place.
    public static func discard(_ prepared: PreparedFile) {
        unlink(prepared.temporary)
    }
}
