import AppSupport
import ArgumentParser
import Engine
import FileIO
import Foundation
import Model
import Storage
import Sync

/// A document row as `--json` prints it (documented field names).
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

struct New: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create a document (the seed's \"+\" button); prints its name and UUID.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "The name (default: the next TestDoc<N>).") var name: String?

    func run() async throws {
        try await runCommand {
            let summary = try await options.withLibrary { library in
                reportSync(try await syncPass(library, json: options.json, .refresh(nil)), json: options.json)
                let summary = try await library.create(name: try name.map(documentName))
                reportSync(try await syncPass(library, json: options.json, .document(summary.id)), json: options.json)
                if name != nil { await warnIfNameShared(summary.name, library) }
                return summary
            }
            if options.json { try printJSON(DocumentRow(summary)) } else { print("\(summary.name)\t\(summary.id)") }
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The master table: name, state, origin, viewable, downloaded %, location, modified.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runCommand {
            let (documents, recovered) = try await options.withLibrary { library in
                reportSync(try await syncPass(library, json: options.json, .listing), json: options.json)
                return (await library.list(), await library.recoveryReports)
            }
            if !options.json {
                for (_, report) in recovered.sorted(by: { $0.key < $1.key }) {
                    FileHandle.standardError.write(Data("multidoc: recovered: \(report)\n".utf8))
                }
            }
            if options.json {
                printJSONRows(documents.map(DocumentRow.init))
                return
            }
            var rows = [["NAME", "STATE", "ORIGIN", "VIEWABLE", "DOWNLOADED", "LOCATION", "STORE", "MODIFIED"]]
            for document in documents {
                rows.append([document.name, document.state.statusString, document.origin.rawValue,
                             document.viewable ? "yes" : "no", document.previewed ? "preview" : "\(document.downloadPercent)%", document.location.rawValue,
                             document.store.rawValue, formatDate(document.modified)])
            }
            printTable(rows)
            for document in documents where document.problem != nil {
                FileHandle.standardError.write(Data("multidoc: warning: \(document.name): \(document.problem ?? "")\n".utf8))
            }
        }
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The detail inspector: file name, state, modified, text (honours CopyContainerOnSegue).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Option(help: ArgumentHelp("Show the text as it was after a save: its number in 'multidoc history', or a time (2026-11-23 21:00, or ISO 8601).", valueName: "save-or-time"))
    var at: HistoryPointArgument?

    struct Output: Encodable {
        var name: String
        var uuid: String
        var state: String
        var modified: Date?
        var text: String
        var origin: String
        var location: String
        var store: String
        var recovery: String?
    }

    func run() async throws {
        if let at {
            try await runCommand { try await showPast(at.point) }
            return
        }
        try await runCommand {
            let (record, detail, recovery) = try await options.withLibrary { library in
                let record = try await resolveFresh(document, in: library, json: options.json)
                return (record, try await library.detail(record.id, segue: true), await library.recoveryReports[record.id])
            }
            let output = Output(
                name: detail.summary.name, uuid: record.id.description, state: detail.summary.state.statusString,
                modified: detail.modified, text: detail.text, origin: detail.summary.origin.rawValue,
                location: detail.summary.location.rawValue, store: detail.summary.store.rawValue, recovery: recovery)
            if options.json { try printJSON(output); return }
            if let recovery { FileHandle.standardError.write(Data("multidoc: recovered: \(recovery)\n".utf8)) }
            if let problem = detail.containerCopyProblem { FileHandle.standardError.write(Data("multidoc: warning: \(problem)\n".utf8)) }
            print("File name: \(output.name)")
            print("State:     \(output.state)")
            print("Modified:  \(formatDate(output.modified))")
            print("")
            print(output.text)
        }
    }

    /// `show DOC --at POINT`: the text after one save of its history.
    func showPast(_ point: HistoryPoint) async throws {
        struct Past: Encodable {
            var name: String
            var uuid: String
            var save: UInt64
            var savedBy: String
            var savedAt: Date
            var text: String
        }
        let (record, past) = try await options.withLibrary { library in
            let record = try await resolveFresh(document, in: library, json: options.json)
            return (record, try await library.text(record.id, at: point))
        }
        let output = Past(name: record.name.rawValue, uuid: record.id.description, save: past.save.id, savedBy: past.save.deviceName,
                          savedAt: past.save.committedAt, text: past.text)
        if options.json { try printJSON(output); return }
        print("File name: \(output.name)")
        print("As of:     save \(output.save) by \(output.savedBy), \(formatDate(output.savedAt))")
        print("")
        print(output.text)
    }
}

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The saves that made a document's text: number, time, device, characters added and removed.",
        discussion: """
            Kept per device: the last 1,000 saves and any of the last 30 days, as this device \
            applied them (a container of format 1 keeps none: see 'multidoc container upgrade'). \
            'multidoc show DOC --at N' shows the text after save N; 'multidoc revert DOC --to N' \
            makes a new save that brings it back.
            """)
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String

    struct Row: Encodable {
        var save: UInt64
        var savedAt: Date
        var device: String
        var deviceName: String
        var sequence: UInt64
        var added: Int
        var removed: Int
    }

    func run() async throws {
        try await runCommand {
            let saves = try await options.withLibrary { library in
                let record = try await resolveFresh(document, in: library, json: options.json)
                return try await library.history(record.id)
            }
            let rows = saves.map {
                Row(save: $0.id, savedAt: $0.committedAt, device: $0.device.description, deviceName: $0.deviceName, sequence: $0.sequence,
                    added: $0.added, removed: $0.removed)
            }
            if options.json { try printJSON(rows); return }
            guard !rows.isEmpty else {
                print("no saves in the history yet (saves are kept from when the container is of format 2)")
                return
            }
            printTable([["SAVE", "TIME", "DEVICE", "ADDED", "REMOVED"]] + rows.map {
                ["\($0.save)", formatDate($0.savedAt), "\($0.deviceName) (\($0.device.prefix(8)))", "+\($0.added)", "-\($0.removed)"]
            })
        }
    }
}

