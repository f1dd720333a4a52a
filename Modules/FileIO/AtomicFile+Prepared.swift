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

    /// Whether `name` is a temporary name ``prepare(_:forPath:usingSpare:)`` gives a file whose
    /// place is named `placeName` (`.tmp-<place>.<process>.<number>`), and not the spare made
    /// ahead for it.
    public static func isPreparedName(_ name: String, of placeName: String) -> Bool {
        let prefix = temporaryPrefix + placeName + "."
        guard name.hasPrefix(prefix) else { return false }
        let rest = name.utf8.dropFirst(prefix.utf8.count).split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return rest.count == 2 && rest.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } }
    }

    /// Puts the file at `temporary` (a prepared file a power loss kept under its temporary
    /// name) at `path` if nothing is there, and syncs the folder.
    /// - Throws: ``FileIOError`` if the rename or the folder's sync fails.
    public static func placeOnce(temporary: String, atPath path: String) throws(FileIOError) -> Placement {
        try putInPlace(temporary, atPath: path, durability: .durable, replacing: false)
    }

    /// Removes a prepared file that is not going to be put in place.
    public static func discard(_ prepared: PreparedFile) {
        unlink(prepared.temporary)
    }
}
