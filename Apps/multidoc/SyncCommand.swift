import AppSupport
import ArgumentParser
import Engine
import Foundation

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "Import and export now; --watch keeps going and prints events as they happen.")
    @OptionGroup var options: GlobalOptions
    @Flag(help: "Keep syncing and print events until interrupted.") var watch = false

    func run() async throws {
        try await runCommand {
            let (setup, library) = try options.bootstrap()
            let watched: SyncReport? = try await library.closing { library in
                guard !watch else {
                    try await library.watch { event in print(event.line(at: Date())); fflush(nil) }
                    return nil
                }
                return try await syncPass(library, json: options.json)
            }
            guard let report = watched else { return }
            let output = SyncOutput(report)
            guard setup.container != nil else {
                throw EngineError.containerUnavailable(
                    "no container is configured: nothing to sync (--container DIR, MULTIDOC_CONTAINER, or: multidoc settings set Container DIR)")
            }
            // Nothing was synced: say why once (no success line first), and exit with its code
            // (7, or 8 for a newer format); --json still prints what the pass saw.
            if let error = report.containerError {
                if options.json { try printJSON(output) }
                throw AppError(AppError(error).status, error.description + report.containerChangeHint, cause: error)
            }
            if options.json {
                try printJSON(output)
            } else {
                print("imported \(report.importedLogs) logs, exported \(report.exportedLogs), discovered \(report.discovered.count), removed \(report.removed.count)")
                for conflict in report.conflicts { print("conflict: \(conflict)") }
                reportSync(report, json: false)
            }
            if let unshipped = report.unshippedError(container: setup.container) { throw unshipped }
        }
    }
}

struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Inspect a document and keep syncing; with EnablePing on, answer peers' changes with pings.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Option(name: .customLong("ping-rounds"), help: "Stop after sending this many pings.") var pingRounds: Int?
    @Flag(name: .customLong("start-ping"), help: "Send the first ping now.") var startPing = false

    func run() async throws {
        try await runCommand {
            let counts = try await options.withLibrary { try await $0.inspectLive(document, rounds: pingRounds, startPing: startPing) }
            print("pings sent: \(counts.sent), answered: \(counts.answered)")
        }
    }
}
