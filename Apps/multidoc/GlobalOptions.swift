import ArgumentParser
import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import Syncthing

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The device's root folder (env MULTIDOC_ROOT; default ~/.local/share/multidoc).", valueName: "dir"))
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

    @Option(name: .customLong("enable-ping"), help: ArgumentHelp("Answer peers' changes to the inspected document (on|off).", valueName: "on|off"))
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

    @Flag(name: .long, help: "Machine-readable JSON output.")
    var json = false

    @Flag(name: .long, help: "Log what happens to stderr.")
    var verbose = false

    /// The long options above that take a value, and those that do not: they may also come
    /// before the verb (``CommandLineShape/globalOptionsLast(_:valueOptions:flags:)``). A test
    /// checks every one appears in a command's help.
    static let valueOptionNames: Set<String> = [
        "--root", "--container", "--store", "--journal", "--device-name", "--fast-save", "--enable-ping",
        "--copy-container-on-segue", "--attempt-error-recovery", "--use-cloud", "--syncthing-address", "--syncthing-key",
        "--syncthing-folder", "--syncthing-config",
    ]
    static let flagNames: Set<String> = ["--json", "--verbose"]

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

    /// The one bootstrap: resolves the device and builds its library with the real stores.
    /// `onContainerChange` answers when the container's identity changed (reset, or another
    /// container mounted): commands stay local unless the user runs `container adopt`.
    func bootstrap(
        createRoot: Bool = false, onContainerChange: @escaping @Sendable (String) -> ContainerChangeDecision = { _ in .stayLocal }
    ) throws -> (DeviceSetup, DocumentLibrary) {
        let setup = try DeviceSetup(
            rootPath: root, containerPath: container, flags: try settingFlags(),
            environment: ProcessInfo.processInfo.environment, createRoot: createRoot)
        var logger = Logger(label: "multidoc")
        // Without --verbose the command's own one-line error (and the pass's warnings) say what
        // went wrong; the engine's log lines would repeat it.
        logger.logLevel = verbose ? .info : .critical
        let nudge = SyncthingNudge.fromSettings(setup.settings, container: setup.container, logger: logger)
        let library = setup.makeLibrary(stores: makeStores(setup), logger: logger, containerObserver: nudge, onContainerChange: onContainerChange)
        for warning in setup.warnings { PassWarnings.pending.add(warning) }
        return (setup, library)
    }
}

/// Runs a command body, turning every error into one line on stderr and an exit code. The
/// warnings its sync passes collected are printed when it ends, except one that says what the
/// error says: a problem is reported once.
func runCommand(_ body: () async throws -> Void) async throws {
    do {
        try await body()
        PassWarnings.pending.flush(except: nil)
    } catch let error as ExitCode {
        PassWarnings.pending.flush(except: nil)
        throw error
    } catch {
        let (message, code) = describe(error)
        PassWarnings.pending.flush(except: message)
        FileHandle.standardError.write(Data("multidoc: error: \(message)\n".utf8))
        throw ExitCode(code)
    }
}

/// The warnings of a command's sync passes, held until the command ends.
final class PassWarnings: @unchecked Sendable {
    static let pending = PassWarnings()
    private let lock = NSLock()
    private var lines: [String] = []

    func add(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        if !lines.contains(line) { lines.append(line) }
    }

    /// Prints the warnings once, leaving out any that contains `error`.
    func flush(except error: String?) {
        lock.lock()
        let held = lines
        lines = []
        lock.unlock()
        for line in held where error.map({ !line.contains($0) }) ?? true {
            FileHandle.standardError.write(Data("multidoc: warning: \(line)\n".utf8))
        }
    }
}

func describe(_ error: any Error) -> (String, Int32) {
    switch error {
    case let error as EngineError: (error.description, error.exitCode)
    case let error as SettingsError: (error.description, 13)
    case let error as DocumentNameError: (error.description, 5)
    case let error as StoreError:
        (error.description, error.kind == .busy ? 12 : 9)
    case let error as CLIError: (error.message, error.code)
    default: ("\(error)", 1)
    }
}

struct CLIError: Error {
    let message: String
    var code: Int32 = 1
}

/// Prints a value as pretty JSON with sorted keys.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    let data = try encoder.encode(value)
    print(String(decoding: data, as: UTF8.self))
}

/// A folder path as typed (at a prompt, quoted, or relative to where the command runs) made
/// absolute: `~` and `~/…` expanded as the shell would ($HOME first). Remembered paths
/// (the `Container` setting) are stored this way, so later commands may run anywhere.
func absolutePath(_ typed: String) -> String {
    var path = typed
    if path == "~" || path.hasPrefix("~/") {
        let home = ProcessInfo.processInfo.environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        path = home + path.dropFirst()
    }
    return URL(fileURLWithPath: path).standardizedFileURL.path
}

/// Parses a document name typed by the user.
func documentName(_ raw: String) throws -> DocumentName {
    do { return try DocumentName(typed: raw) } catch { throw EngineError.invalidName(error.description) }
}

/// The real stores (SQLite and JSON backends).
/// The real stores (SQLite and JSON backends), opened as the device's settings say.
func makeStores(_ setup: DeviceSetup) -> StoreProvider { .standard(options: setup.storeOptions) }
