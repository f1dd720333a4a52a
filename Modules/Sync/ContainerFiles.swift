/// Which names in the container are finished files to read. Everything else — temporary names,
/// dot files, replication engines' partial and conflict files, editor backups — is skipped.
public enum ContainerFiles {
    /// True for names a reader must never import.
    public static func isIgnored(_ name: String) -> Bool {
        if isTemporary(name) { return true }
        if isConflictCopy(name) { return true }
        for suffix in [".tmp", "~", ".swp", ".bak", ".orig", ".part", ".partial"] where name.hasSuffix(suffix) {
            return true
        }
        return false
    }

    /// A writer's temporary file (`.tmp-…`, Syncthing's `.syncthing.….tmp` and `~syncthing~…`,
    /// any dot file): it becomes a finished file by a rename, which is a change of its own.
    public static func isTemporary(_ name: String) -> Bool { name.hasPrefix(".") || name.hasPrefix("~") }

    /// Syncthing's `<name>.sync-conflict-<date>-<time>-<device>.<ext>` and similar copies.
    /// The write-once layout never causes them; if one appears it is reported, not imported.
    public static func isConflictCopy(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return conflictMarkers.contains { contains(bytes, $0) }
    }

    private static let conflictMarkers = [".sync-conflict-", " (conflicted copy", "(Conflict"].map { Array($0.utf8) }

    /// A plain byte search: `String.contains` goes through the generic string-processing path,
    /// slow enough to show when every name of a busy folder is checked on every pass.
    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == first {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
