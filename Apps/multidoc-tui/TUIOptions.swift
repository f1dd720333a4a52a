import AppSupport
import ArgumentParser
import Settings

/// The command line: the CLI's device options plus the settings switches.
struct TUIOptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multidoc-tui",
        abstract: "The multidoc documents of one device in a terminal, kept in step live.",
        discussion: """
        Master list: +/n new, d delete, Enter open, s settings, l latencies, r sync now, ? keys, q quit. \
        Detail: e/Enter edit, Esc or F2 saves and leaves edit mode, Esc goes back. \
        Log lines go to multidoc-tui.log in the device root, never to the terminal.
        """,
        version: MultidocVersion.line("multidoc-tui")
    )

    @Option(name: .long, help: ArgumentHelp("The device's root folder, made if missing (env MULTIDOC_ROOT; default ~/.local/share/multidoc).", valueName: "dir"))
    var root: String?

    @Option(name: .long, help: ArgumentHelp("The shared container folder (env MULTIDOC_CONTAINER; none: no cloud).", valueName: "dir"))
    var container: String?

    @Option(name: .long, help: ArgumentHelp("Storage backend for new documents: sqlite or json.", valueName: "kind"))
    var store: String?

    @Option(name: .long, help: ArgumentHelp("SQLite journal mode: wal (default) or rollback.", valueName: "mode"))
    var journal: String?

    @Option(name: .customLong("device-name"), help: ArgumentHelp("This device's name.", valueName: "name"))
    var deviceName: String?

    @Option(name: .customLong("fast-save"), help: ArgumentHelp("Ship each save before it returns (on|off).", valueName: "on|off"))
    var fastSave: String?

    @Option(name: .customLong("enable-ping"), help: ArgumentHelp("Answer peers' changes to the open document with a ping (on|off).", valueName: "on|off"))
    var enablePing: String?

    @Option(name: .customLong("copy-container-on-segue"), help: ArgumentHelp("Copy the container when a document's detail opens (on|off).", valueName: "on|off"))
    var copyContainerOnSegue: String?

    @Option(name: .customLong("attempt-error-recovery"), help: ArgumentHelp("Rebuild damaged stores (on|off).", valueName: "on|off"))
    var attemptErrorRecovery: String?

    @Option(name: .customLong("use-cloud"), help: ArgumentHelp("Ship documents through the container (on|off).", valueName: "on|off"))
    var useCloud: String?

    @Option(name: .customLong("syncthing-address"), help: ArgumentHelp("Syncthing's API address to ask for a scan of each file written, e.g. http://127.0.0.1:8384 (none: no nudge).", valueName: "url"))
    var syncthingAddress: String?

    @Option(name: .customLong("syncthing-key"), help: ArgumentHelp("Syncthing's API key for the nudge.", valueName: "key"))
    var syncthingKey: String?

    @Option(name: .customLong("syncthing-folder"), help: ArgumentHelp("ID of the Syncthing folder holding the container.", valueName: "id"))
    var syncthingFolder: String?

    @Option(name: .customLong("syncthing-config"), help: ArgumentHelp("Syncthing's config.xml: address, key and folder not given otherwise are read from it.", valueName: "path"))
    var syncthingConfig: String?

    @Option(name: .customLong("sync-interval"), help: ArgumentHelp("Seconds between safety-net full passes (the watchers trigger the others; default 600).", valueName: "seconds"))
    var syncInterval: Double = 600

    /// Settings given as flags, parsed.
    func settingFlags() throws(SettingsError) -> [SettingKey: SettingValue] {
        var flags: [SettingKey: SettingValue] = [:]
        let given: [(SettingKey, String?)] = [
            (.store, store), (.journal, journal), (.deviceName, deviceName), (.fastSave, fastSave), (.enablePing, enablePing),
            (.copyContainerOnSegue, copyContainerOnSegue), (.attemptErrorRecovery, attemptErrorRecovery), (.useCloud, useCloud),
            (.syncthingAddress, syncthingAddress), (.syncthingKey, syncthingKey), (.syncthingFolder, syncthingFolder),
            (.syncthingConfig, syncthingConfig),
        ]
        for (key, value) in given {
            if let value { flags[key] = try key.parse(value) }
        }
        return flags
    }

    func validate() throws {
        guard syncInterval >= 0.1, syncInterval <= 3600 else {
            throw ValidationError("--sync-interval must be between 0.1 and 3600 seconds")
        }
    }
}
