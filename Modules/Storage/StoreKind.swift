import Foundation

/// The storage backends. The app picks one for new documents; each document remembers its own.
public enum StoreKind: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case sqlite
    case json

    /// The store file's name inside the document's folder.
    public var fileName: String {
        switch self {
        case .sqlite: "store.sqlite"
        case .json: "store.json"
        }
    }

    public var description: String { rawValue }
}

/// SQLite's journal modes that multidoc supports.
public enum JournalMode: String, Sendable, Codable, CaseIterable {
    /// The rollback journal (`DELETE`): one file, what seed 004 always used.
    case rollback
    /// Write-ahead logging.
    case wal
}

/// Options for opening stores.
public struct StoreOptions: Sendable, Equatable {
    public var journalMode: JournalMode
    /// How long a writer waits for another process's transaction before ``StoreError/Kind/busy``.
    public var busyTimeout: Duration

    /// WAL by default: see Docs/STORAGE.md for the figures and the reasons.
    public init(journalMode: JournalMode = .wal, busyTimeout: Duration = .seconds(5)) {
        self.journalMode = journalMode
        self.busyTimeout = busyTimeout
    }
}
