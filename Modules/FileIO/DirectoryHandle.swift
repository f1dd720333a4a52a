#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An open folder that paths are resolved from: a `stat` of `"<uuid>/document.json"` relative
/// to it walks two components instead of the whole absolute path. Passes over every document
/// stamp several files each, and the path walk was a third of their cost.
///
/// Nil when the folder cannot be opened; callers fall back on absolute paths then.
public final class DirectoryHandle: Sendable {
    public let path: String
    let descriptor: Int32

    public init?(path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// `stat` of `relative` (no leading slash); links are not followed when `followLinks` is false.
    func status(_ relative: String, followLinks: Bool = true) -> stat? {
        var info = stat()
        guard fstatat(descriptor, relative, &info, followLinks ? 0 : AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return info
    }

    /// How many folders this folder holds, from its link count (each subfolder's `..` is a
    /// link); nil on a file system that does not count them (btrfs says 1).
    public var subfolderCount: Int? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_nlink >= 2 else { return nil }
        return Int(info.st_nlink) - 2
    }

    /// The names in the folder `relative` (nil if it cannot be listed), with whether each is a
    /// folder (`DT_UNKNOWN` counts as one: the caller checks what it needs).
    public func entries(_ relative: String) -> [(name: String, isFolderOrUnknown: Bool)]? {
        let folder = openat(descriptor, relative, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { return nil }
        guard let directory = fdopendir(folder) else {
            close(folder)
            return nil
        }
        defer { closedir(directory) }
        var names: [(String, Bool)] = []
        while let entry = readdir(directory) {
            let type = entry.pointee.d_type
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            names.append((name, type == UInt8(DT_DIR) || type == UInt8(DT_UNKNOWN)))
        }
        return names
    }
}

extension FileStamp {
    /// The stamp of `relative` inside `folder` (`modified` is -1 if it does not exist).
    public init(in folder: DirectoryHandle, _ relative: String) {
        guard let info = folder.status(relative) else {
            self.init(modified: -1, size: 0)
            return
        }
        self.init(info)
    }
}

extension FileIdentity {
    /// The identity of `relative` inside `folder`, nil if there is none.
    public init?(in folder: DirectoryHandle, _ relative: String) {
        guard let info = folder.status(relative) else { return nil }
        self.init(
            inode: UInt64(info.st_ino), modified: FileStamp.nanoseconds(info.st_mtim),
            size: Int64(info.st_size))
    }
}
