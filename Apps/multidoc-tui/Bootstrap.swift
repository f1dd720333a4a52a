import AppSupport
import Engine
import Foundation
import Logging
import Settings

/// Everything the TUI runs on, built once by ``bootstrap(_:environment:)``.
struct Device: Sendable {
    let setup: DeviceSetup
    let library: DocumentLibrary
    /// The settings given as flags, kept to re-resolve settings after the file changes.
    let flags: [SettingKey: SettingValue]
    let environment: [String: String]
}

/// The one bootstrap: resolves the device, opens the log file in its root and builds the
/// library over the real stores. Nothing is written to the terminal from here on.
/// - Throws: ``EngineError`` or ``SettingsError`` naming the problem.
func bootstrap(_ options: TUIOptions, environment: [String: String]) throws -> Device {
    let flags = try options.device.settingFlags()
    let setup = try options.device.setup(environment: environment)
    if let missing = setup.missingContainer { throw missing }
    let logURL = setup.root.url.appendingPathComponent("multidoc-tui.log", isDirectory: false)
    let file = try LogFile(url: logURL)
    var logger = Logger(label: "multidoc-tui") { label in FileLogHandler(label: label, file: file) }
    logger.logLevel = .info
    let library = setup.openLibrary(logger: logger, keepsSpareStores: true)
    return Device(setup: setup, library: library, flags: flags, environment: environment)
}

