import Engine
import Foundation
import Model

/// One event of `sync --watch --json`: a JSON object on a line of its own (JSON Lines), keys
/// sorted, fields typed; the fields an event has no value for are left out.
public struct WatchEventRow: Encodable, Sendable, Equatable {
    /// When the event was printed (ISO 8601).
    public var time: Date
    /// `added`, `removed`, `changed`, `saved`, `imported`, `viewable`, `downloading`,
    /// `cloudAvailability`, `containerChanged`, `quarantined`, `recovered` or `error`.
    public var event: String
    /// The document's UUID.
    public var document: String?
    public var name: String?
    /// `created` or `discovered` (`added`).
    public var origin: String?
    /// The devices whose changes were imported (`imported`).
    public var from: [String]?
    public var inserted: Int?
    public var updated: Int?
    public var deleted: Int?
    /// How much of the document is downloaded (`downloading`).
    public var percent: Int?
    /// Whether the container is there (`cloudAvailability`).
    public var available: Bool?
    public var detail: String?

    /// The row of `event`, stamped with `date`.
    public init(_ event: LibraryEvent, at date: Date) {
        time = date
        switch event {
        case .documentAdded(let summary):
            self.event = "added"
            document = summary.id.description
            name = summary.name
            origin = summary.origin.rawValue
        case .documentRemoved(let id, let name):
            self.event = "removed"
            document = id.description
            self.name = name
        case .objectsDidChange(let id, let changes):
            self.event = "changed"
            document = id.description
            count(changes)
        case .didSave(let id, let changes):
            self.event = "saved"
            document = id.description
            count(changes)
        case .didImport(let id, let changes, let peers):
            self.event = "imported"
            document = id.description
            from = peers
            count(changes)
        case .becameViewable(let id):
            self.event = "viewable"
            document = id.description
        case .downloadProgress(let id, let percent):
            self.event = "downloading"
            document = id.description
            self.percent = percent
        case .cloudAvailability(let available, let detail):
            self.event = "cloudAvailability"
            self.available = available
            self.detail = detail
        case .containerChanged(let detail):
            self.event = "containerChanged"
            self.detail = detail
        case .quarantined(let detail):
            self.event = "quarantined"
            self.detail = detail
        case .recovered(let id, let report):
            self.event = "recovered"
            document = id.description
            detail = report
        case .failure(let detail):
            self.event = "error"
            self.detail = detail
        }
    }

    private mutating func count(_ changes: ChangeSummary) {
        inserted = changes.inserted.count
        updated = changes.updated.count
        deleted = changes.deleted.count
    }

    /// The row as one line of JSON (no newline inside it, keys sorted).
    public func line() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
