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
    /// the folder: what ``placeOnce(_:at:usingSpare:)`` does after its write. The temporary
    /// file is gone after, in place or removed.
    /// - Throws: ``FileIOError`` if the rename or the folder's sync fails.
    public static func placeOnce(_ prepared: PreparedFile) throws(FileIOError) -> Placement {
        try putInPlace(prepared.temporary, atPath: prepared.path, durability: .durable, replacing: false)
    }

    /// Removes a prepared file that is not going to be put in place.
    public static func discard(_ prepared: PreparedFile) {
        unlink(prepared.temporary)
    }
}
