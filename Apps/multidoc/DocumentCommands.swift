import AppSupport
import ArgumentParser
import Engine
import Foundation
import Model

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
            let (report, documents, recovered) = try await options.withLibrary { library in
                (try await syncPass(library, json: options.json, .listing), await library.list(), await library.recoveryReports)
            }
            reportListing(report, documents, json: options.json)
            if !options.json {
                for (_, report) in recovered.sorted(by: { $0.key < $1.key }) { printError("multidoc: recovered: \(report)") }
            }
            if options.json {
                printJSONRows(documents.map(DocumentRow.init))
                return
            }
            printTable(DocumentRow.table(documents))
        }
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The detail inspector: file name, state, modified, text (honours CopyContainerOnSegue).")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Option(help: ArgumentHelp("Show the text as it was after a save: its number in 'multidoc history', or a time (2026-11-23 21:00, or ISO 8601).", valueName: "save-or-time"))
    var at: HistoryPointArgument?

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
            let output = DetailRow(detail, id: record.id, recovery: recovery)
            if options.json { try printJSON(output); return }
            if let recovery { printError("multidoc: recovered: \(recovery)") }
            if let problem = detail.containerCopyProblem { printError("multidoc: warning: \(problem)") }
            output.lines.forEach { print($0) }
        }
    }

    /// `show DOC --at POINT`: the text after one save of its history.
    func showPast(_ point: HistoryPoint) async throws {
        let (record, past) = try await options.withLibrary { library in
            let record = try await resolveFresh(document, in: library, json: options.json)
            return (record, try await library.text(record.id, at: point))
        }
        let output = PastTextRow(record, text: past.text, save: past.save)
        if options.json { try printJSON(output); return }
        output.lines.forEach { print($0) }
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
            let (detail, saved) = try await options.withLibrary { library in
                reportSync(try await syncPass(library, json: options.json, .refresh(nil)), json: options.json)
                let record = try await library.resolve(document)
                let request = TextEditRequest(text: text, append: append, insert: insert, delete: delete)
                // The editor opens on the text a save merges against: peers' saves waiting in
                // the container are imported first, as `show` does. Opened on the text as this
                // device last read it, the merge would take those saves for a conflict and keep
                // both versions of the part they touched.
                if case .editor = request {
                    reportSync(try await syncPass(library, json: options.json, .refresh(record.id)), json: options.json)
                }
                let saved = try await request.apply(to: record.id, in: library, environment: ProcessInfo.processInfo.environment)
                reportSync(try await syncPass(library, json: options.json, .document(record.id)), json: options.json)
                return (try await library.detail(record.id), saved)
            }
            let row = DocumentRow(detail.summary, saved: saved)
            if options.json { try printJSON(row) } else { print(row.editLine) }
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
