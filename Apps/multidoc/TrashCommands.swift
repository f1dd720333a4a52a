import AppSupport
import ArgumentParser
import Engine
import Foundation
import Model

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

    func run() async throws {
        try await runCommand {
            let entries = try await options.withLibrary { library in
                reportSync(try await syncPass(library, json: options.json, .refresh(nil)), json: options.json)
                return await library.trash()
            }
            if options.json {
                try printJSON(entries.map(TrashRow.init))
                return
            }
            guard !entries.isEmpty else {
                print("the trash is empty")
                return
            }
            printTable(TrashRow.table(entries.map(TrashRow.init)))
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
