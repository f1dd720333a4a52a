/// Which names in the container are finished files to read. Everything else — temporary names,
/// dot files, replication engines' partial and conflict files, editor backups — is skipped.
public enum ContainerFiles {
    /// True for names a reader must never import.
    public static func isIgnored(_ name: String) -> Bool {
        if name.hasPrefix(".") || name.hasPrefix("~") { return true }  // .tmp-*, .syncthing.*.tmp, ~syncthing~*
        if isConflictCopy(name) { return true }
        for suffix in [".tmp", "~", ".swp", ".bak", ".orig", ".part", ".partial"] where name.hasSuffix(suffix) {
            return true
        }
        return false
    }

    /// Syncthing's `<name>.sync-conflict-<date>-<time>-<device>.<ext>` and similar copies.
    /// The write-once layout never causes them; if one appears it is reported, not imported.
    public static func isConflictCopy(_ name: String) -> Bool {
        name.contains(".sync-conflict-") || name.contains(" (conflicted copy") || name.contains("(Conflict")
    }
}