struct Revert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a new save that brings a document's text back to what it was after an earlier save.",
        discussion: "The new save syncs like any other; nothing in the history is removed, so a revert can itself be reverted.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Option(help: ArgumentHelp("The save to go back to: its number in 'multidoc history', or a time (2026-11-23 21:00, or ISO 8601).", valueName: "save-or-time"))
    var to: HistoryPointArgument

    func run() async throws {
        try await runCommand {
            let (record, save) = try await options.withLibrary { library in
                let record = try await resolveFresh(document, in: library, json: options.json)
                return (record, try await library.revert(record.id, to: to.point))
            }
            if options.json {
                struct Output: Encodable { var name: String; var uuid: String; var revertedTo: UInt64 }
                try printJSON(Output(name: record.name.rawValue, uuid: record.id.description, revertedTo: save.id))
                return
            }
            print("reverted \(record.name.rawValue) to save \(save.id) (\(formatDate(save.committedAt)), by \(save.deviceName))")
        }
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Change a document's text: --text replaces, --append adds, --insert and --delete edit at a position, none opens $EDITOR.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Option(help: "Replace the text.") var text: String?
    @Option(help: "Append to the text.") var append: String?
    @Option(parsing: .upToNextOption, help: ArgumentHelp("Insert TEXT at POS (Unicode scalars from the start).", valueName: "pos> <text"))
    var insert: [String] = []
    @Option(parsing: .upToNextOption, help: ArgumentHelp("Delete LEN Unicode scalars from POS.", valueName: "pos> <len"))
    var delete: [String] = []

    /// What the flags ask for, checked by ``validate()``.
    enum Change {
        case replace(String), append(String), insert(String, at: Int), delete(at: Int, length: Int), editor
    }

    var change: Change {
        if let text { return .replace(text) }
        if let append { return .append(append) }
        if insert.count == 2, let position = Int(insert[0]) { return .insert(insert[1], at: position) }
        if delete.count == 2, let position = Int(delete[0]), let length = Int(delete[1]) { return .delete(at: position, length: length) }
        return .editor
    }

    func validate() throws {
        let given = [text != nil, append != nil, !insert.isEmpty, !delete.isEmpty].filter { $0 }.count
        if given > 1 { throw ValidationError("use one of --text, --append, --insert and --delete") }
        if !insert.isEmpty, insert.count != 2 || Int(insert[0]).map({ $0 >= 0 }) != true {
            throw ValidationError("--insert takes a position (a whole number from 0) and the text: --insert 5 'words'")
        }
        if !delete.isEmpty, delete.count != 2 || Int(delete[0]).map({ $0 >= 0 }) != true || Int(delete[1]).map({ $0 >= 0 }) != true {
            throw ValidationError("--delete takes a position and a length (whole numbers from 0): --delete 5 3")
        }
        if given == 1 { return }
        // Without $VISUAL or $EDITOR the editor is vi, which needs a terminal: a script gets one
        // line instead (a script may still name its own editor in $EDITOR).
        let environment = ProcessInfo.processInfo.environment
        if environment["VISUAL"] == nil, environment["EDITOR"] == nil,
           isatty(STDIN_FILENO) != 1 || isatty(STDOUT_FILENO) != 1 {
            throw ValidationError("no terminal for an editor: give the text with --text or --append, or set EDITOR")
        }
    }

    func run() async throws {
        try await runCommand {
            let detail = try await options.withLibrary { library in
                reportSync(try await syncPass(library, json: options.json, .refresh(nil)), json: options.json)
                let record = try await library.resolve(document)
                switch change {
                case .replace(let text): try await library.setText(record.id, text)
                case .append(let suffix): try await library.appendText(record.id, suffix)
                case .insert(let text, let position): try await library.insertText(record.id, text, at: position)
                case .delete(let position, let length): try await library.deleteText(record.id, at: position, length: length)
                case .editor:
                    // A peer's save while the editor was open is merged, not overwritten.
                    let original = try await library.detail(record.id).text
                    try await library.saveEditedText(record.id, try editInEditor(original), editedFrom: original)
                }
                reportSync(try await syncPass(library, json: options.json, .document(record.id)), json: options.json)
                return try await library.detail(record.id)
            }
            if options.json { try printJSON(DocumentRow(detail.summary)) } else { print("saved \(detail.summary.name)") }
        }
    }

    private func editInEditor(_ text: String) throws -> String {
        let editor = ProcessInfo.processInfo.environment["VISUAL"] ?? ProcessInfo.processInfo.environment["EDITOR"] ?? "vi"
        // The text is private: a folder only this user can enter, a file only this user can read.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("multidoc-edit-\(UUID().uuidString)", isDirectory: false)
        try AtomicFile.makeDirectory(folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("text.txt", isDirectory: false)
        try AtomicFile.write(Data(text.utf8), to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\(editor) \"$1\"", "sh", file.path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw AppError(.failure, "the editor (\(editor)) exited with \(process.terminationStatus); nothing saved") }
        return String(decoding: try Data(contentsOf: file), as: UTF8.self)
    }
}

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm", abstract: "Delete a document here and, for a cloud document, on every device.",
        discussion: "Every device that had it keeps it in its trash for 30 days: 'multidoc trash' lists, 'multidoc restore' brings it back.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String

    func run() async throws {
        try await runCommand {
            let record = try await options.withLibrary { library in
                reportSync(try await syncPass(library, json: options.json, .refresh(nil)), json: options.json)
                let record = try await library.resolve(document)
                try await library.delete(record.id)
                return record
            }
            if options.json {
                try printJSON(["deleted": record.id.description])
            } else {
                print("deleted \(record.name) (in the trash for \(DocumentLibrary.trashDays) days: multidoc restore '\(record.name)')")
            }
        }
    }
}

