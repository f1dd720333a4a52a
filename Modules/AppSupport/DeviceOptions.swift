import ArgumentParser
import Engine
import Foundation
import Logging
import Settings
import Storage
import Syncthing

/// The options that say which device to run on and with which settings: the root, the
/// container and the thirteen setting switches. One group for `multidoc`, `multidoc-tui` and
/// `multidocd` (`@OptionGroup var device: DeviceOptions`), so the flags, their help and their
/// parsing are written once. A flag beats the environment (`MULTIDOC_*`), which beats the
/// root's settings file, which beats the default.
public struct DeviceOptions: ParsableArguments, Sendable {
    @Option(name: .long, help: ArgumentHelp("The device's root folder, made by 'multidoc init' (env MULTIDOC_ROOT; default ~/.local/share/multidoc).", valueName: "dir"))
    public var root: String?

    @Option(name: .long, help: ArgumentHelp("The shared container folder (env MULTIDOC_CONTAINER; default: the one the root remembers; none: no cloud).", valueName: "dir"))
    public var container: String?

    @Option(name: .long, help: ArgumentHelp("Storage backend for new and discovered documents.", valueName: "sqlite|json"))
    public var store: String?

    @Option(name: .long, help: ArgumentHelp("SQLite journal mode (default wal).", valueName: "wal|rollback"))
    public var journal: String?

    @Option(name: .customLong("device-name"), help: ArgumentHelp("The name this device shows to peers.", valueName: "name"))
    public var deviceName: String?

    @Option(name: .customLong("fast-save"), help: ArgumentHelp("Ship each save before it returns (off: ship on the autosave tick).", valueName: "on|off"))
    public var fastSave: String?

    @Option(name: .customLong("enable-ping"), help: ArgumentHelp("Answer peers' changes to the inspected document with a ping.", valueName: "on|off"))
    public var enablePing: String?

    @Option(name: .customLong("copy-container-on-segue"), help: ArgumentHelp("Copy the container when a document's detail opens.", valueName: "on|off"))
    public var copyContainerOnSegue: String?

    @Option(name: .customLong("attempt-error-recovery"), help: ArgumentHelp("Move damaged stores aside and rebuild them from the container.", valueName: "on|off"))
    public var attemptErrorRecovery: String?

    @Option(name: .customLong("use-cloud"), help: ArgumentHelp("Ship documents through the container.", valueName: "on|off"))
    public var useCloud: String?

    @Option(name: .customLong("syncthing-address"), help: ArgumentHelp("Syncthing's API address to ask for a scan of each file written, e.g. http://127.0.0.1:8384 (none: no nudge).", valueName: "url"))
    public var syncthingAddress: String?

    @Option(name: .customLong("syncthing-key"), help: ArgumentHelp("Syncthing's API key for the nudge.", valueName: "key"))
    public var syncthingKey: String?

    @Option(name: .customLong("syncthing-folder"), help: ArgumentHelp("ID of the Syncthing folder holding the container.", valueName: "id"))
    public var syncthingFolder: String?

    @Option(name: .customLong("syncthing-config"), help: ArgumentHelp("Syncthing's config.xml: address, key and folder not given otherwise are read from it.", valueName: "path"))
    public var syncthingConfig: String?

    @Option(name: .customLong("local-api"), help: ArgumentHelp("multidocd's HTTP API and web page on 127.0.0.1 (0: any free port; default off).", valueName: "off|on|port"))
    public var localAPI: String?

    public init() {}

    /// The long options of this group; all take a value. They may come before a verb
    /// (``CommandLineShape/globalOptionsLast(_:valueOptions:flags:)``); a test checks the list
    /// against the help.
    public static let valueOptionNames: Set<String> = [
        "--root", "--container", "--store", "--journal", "--device-name", "--fast-save", "--enable-ping",
        "--copy-container-on-segue", "--attempt-error-recovery", "--use-cloud", "--syncthing-address", "--syncthing-key",
        "--syncthing-folder", "--syncthing-config", "--local-api",
    ]

    /// The container as given on the command line: nil when not given (the environment or the
    /// root's settings decide); `none` is no container and an empty text is refused, both by
    /// ``DeviceSetup`` (``DeviceSetup/containerOption(_:)``).
    public var containerPath: String? { container }

    /// Settings given as flags, parsed.
    /// - Throws: ``SettingsError/badValue(key:value:expected:)`` naming the flag's setting.
    public func settingFlags() throws(SettingsError) -> [SettingKey: SettingValue] {
        var flags: [SettingKey: SettingValue] = [:]
        let given: [(SettingKey, String?)] = [
            (.store, store), (.journal, journal), (.deviceName, deviceName), (.fastSave, fastSave), (.enablePing, enablePing),
            (.copyContainerOnSegue, copyContainerOnSegue), (.attemptErrorRecovery, attemptErrorRecovery), (.useCloud, useCloud),
            (.syncthingAddress, syncthingAddress), (.syncthingKey, syncthingKey), (.syncthingFolder, syncthingFolder),
            (.syncthingConfig, syncthingConfig), (.localAPI, localAPI),
        ]
        for (key, value) in given {
            if let value { flags[key] = try key.parse(value) }
        }
        return flags
    }

    /// Resolves the device: its root (which must exist unless `createRoot`), its settings and
    /// its container.
    /// - Throws: ``EngineError`` for the root, ``SettingsError`` for a bad value.
    public func setup(environment: [String: String], createRoot: Bool = false, finishingIdentityChange: Bool = false) throws -> DeviceSetup {
        try DeviceSetup(
            rootPath: root, containerPath: container, flags: try settingFlags(), environment: environment, createRoot: createRoot,
            finishingIdentityChange: finishingIdentityChange)
    }
}

extension DeviceSetup {
    /// The library over the real stores (SQLite and JSON, opened as the settings say), with the
    /// Syncthing nudge when the settings ask for one. Every front end builds its library here;
    /// the long-lived ones (daemon, TUI) keep spare stores.
    public func openLibrary(
        logger: Logger, keepsSpareStores: Bool = false,
        onContainerChange: @escaping @Sendable (String) -> ContainerChangeDecision = { _ in .stayLocal }
    ) -> DocumentLibrary {
        let nudge = SyncthingNudge.fromSettings(settings, container: container, logger: logger)
        return makeLibrary(
            stores: .standard(options: storeOptions), logger: logger, containerObserver: nudge, onContainerChange: onContainerChange,
            keepsSpareStores: keepsSpareStores)
    }
}

extension DocumentLibrary {
    /// Runs `body` and then closes every document the library opened, whether `body` returned
    /// or threw: saves are shipped and stores closed on every path out of a command.
    public nonisolated func closing<T: Sendable>(_ body: (DocumentLibrary) async throws -> T) async throws -> T {
        let result: T
        do {
            result = try await body(self)
        } catch {
            await closeAll()
            throw error
        }
        await closeAll()
        return result
    }
}
