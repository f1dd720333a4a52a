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
    /// folder (`DT_UNKNOWN` counts as one: the caller checks what it needs). Without
    /// `followLinks`, a link where the folder's last component belongs is not listed (nil).
    public func entries(_ relative: String, followLinks: Bool = true) -> [(name: String, isFolderOrUnknown: Bool)]? {
        let folder = openat(descriptor, relative, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (followLinks ? 0 : O_NOFOLLOW))
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

extension DirectoryHandle {
    /// The names in the folder at `path` (without `.` and `..`, unsorted); a folder that does
    /// not exist has none.
    ///
    /// Unlike `FileManager.contentsOfDirectory`, which callers turned into "empty" with `try?`,
    /// a folder that is there but cannot be listed is an error: one this user may not read
    /// (`EACCES`), a file where the folder belongs (`ENOTDIR`), a symbolic link (`ELOOP`, never
    /// followed). Treating those as empty once made a device seed a second identity into a
    /// container it could not read.
    /// - Throws: ``FileIOError`` with the operation "list", the path and the system's code.
    public static func names(at path: String) throws(FileIOError) -> [String] {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT { return [] }
            throw FileIOError(path: path, operation: "list", errno: code, detail: listingProblem(code))
        }
        guard let directory = fdopendir(descriptor) else {
            let code = errno
            close(descriptor)
            throw FileIOError(path: path, operation: "list", errno: code)
        }
        defer { closedir(directory) }
        var names: [String] = []
        errno = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        if errno != 0 { throw FileIOError(path: path, operation: "list", errno: errno) }
        return names
    }

    /// What a failed listing means, in words that say what to do.
    static func listingProblem(_ code: Int32) -> String? {
        switch code {
        case EACCES, EPERM: "permission denied: this user may not read it; give it read and search permission (chmod u+rx) or run as its owner"
        case ENOTDIR: "not a folder (a file is where a folder belongs); move the file out of the way"
        case ELOOP: "a symbolic link, which is never followed; replace it with the folder itself"
        default: nil
        }
    }
}