struct Trash: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Deleted documents this device keeps for 30 days (newest first).",
        discussion: "A delete made here or by a peer moves the document's local copy to <root>/Trash; 'multidoc restore' brings one back as a new document.")
    @OptionGroup var options: GlobalOptions

    struct Row: Encodable {
        var name: String
        var uuid: String
        var deletedAt: Date
        var deletedBy: String
    }

    func run() async throws {
        try await runCommand {
            let entries = try await options.withLibrary { library in
                reportSync(try await syncPass(library, json: options.json, .refresh(nil)), json: options.json)
                return await library.trash()
            }
            if options.json {
                try printJSON(entries.map { Row(name: $0.name, uuid: $0.id.description, deletedAt: $0.deletedAt, deletedBy: $0.deletedBy) })
                return
            }
            guard !entries.isEmpty else {
                print("the trash is empty")
                return
            }
            printTable([["NAME", "UUID", "DELETED", "BY"]] + entries.map { [$0.name, String($0.id.description.prefix(8)), formatDate($0.deletedAt), $0.deletedBy] })
        }
    }
}

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring a deleted document back from the trash, as a new document (a new UUID).",
        discussion: "Shared through the container when UseCloud is on. The newest trashed document of a name wins; give its UUID (or a prefix) for another.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or UUID prefix of a trashed document ('multidoc trash').") var document: String

    func run() async throws {
        try await runCommand {
            let summary = try await options.withLibrary { library in
                reportSync(try await syncPass(library, json: options.json, .refresh(nil)), json: options.json)
                let summary = try await library.restore(document)
                reportSync(try await syncPass(library, json: options.json, .document(summary.id)), json: options.json)
                return summary
            }
            if options.json { try printJSON(DocumentRow(summary)) } else { print("restored \(summary.name)\t\(summary.id)") }
        }
    }
}

