import Engine
import Foundation
import Logging
import Settings
import Storage
import Syncthing

/// Everything the TUI runs on, built once by ``bootstrap(_:environment:)``.
struct Device: Sendable {
    let setup: DeviceSetup
    let library: DocumentLibrary
    /// The settings given as flags, kept to re-resolve settings after the file changes.
    let flags: [SettingKey: SettingValue]
    let environment: [String: String]
    let logURL: URL
}

/// The one bootstrap: resolves the device, opens the log file in its root and builds the
/// library over the real stores. Nothing is written to the terminal from here on.
/// - Throws: ``EngineError`` or ``SettingsError`` naming the problem.
func bootstrap(_ options: TUIOptions, environment: [String: String]) throws -> Device {
    let flags = try options.settingFlags()
    let setup = try DeviceSetup(
        rootPath: options.root, containerPath: options.container, flags: flags,
        environment: environment, createRoot: false)
    let logURL = setup.root.url.appendingPathComponent("multidoc-tui.log", isDirectory: false)
    let file = LogFile(url: logURL)
    var logger = Logger(label: "multidoc-tui") { label in FileLogHandler(label: label, file: file) }
    logger.logLevel = .info
    let stores = StoreProvider.standard(options: setup.storeOptions)
    let nudge = SyncthingNudge.fromSettings(setup.settings, container: setup.container, logger: logger)
    let library = setup.makeLibrary(stores: stores, logger: logger, containerObserver: nudge)
    return Device(setup: setup, library: library, flags: flags, environment: environment, logURL: logURL)
}

/// An append-only log file shared by every logger of the process.
final class LogFile: @unchecked Sendable {
    private let lock = NSLock()
    private let handle: FileHandle?

    init(url: URL) {
        if !FileManager.default.fileExists(atPath: url.path) {
            _ = FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        handle = try? FileHandle(forWritingTo: url)
        _ = try? handle?.seekToEnd()
    }

    func write(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        try? handle?.write(contentsOf: Data(line.utf8))
    }
}

/// Writes log lines to a ``LogFile``: the terminal belongs to the UI.
struct FileLogHandler: LogHandler {
    let label: String
    let file: LogFile
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let details = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let stamp = ISO8601DateFormatter().string(from: Date())
        file.write("\(stamp) \(event.level) \(label): \(event.message)\(details)\n")
    }
}
