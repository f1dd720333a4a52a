#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One version of a file, told apart without reading it: inode, modification time and size.
/// A file replaced by a rename gets a new inode, so a replacement shows even within one tick of
/// the file clock (which ``FileStamp`` alone would miss).
public struct FileIdentity: Sendable, Hashable {
    public var inode: UInt64
    /// Nanoseconds since 1970.
    public var modified: Int64
    public var size: Int64

    /// The identity of the file at `path` now, or nil if there is none.
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        inode = UInt64(info.st_ino)
        modified = FileStamp.nanoseconds(info.st_mtim)
        size = Int64(info.st_size)
    }

    public init(inode: UInt64, modified: Int64, size: Int64) {
        self.inode = inode
        self.modified = modified
        self.size = size
    }

    /// Changed in the last two seconds: an inode can be reused, so an identity this young is
    /// checked again rather than trusted.
    public var isRecent: Bool { modified > FileStamp.now() &- 2_000_000_000 }
}
