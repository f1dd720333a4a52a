#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Standby files made ahead of the save that fills them, at most one per folder, kept by this
/// process (``AtomicFile/StandbyFile``): a long-lived process shelves one in a folder right
/// after a log went in place there, so the next save there finds its file made instead of
/// making it. Making a file on ext4 without a journal passes over every inode freed in the last
/// seconds, and took 0.2–0.55 ms of a save's 0.5 before its log's sync could start
/// (Docs/PERFORMANCE.md).
///
/// A shelved file is the process's own (`.tmp-standby.<process>.<number>`): a kill leaves it
/// for the device's next pass, which removes standby files whose process is gone.
public enum StandbyShelf {
    private static let files = Mutex<[String: AtomicFile.StandbyFile]>([:])

    /// The file shelved in `folder`, taken off the shelf, if it is still there (nobody removed
    /// or replaced it since); nil otherwise.
    public static func take(inFolder folder: String) -> AtomicFile.StandbyFile? {
        guard let file = files.withLock({ $0.removeValue(forKey: folder) }) else { return nil }
        var named = stat(), opened = stat()
        if lstat(file.path, &named) == 0, fstat(file.descriptor, &opened) == 0, named.st_ino == opened.st_ino, named.st_dev == opened.st_dev,
           opened.st_size == 0 {
            return file
        }
        // Gone (its folder deleted, say): its name is not this file's any more.
        close(file.descriptor)
        return nil
    }

    /// Whether a file is shelved in `folder`.
    public static func holds(_ folder: String) -> Bool { files.withLock { $0[folder] != nil } }

    /// Shelves `file` in its folder. False when one is there already: the caller keeps `file`.
    public static func put(_ file: AtomicFile.StandbyFile) -> Bool {
        files.withLock { files in
            guard files[file.folder] == nil else { return false }
            files[file.folder] = file
            return true
        }
    }

    /// Removes the files shelved in the folders `matching` picks (a library closing).
    public static func discardAll(_ matching: (String) -> Bool) {
        let taken = files.withLock { files -> [AtomicFile.StandbyFile] in
            let picked = files.filter { matching($0.key) }
            for key in picked.keys { files[key] = nil }
            return Array(picked.values)
        }
        for file in taken { AtomicFile.discard(file) }
    }
}
