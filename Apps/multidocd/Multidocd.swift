import AppSupport
import ArgumentParser
import CMalloc
import Engine
import Foundation
import Logging
import Settings
import UnixSignals

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

        \(ExitStatus.help(Multidocd.exitStatuses))
        """,
        version: MultidocVersion.line("multidocd")
    )

    /// The exit codes the daemon can end with (its help lists them).
    static let exitStatuses: [ExitStatus] = [
        .ok, .failure, .alreadyRunning, .unknownDocument, .ambiguousName, .rootUnusable, .containerUnavailable,
        .containerFormat, .storeFailed, .writeFailed, .busy, .badSetting, .usage,
    ]

    @OptionGroup var device: DeviceOptions

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

    /// A parser error is one line, as in `multidoc` (see ``CommandLineShape``).
    static func main() async {
        // One malloc arena, not glibc's eight per core: a pass over 10,000 documents on every
        // core left its freed memory spread over many arenas (peak RSS 77 MB with the default,
        // 68 MB with two, 64 MB with one, the sync no slower; Docs/PERFORMANCE.md). The daemon
        // waits on the disk, not on malloc. MALLOC_ARENA_MAX in the environment still wins.
        // Blocks of 64 KiB and more come from their own mappings and go back to the system when
        // freed, and the heap's free top is returned past 128 KiB: the buffers of a pass over
        // 10,000 documents (the catalog rewritten, the registry entry, a page of stamps) no
        // longer raise the peak by staying mapped after use (68.4 MB → 63.6 MB measured on a
        // daemon syncing 10,000 documents). The environment's MALLOC_MMAP_THRESHOLD_ and
        // MALLOC_TRIM_THRESHOLD_ still win.
        multidoc_tune_malloc()
        var command = CommandLineShape.parseOrExit(
            Multidocd.self, nonNegative: ["--rescan-interval": [0], "--autosave-interval": [0], "--ping-rounds": [0]])
        do {
            try await command.run()
        } catch {
            exit(withError: error)
        }
    }

    mutating func run() async throws {
        // Trapped before anything else: SIGTERM or SIGINT while the daemon starts stops it
        // gracefully once it can, instead of killing it half-started.
        let stopSignals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        do {
            let options = try DaemonOptions(parsing: self, environment: ProcessInfo.processInfo.environment)
            if let url = options.logFile {
                let file = try LogFile(url: url)
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
            let daemon = try await bootstrap(options)
            try await daemon.run(stoppingOn: stopSignals)
        } catch {
            throw fail(error)
        }
    }

    /// Writes one line on stderr and returns the exit code to throw.
    private func fail(_ error: any Error) -> ExitCode {
        let failure = AppError(error)
        FileHandle.standardError.write(Data("multidocd: error: \(failure.message)\n".utf8))
        return ExitCode(failure.exitCode)
    }
}
