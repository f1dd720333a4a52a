#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

// Folders made one mkdir(2) at a time, with errors that say what to do.
extension AtomicFile {
    /// Creates a directory and its parents with mode 0700 (files multidoc makes are private).
    /// - Throws: ``FileIOError`` naming the folder that could not be made and why, from the
    ///   system's code (`EEXIST`: a file is where the folder belongs; `EACCES`, `EROFS`,
    ///   `ENOSPC` …), never Foundation's generic "the operation could not be completed".
    public static func makeDirectory(_ url: URL) throws(FileIOError) {
        // mkdir(2) per missing component: one call in the common case (FileManager added a
        // chmod, a chown and an attribute listing per folder: a tenth of a 10,000-document
        // join), and errors with their errno.
        try makeDirectory(path: url.path, depth: 0)
    }

    /// Creates `url` and the folders between it and `base`, never `base` itself nor anything
    /// above it: a shared folder that went away (an unmounted drive, a container moved off)
    /// is not made again, empty, by a write that raced its going. One `mkdir` when the parent
    /// is there, as ``makeDirectory(_:)``.
    /// - Throws: ``FileIOError`` (`ENOENT` when `base` is gone).
    public static func makeDirectory(_ url: URL, below base: URL) throws(FileIOError) {
        let basePath = base.standardizedFileURL.path, path = url.standardizedFileURL.path
        guard path.hasPrefix(basePath + "/") else {
            var info = stat()
            if path == basePath, stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw FileIOError(path: path, operation: "create folder", errno: ENOENT, detail: "it is not inside \(basePath)")
        }
        try makeDirectory(path: path, depth: 0, below: basePath)
    }

    /// `mkdir` of `path`, its missing parents first; never `base` nor above it.
    private static func makeDirectory(path: String, depth: Int, below base: String? = nil) throws(FileIOError) {
        if mkdir(path, 0o700) == 0 { return }
        let code = errno
        let parent = (path as NSString).deletingLastPathComponent
        if let base, parent == base, code == ENOENT || code == ENOTDIR {
            throw FileIOError(path: base, operation: "create folder", errno: ENOENT, detail: "the folder it belongs in is gone (or is not a folder)")
        }
        switch code {
        case EEXIST:
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw FileIOError(path: path, operation: "create folder", errno: ENOTDIR, detail: "a file is where this folder belongs; move it out of the way")
        case ENOENT where depth < 256:
            guard !parent.isEmpty, parent != path else { break }
            try makeDirectory(path: parent, depth: depth + 1, below: base)
            // Once more now that the parent is there (EEXIST from a racing process is checked).
            return try makeDirectory(path: path, depth: depth + 256, below: base)
        default:
            break
        }
        throw FileIOError(path: path, operation: "create folder", errno: code, detail: folderProblem(code))
    }

    /// What a failed `mkdir` means, in words that say what to do (nil: the system's words).
    static func folderProblem(_ code: Int32) -> String? {
        switch code {
        case EACCES, EPERM: "permission denied: this user may not write in its parent folder (or it is immutable); fix its permissions (chmod u+rwx, chattr -i) or run as its owner"
        case EROFS: "the file system is read-only"
        case ENOSPC, EDQUOT: "no space left on the device (or the quota is reached)"
        case ENOTDIR: "a file is where one of its parent folders belongs; move it out of the way"
        default: nil
        }
    }
}
