#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's or folder's modification time and size, as `stat(2)` gives them: cheap change
/// detection for write-once files renamed into folders (a rename changes the folder's time).
/// A folder's stamp also holds its link count, which counts its subfolders.
public struct FileStamp: Hashable, Sendable {
    /// Nanoseconds since 1970, or -1 when the path does not exist.
    public var modified: Int64
    public var size: Int64
    /// A folder's link count (two more than its subfolders; 1 where the file system does not
    /// count them); 0 for a file, or when not known.
    public var links: Int64

    public init(modified: Int64, size: Int64, links: Int64 = 0) {
        self.modified = modified
        self.size = size
        self.links = links
    }

    init(_ info: stat) {
        self.init(
            modified: FileStamp.nanoseconds(info.st_mtim), size: Int64(info.st_size),
            links: (info.st_mode & S_IFMT) == S_IFDIR ? Int64(info.st_nlink) : 0)
    }

    /// Whether the link count counts subfolders, so that a subfolder added or removed changes
    /// the stamp even within one tick of the file system's clock (see ``now()``).
    public var countsSubfolders: Bool { links >= 2 }

    /// The stamp of `path` now (`modified` is -1 if it does not exist).
    public init(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            self.init(modified: -1, size: 0)
            return
        }
        self.init(info)
    }

    /// The real time now in the same unit, for deciding whether a stamp is too recent to trust
    /// (file times are taken from a coarse clock, so a change in the same tick as the stamp
    /// was read would not show: "racily clean", as git calls it).
    public static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return nanoseconds(time)
    }

    /// A file time in nanoseconds since 1970, saturated at the ends of `Int64` (years 1677 and
    /// 2262): whoever writes a file sets its time, and a replication engine keeps a peer's, so
    /// a folder dated 2400 must not trap.
    public static func nanoseconds(_ time: timespec) -> Int64 {
        let (seconds, overflow) = Int64(time.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return time.tv_sec < 0 ? .min : .max }
        let (sum, carried) = seconds.addingReportingOverflow(Int64(time.tv_nsec))
        return carried ? .max : sum
    }
}
