import AppSupport
import Engine
import Foundation
import Logging
import Settings

/// The command line, checked and typed: everything the bootstrap needs.
struct DaemonOptions: Sendable {
    var rootPath: String?
    /// `--container` or `MULTIDOC_CONTAINER`; nil: the `Container` setting of the root.
    var containerPath: String?
    /// Where log lines go: nil for stderr.
    var logFile: URL?
    /// Settings given as flags; kept to re-resolve the settings on SIGHUP.
    var settingFlags: [SettingKey: SettingValue]
    var environment: [String: String]
    var logLevel: Logger.Level
    var inspect: String?
    var pingRounds: Int?
    var startPing: Bool
    var rescanInterval: Duration
    var exitWhenPingsDone: Bool
    /// How often outboxes are shipped with FastSave off (the autosave interval).
    var autosaveInterval: Duration = .seconds(2)
    /// How long changes in the device's Documents settle before their pass.
    var documentsSettle: Duration = .milliseconds(150)

    /// Checks the command line.
    /// - Throws: `AppError` (bad usage) or ``SettingsError`` (bad setting value).
    init(parsing command: Multidocd, environment: [String: String]) throws {
        self.environment = environment
        if let root = command.device.root { try DeviceSetup.checkRootPath(root) }
        rootPath = command.device.root
        containerPath = command.device.container
        // The log: `--log-file -` is stderr; by default stderr unless it is a terminal, where
        // the daemon's lines would draw over whatever runs there next (`multidocd &` and then
        // `multidoc-tui`): then `<root>/multidocd.log`.
        let root = command.device.root.map { URL(fileURLWithPath: $0) } ?? DeviceSetup.defaultRoot(environment: environment)
        switch command.logFile {
        case "-"?: logFile = nil
        case let path?: logFile = URL(fileURLWithPath: path)
        case nil: logFile = isatty(STDERR_FILENO) == 1 ? root.appendingPathComponent("multidocd.log", isDirectory: false) : nil
        }

        settingFlags = try command.device.settingFlags()

        if let raw = command.logLevel {
            let levels = ["trace", "debug", "info", "notice", "warning", "error"]
            guard levels.contains(raw.lowercased()), let level = Logger.Level(rawValue: raw.lowercased()) else {
                throw AppError(.usage, "bad value '\(raw)' for --log-level; expected \(levels.joined(separator: ", "))")
            }
            logLevel = level
        } else {
            logLevel = .info
        }

        if let raw = command.pingRounds {
            guard let rounds = Int(raw), rounds >= 1 else {
                throw AppError(.usage, "bad value '\(raw)' for --ping-rounds; expected a whole number of at least 1")
            }
            pingRounds = rounds
        }
        if let raw = command.rescanInterval {
            guard let seconds = Double(raw), seconds.isFinite, seconds >= 0.05, seconds <= 86_400 else {
                throw AppError(.usage, "bad value '\(raw)' for --rescan-interval; expected seconds between 0.05 and 86400")
            }
            rescanInterval = .milliseconds(Int64((seconds * 1000).rounded()))
        } else {
            rescanInterval = .seconds(600)
        }

        if let raw = command.autosaveInterval {
            guard let seconds = Double(raw), seconds.isFinite, seconds >= 0.05, seconds <= 86_400 else {
                throw AppError(.usage, "bad value '\(raw)' for --autosave-interval; expected seconds between 0.05 and 86400")
            }
            autosaveInterval = .milliseconds(Int64((seconds * 1000).rounded()))
        }

        inspect = command.inspect
        startPing = command.startPing
        exitWhenPingsDone = command.exitWhenPingsDone
        if inspect == nil, startPing { throw AppError(.usage, "--start-ping needs --inspect DOC") }
        if inspect == nil, pingRounds != nil { throw AppError(.usage, "--ping-rounds needs --inspect DOC") }
        if exitWhenPingsDone, inspect == nil || pingRounds == nil {
            throw AppError(.usage, "--exit-when-pings-done needs --inspect DOC and --ping-rounds N")
        }
    }
}
