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
                    // --json: JSON Lines, one object per event, printed as it happens.
                    let json = options.json
                    try await library.watch { event in
                        if json { (try? WatchEventRow(event, at: Date()).line()).map { print($0) } } else { print(event.line(at: Date())) }
                        fflush(nil)
                    }
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
                print(report.summaryLine)
                for conflict in report.conflicts { print("conflict: \(conflict)") }
                reportSync(report, json: false)
            }
            if let unshipped = report.unshippedError(container: setup.container) { throw unshipped }
        }
    }
}

struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Inspect a document and keep syncing; with EnablePing on, answer peers' changes with pings.",
        discussion: """
            Runs until --ping-rounds pings were sent, or until interrupted (SIGINT, SIGTERM); then \
            prints the pings sent and answered (--json: {document, name, pingsSent, pingsAnswered}). \
            The line on stderr says when it has started.
            """)
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Option(name: .customLong("ping-rounds"), help: "Stop after sending this many pings.") var pingRounds: Int?
    @Flag(name: .customLong("start-ping"), help: "Send the first ping now.") var startPing = false

    func validate() throws {
        if let pingRounds, pingRounds < 1 { throw ValidationError("--ping-rounds must be at least 1") }
    }

    func run() async throws {
        try await runCommand {
            let until = pingRounds.map { "\($0) ping\($0 == 1 ? " is" : "s are") sent or interrupted" } ?? "interrupted (Ctrl-C)"
            // Said on stderr: stdout holds only the summary (--json: its object).
            let output = try await options.withLibrary { library in
                try await library.inspectLive(document, rounds: pingRounds, startPing: startPing) { printError("inspecting \($0) until \(until)") }
            }
            if options.json { try printJSON(output) } else { print(output.line) }
        }
    }
}
