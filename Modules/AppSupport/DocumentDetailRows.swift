import Engine
import Foundation
import Model
import Storage

// The rows the CLI's document verbs print, with their documented field names (Docs/CLI.md).

/// `multidoc show`: a document's detail.
public struct DetailRow: Encodable, Sendable {
    public var name: String
    public var uuid: String
    public var state: String
    public var modified: Date?
    public var text: String
    public var origin: String
    public var location: String
    public var store: String
    public var recovery: String?

    /// The row of `detail`; `recovery`: what error recovery did to it, if anything.
    public init(_ detail: DocumentDetail, id: DocumentID, recovery: String?) {
        name = detail.summary.name
        uuid = id.description
        state = detail.summary.state.statusString
        modified = detail.modified
        text = detail.text
        origin = detail.summary.origin.rawValue
        location = detail.summary.location.rawValue
        store = detail.summary.store.rawValue
        self.recovery = recovery
    }

    /// The detail in words: file name, state, modified, a blank line, the text.
    public var lines: [String] {
        ["File name: \(name)", "State:     \(state)", "Modified:  \(formatDate(modified))", "", text]
    }
}

/// `multidoc show --at`: the text after one save.
public struct PastTextRow: Encodable, Sendable {
    public var name: String
    public var uuid: String
    public var save: UInt64
    public var savedBy: String
    public var savedAt: Date
    public var text: String

    /// The row of `record`'s `text` as it was after `save`.
    public init(_ record: LocalDocumentRecord, text: String, save: TextSave) {
        name = record.name.rawValue
        uuid = record.id.description
        self.save = save.id
        savedBy = save.deviceName
        savedAt = save.committedAt
        self.text = text
    }

    public var lines: [String] {
        ["File name: \(name)", "As of:     save \(save) by \(savedBy), \(formatDate(savedAt))", "", text]
    }
}

/// `multidoc history`: one save.
public struct HistoryRow: Encodable, Sendable {
    public var save: UInt64
    public var savedAt: Date
    public var device: String
    public var deviceName: String
    public var sequence: UInt64
    public var added: Int
    public var removed: Int

    /// The row of one save.
    public init(_ save: TextSave) {
        self.save = save.id
        savedAt = save.committedAt
        device = save.device.description
        deviceName = save.deviceName
        sequence = save.sequence
        added = save.added
        removed = save.removed
    }

    /// The table of `history`, header first.
    public static func table(_ rows: [HistoryRow]) -> [[String]] {
        [["SAVE", "TIME", "DEVICE", "ADDED", "REMOVED"]] + rows.map {
            ["\($0.save)", formatDate($0.savedAt), "\($0.deviceName) (\($0.device.prefix(8)))", "+\($0.added)", "-\($0.removed)"]
        }
    }
}

/// `multidoc trash`: one trashed document.
public struct TrashRow: Encodable, Sendable {
    public var name: String
    public var uuid: String
    public var deletedAt: Date
    public var deletedBy: String

    /// The row of one trash entry.
    public init(_ entry: TrashEntry) {
        name = entry.name
        uuid = entry.id.description
        deletedAt = entry.deletedAt
        deletedBy = entry.deletedBy
    }

    /// The table of `trash`, header first.
    public static func table(_ rows: [TrashRow]) -> [[String]] {
        [["NAME", "UUID", "DELETED", "BY"]] + rows.map { [$0.name, String($0.uuid.prefix(8)), formatDate($0.deletedAt), $0.deletedBy] }
    }
}

extension DocumentRow {
    /// The master table of `list`, header first.
    public static func table(_ documents: [DocumentSummary]) -> [[String]] {
        [["NAME", "STATE", "ORIGIN", "VIEWABLE", "DOWNLOADED", "LOCATION", "STORE", "MODIFIED"]] + documents.map { document in
            [document.name, document.state.statusString, document.origin.rawValue, document.viewable ? "yes" : "no",
             downloaded(document), document.location.rawValue, document.store.rawValue,
             formatDate(document.modified)]
        }
    }
}
