import AppSupport
import ArgumentParser

/// The command line: the CLI's device options plus the settings switches.
struct TUIOptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multidoc-tui",
        abstract: "The multidoc documents of one device in a terminal, kept in step live.",
        discussion: """
        Master list: +/n new, d delete, Enter open, s settings, l latencies, r sync now, ? keys, q quit. \
        Detail: e/Enter edit, Esc or F2 saves and leaves edit mode, Esc goes back. \
        Log lines go to multidoc-tui.log in the device root, never to the terminal. \
        On a root that does not exist yet, a first screen asks for the device's name and \
        container folder and sets the root up (as 'multidoc init' does).

        \(ExitStatus.help(TUIOptions.exitStatuses))
        """,
        version: MultidocVersion.line("multidoc-tui")
    )

    /// The exit codes the TUI can end with (its help lists them).
    static let exitStatuses: [ExitStatus] = [.ok, .failure, .rootUnusable, .containerUnavailable, .badSetting, .usage]

    @OptionGroup var device: DeviceOptions

    @Option(name: .customLong("sync-interval"), help: ArgumentHelp("Seconds between safety-net full passes (the watchers trigger the others).", valueName: "seconds"))
    var syncInterval: Double = 600

    func validate() throws {
        guard syncInterval >= 0.1, syncInterval <= 3600 else {
            throw ValidationError("--sync-interval must be between 0.1 and 3600 seconds")
        }
        if device.localAPI != nil { throw ValidationError("--local-api is multidocd's: run 'multidocd --root ROOT --local-api on' beside the TUI") }
    }
}
