import AppSupport
import ArgumentParser
import Engine
import Foundation
import Logging
import Settings

/// `multidocd`: keeps one device root in step with the shared container until stopped.
@main
struct Multidocd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multidocd",
        abstract: "Keep one device root in step with the shared container, in the background.",
        discussion: """
        Runs a sync pass at start, then whenever inotify reports a change in the container or in \
        the device's own Documents folder (saves by other processes of this device), and every \
        --rescan-interval seconds as a safety net. Changes that arrive while a pass runs are \
        coalesced into one more pass. With FastSave off, outboxes are shipped every 2 s.

        One daemon per device root: a second one exits with code 2. The daemon writes its state \
        to <root>/multidocd.status.json after every pass (see Docs/DAEMON.md).

        Signals: SIGTERM or SIGINT finish the running pass, ship and close every document, remove \
        the status file and exit 0. SIGHUP re-reads <root>/settings.json (flags still win).

        Settings (--store ... --use-cloud) override the environment (MULTIDOC_*) and the settings \
        file for this run; see `multidoc settings`.

        Exit codes: 0 stopped cleanly, 1 other failure, 2 already running for this root, \
        3 unknown document (--inspect), 4 ambiguous name, 6 unusable device root, 7 container \
        unavailable, 9 store failed, 10 write failed, 12 busy, 13 bad setting, 64 bad usage.
        """,
        version: MultidocVersion.line("multidocd")
    )

    @Option(name: .long, help: ArgumentHelp("The device's root folder, created if missing (env MULTIDOC_ROOT; default ~/.local/share/multidoc).", valueName: "dir"))
    var root: String?

    @Option(name: .long, help: ArgumentHelp("The shared container folder (env MULTIDOC_CONTAINER). Required.", valueName: "dir"))
    var container: String?

    @Option(name: .long, help: ArgumentHelp("Storage backend for new and discovered documents.", valueName: "sqlite|json"))
    var store: String?

    @Option(name: .long, help: ArgumentHelp("SQLite journal mode.", valueName: "wal|rollback"))
    var journal: String?

    @Option(name: .customLong("device-name"), help: ArgumentHelp("The name this device shows to peers.", valueName: "name"))
    var deviceName: String?

    @Option(name: .customLong("fast-save"), help: ArgumentHelp("Ship each save before it returns; off: ship every 2 s.", valueName: "on|off"))
    var fastSave: String?

    @Option(name: .customLong("enable-ping"), help: ArgumentHelp("Answer peers' changes to the inspected document with a ping.", valueName: "on|off"))
    var enablePing: String?

    @Option(name: .customLong("copy-container-on-segue"), help: ArgumentHelp("Copy the container when a document's detail opens.", valueName: "on|off"))
    var copyContainerOnSegue: String?

    @Option(name: .customLong("attempt-error-recovery"), help: ArgumentHelp("Move damaged stores aside and rebuild them.", valueName: "on|off"))
    var attemptErrorRecovery: String?

    @Option(name: .customLong("use-cloud"), help: ArgumentHelp("Ship documents through the container.", valueName: "on|off"))
    var useCloud: String?

    @Option(name: .customLong("syncthing-address"), help: ArgumentHelp("Syncthing's API address to ask for a scan of each file written, e.g. http://127.0.0.1:8384 (none: no nudge).", valueName: "url"))
    var syncthingAddress: String?

    @Option(name: .customLong("syncthing-key"), help: ArgumentHelp("Syncthing's API key for the nudge.", valueName: "key"))
    var syncthingKey: String?

    @Option(name: .customLong("syncthing-folder"), help: ArgumentHelp("ID of the Syncthing folder holding the container.", valueName: "id"))
    var syncthingFolder: String?

    @Option(name: .customLong("syncthing-config"), help: ArgumentHelp("Syncthing's config.xml: address, key and folder not given otherwise are read from it.", valueName: "path"))
    var syncthingConfig: String?

    @Option(name: .customLong("log-level"), help: ArgumentHelp("Least severe log level written (default info).", valueName: "trace|debug|info|notice|warning|error"))
    var logLevel: String?

    @Option(name: .customLong("log-file"), help: ArgumentHelp("Where the log goes: a file, or - for stderr (default: stderr, or <root>/multidocd.log when stderr is a terminal).", valueName: "path|-"))
    var logFile: String?

    @Option(name: .long, help: ArgumentHelp("Inspect a document (name, UUID or UUID prefix): record latencies of peers' changes to it and, with EnablePing, answer them.", valueName: "doc"))
    var inspect: String?

    @Option(name: .customLong("ping-rounds"), help: ArgumentHelp("Pings this device sends at most for the inspected document (default: no limit).", valueName: "n"))
    var pingRounds: String?

    @Flag(name: .customLong("start-ping"), help: "Save a first ping to the inspected document after the first sync pass.")
    var startPing = false

    @Option(name: .customLong("rescan-interval"), help: ArgumentHelp("Seconds between full rescans, the safety net under inotify (default 600).", valueName: "seconds"))
    var rescanInterval: String?

    @Option(name: .customLong("autosave-interval"), help: ArgumentHelp("With FastSave off, seconds between shipping saved logs (default 2).", valueName: "seconds"))
    var autosaveInterval: String?

    @Flag(name: .customLong("exit-when-pings-done"), help: "Stop gracefully once --ping-rounds pings were sent (needs --inspect and --ping-rounds).")
    var exitWhenPingsDone = false

    mutating func run() async throws {
        let options: DaemonOptions
        do {
            options = try DaemonOptions(parsing: self, environment: ProcessInfo.processInfo.environment)
        } catch {
            throw fail(error)
        }
        if let url = options.logFile {
            let file = LogFile(url: url)
            LoggingSystem.bootstrap { label in FileLogHandler(label: label, file: file, logLevel: options.logLevel) }
            // One line where the user started it, so the log can be found.
            FileHandle.standardError.write(Data("multidocd: logging to \(url.path)\n".utf8))
        } else {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = options.logLevel
                return handler
            }
        }
        do {
            let daemon = try await bootstrap(options)
            try await daemon.run()
        } catch {
            throw fail(error)
        }
    }

    /// Writes one line on stderr and returns the exit code to throw.
    private func fail(_ error: any Error) -> ExitCode {
        let (message, code) = DaemonError.describe(error)
        FileHandle.standardError.write(Data("multidocd: error: \(message)\n".utf8))
        return ExitCode(code)
    }
}