struct Rename: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Rename a document (on every device for a cloud document).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Argument(help: "The new name.") var newName: String

    func run() async throws {
        try await runCommand {
            let name = try documentName(newName)
            let record = try await options.withLibrary { library in
                reportSync(try await syncPass(library, json: options.json, .refresh(nil)), json: options.json)
                let record = try await library.resolve(document)
                try await library.rename(record.id, to: name)
                reportSync(try await syncPass(library, json: options.json, .document(record.id)), json: options.json)
                await warnIfNameShared(name.rawValue, library)
                return record
            }
            if options.json { try printJSON(["renamed": record.id.description, "name": name.rawValue]) } else { print("renamed \(record.name) to \(name)") }
        }
    }
}

struct Convert: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Move a document's local store to the other backend.",
        discussion: "multidoc convert DOC --store json (or --to json). The document keeps its UUID, contents and sync state.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Option(name: .customLong("to"), help: "The backend: sqlite or json (the same as --store here).") var target: String?

    func run() async throws {
        try await runCommand {
            guard let target = target ?? options.device.store else {
                throw AppError(.usage, "say which backend to convert to: --store sqlite|json")
            }
            guard let kind = StoreKind(rawValue: target.lowercased()) else {
                throw AppError(.usage, "unknown store '\(target)'; expected sqlite or json")
            }
            let record = try await options.withLibrary { library in
                let record = try await library.resolve(document)
                try await library.convert(record.id, to: kind)
                return record
            }
            if options.json { try printJSON(["converted": record.id.description, "store": kind.rawValue]) } else { print("converted \(record.name) to \(kind)") }
        }
    }
}

struct MoveToCloud: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "move-to-cloud", abstract: "Make a local document ubiquitous (peers can build it whole).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String

    func run() async throws {
        try await runCommand {
            let (record, moved) = try await options.withLibrary { library in
                let record = try await library.resolve(document)
                let moved = try await library.moveToCloud(record.id)
                reportSync(try await syncPass(library, json: options.json, .document(moved)), json: options.json)
                return (record, moved)
            }
            if options.json {
                try printJSON(["moved": record.id.description, "uuid": moved.description, "location": "cloud"])
            } else {
                print("\(record.name) is in the cloud" + (moved == record.id ? "" : " as a new document \(moved) (its old UUID was deleted from the cloud)"))
            }
        }
    }
}

struct MoveToLocal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move-to-local",
        abstract: "Make a cloud document local: --remove-cloud (peers drop it) or --keep-cloud (the local copy becomes a separate document).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Flag(name: .customLong("keep-cloud"), help: "Keep the cloud copy; the local copy becomes a separate document.") var keepCloud = false
    @Flag(name: .customLong("remove-cloud"), help: "Remove it from the cloud; peers drop it.") var removeCloud = false

    func validate() throws {
        if keepCloud == removeCloud { throw ValidationError("choose one of --keep-cloud or --remove-cloud") }
    }

    func run() async throws {
        try await runCommand {
            let (record, local) = try await options.withLibrary { library in
                reportSync(try await syncPass(library, json: options.json, .refresh(nil)), json: options.json)
                let record = try await library.resolve(document)
                return (record, try await library.moveToLocal(record.id, choice: keepCloud ? .keepCloud : .removeCloud))
            }
            if options.json {
                try printJSON(["moved": record.id.description, "uuid": local.description, "location": "local"])
            } else {
                print("\(record.name) is local (\(local))")
            }
        }
    }
}
