import AppSupport
import ArgumentParser
import Engine
import FileIO
import Foundation
import Model
import Storage
import Sync

struct DocumentRow: Encodable {
    var name: String
    var uuid: String
    var state: String
    var origin: String
    var viewable: Bool
    var downloadPercent: Int
    var location: String
    var store: String
    var modified: Date?
    var problem: String?
    /// Read from the container only: viewable while it is there, not downloaded.
    var previewed: Bool

    init(_ summary: DocumentSummary) {
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
    }

    /// The row as `JSONEncoder` would write it, keys sorted (``printJSONRows(_:)``).
    func write(to object: inout JSONObject) {
        object.int("downloadPercent", downloadPercent)
        object.string("location", location)
        object.date("modified", modified)
        object.string("name", name)
        object.string("origin", origin)
        object.bool("previewed", previewed)
        object.string("problem", problem)
        object.string("state", state)
        object.string("store", store)
        object.string("uuid", uuid)
        object.bool("viewable", viewable)
    }
}

/// Prints the master table's rows as JSON, written by hand: a row per document, and
/// `JSONEncoder` took a sixth of `list --json` over 10,000 of them.
func printJSONRows(_ rows: [DocumentRow]) {
    var text = JSONText()
    text.array(rows) { object, row in row.write(to: &object) }
    text.printed()
}

func formatDate(_ date: Date?) -> String {
    date.map(TimeText.local) ?? "-"
}

/// Columns padded to their widest cell (counted in characters), two spaces apart, trailing
/// blanks trimmed; written in one piece (the master table can have 10,000 rows).
func printTable(_ rows: [[String]]) {
    guard let header = rows.first else { return }
    var widths = header.map(\.count)
    for row in rows { for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) } }
    var out = ""
    for row in rows {
        var line = ""
        for (index, cell) in row.enumerated() {
            if index > 0 { line += "  " }
            line += cell
            if index < widths.count, index < row.count - 1 { line += String(repeating: " ", count: max(0, widths[index] - cell.count)) }
        }
        while line.last == " " { line.removeLast() }
        out += line
        out += "\n"
    }
    print(out, terminator: "")
}

/// Holds a pass's warnings until the command ends (``PassWarnings``), which drops the one that
/// repeats the command's error.
func reportSync(_ report: SyncReport, json: Bool) {
    guard !json else { return }
    for file in report.quarantined { PassWarnings.pending.add(file.description) }
    for problem in report.problems {
        PassWarnings.pending.add(problem.description)
    }
}

/// Two documents may share a name (as on two devices that named theirs alike); say so when a
/// command just made it happen, since commands that name it then need a UUID prefix.
func warnIfNameShared(_ name: String, _ library: DocumentLibrary) async {
    let candidates: [(name: String, id: String)]
    do {
        _ = try await library.resolve(name)
        return
    } catch {
        guard case .ambiguousName(_, let found) = error else { return }
        candidates = found
    }
    PassWarnings.pending.add(
        "\(candidates.count) documents are now named '\(name)'; name them by UUID prefix ("
            + candidates.map { String($0.id.prefix(8)) }.joined(separator: ", ") + ") or rename one")
}
