import AppSupport
import ArgumentParser
import Engine
import Foundation
import Model
import Storage

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

    func run() async throws {
        try await runCommand {
            let saves = try await options.withLibrary { library in
                let record = try await resolveFresh(document, in: library, json: options.json)
                return try await library.history(record.id)
            }
            let rows = saves.map(HistoryRow.init)
            if options.json { try printJSON(rows); return }
            guard !rows.isEmpty else {
                print("no saves in the history yet (saves are kept from when the container is of format 2)")
                return
            }
            printTable(HistoryRow.table(rows))
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
