/// A store that cannot be opened, read or written, with the file and the problem.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// No store at the location (and it was not to be created).
        case notFound
        /// The file is shorter than its format requires.
        case truncated
        /// The file is not a store of this backend (not a database, garbage JSON, wrong shape).
        case corrupt
        /// Written by a newer schema than this build knows.
        case newerSchema(found: Int64, supported: Int64)
        /// Permissions or another reason the file cannot be read.
        case unreadable
        /// Another process held the store longer than the busy timeout.
        case busy
        /// Writing failed (full disk, I/O error, read-only file system).
        case writeFailed
        /// The store was closed.
        case closed
    }

    public let kind: Kind
    public let path: String
    public let detail: String

    public init(_ kind: Kind, path: String, detail: String = "") {
        self.kind = kind
        self.path = path
        self.detail = detail
    }

    public var description: String {
        let what: String
        switch kind {
        case .notFound: what = "no store"
        case .truncated: what = "store is truncated"
        case .corrupt: what = "not a valid store"
        case .newerSchema(let found, let supported):
            what = "store has schema version \(found), newer than this build's \(supported)"
        case .unreadable: what = "store cannot be read"
        case .busy: what = "store is busy (another process holds it)"
        case .writeFailed: what = "store cannot be written"
        case .closed: what = "store is closed"
        }
        return detail.isEmpty ? "\(path): \(what)" : "\(path): \(what): \(detail)"
    }
}
