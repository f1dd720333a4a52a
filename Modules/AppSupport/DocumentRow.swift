import Engine
import Foundation
import Model
import Storage

/// A document row as `--json` prints it (documented field names).
public struct DocumentRow: Encodable, Sendable {
    public var name: String
    public var uuid: String
    public var state: String
    public var origin: String
    public var viewable: Bool
    public var downloadPercent: Int
    public var location: String
    public var store: String
    public var modified: Date?
    public var problem: String?
    /// Read from the container only: viewable while it is there, not downloaded.
    public var previewed: Bool
    /// Where it is in its life on this device (`DocumentLife`: listed, previewed, downloading,
    /// downloaded, damaged, unreadable).
    public var life: String
    /// `edit --json` only: whether the edit made a save (false: it changed nothing).
    public var saved: Bool?

    /// `edit`'s row: the document, and whether the edit made a save.
    public init(_ summary: DocumentSummary, saved: Bool) {
        self.init(summary)
        self.saved = saved
    }

    /// The row of one document of the master table.
    public init(_ summary: DocumentSummary) {
        name = summary.name
        uuid = summary.id.description
        state = summary.state.statusString
        origin = summary.origin.rawValue
        viewable = summary.viewable
        downloadPercent = summary.downloadPercent
        location = summary.location.rawValue
        store = summary.store.rawValue
        modified = summary.modified
        problem = summary.problem
        previewed = summary.previewed
        life = summary.life.rawValue
    }

    /// The DOWNLOADED cell of the master table (the CLI's and the TUI's): `preview` for a
    /// previewed document, never a percentage that could pass for a download.
    public static func downloaded(_ summary: DocumentSummary) -> String {
        summary.life == .previewed ? "preview" : "\(summary.downloadPercent)%"
    }

    /// `edit`'s line: whether the edit made a save.
    public var editLine: String { saved == false ? "unchanged: nothing saved to \(name)" : "saved \(name)" }

    /// The row as `JSONEncoder` would write it, keys sorted (``printJSONRows(_:)``).
    public func write(to object: inout JSONObject) {
        object.int("downloadPercent", downloadPercent)
        object.string("life", life)
        object.string("location", location)
        object.date("modified", modified)
        object.string("name", name)
        object.string("origin", origin)
        object.bool("previewed", previewed)
        object.string("problem", problem)
        object.bool("saved", saved)
        object.string("state", state)
        object.string("store", store)
        object.string("uuid", uuid)
        object.bool("viewable", viewable)
    }
}

/// Prints the master table's rows as JSON, written by hand: a row per document, and
/// `JSONEncoder` took a sixth of `list --json` over 10,000 of them.
public func printJSONRows(_ rows: [DocumentRow]) {
    var text = JSONText()
    text.array(rows) { object, row in row.write(to: &object) }
    text.printed()
}
