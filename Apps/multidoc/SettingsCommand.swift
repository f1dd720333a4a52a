import AppSupport
import ArgumentParser
import Engine
import FileIO
import Foundation
import Model
import Settings
import Storage
import Sync

struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "Show and change this device's settings.",
        subcommands: [ListSettings.self, GetSetting.self, SetSetting.self], defaultSubcommand: ListSettings.self)

    struct Row: Encodable {
        var key: String
        var value: String
        var source: String
        var environment: String
        var summary: String
    }

    struct ListSettings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Every setting with its value and where the value came from.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await runCommand {
                let (setup, _) = try options.bootstrap()
                let rows = setup.settings.all.map {
                    Row(key: $0.key.rawValue, value: $0.shown, source: $0.source.rawValue,
                        environment: $0.key.environmentName, summary: $0.key.summary)
                }
                if options.json { try printJSON(rows); return }
                printTable([["KEY", "VALUE", "SOURCE", "DESCRIPTION"]] + rows.map { [$0.key, $0.value, $0.source, $0.summary] })
            }
        }
    }

    struct GetSetting: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "One setting's value.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The key, e.g. FastSave.") var key: String

        func run() async throws {
            try await runCommand {
                let key = try SettingKey.named(key)
                let (setup, _) = try options.bootstrap()
                guard let entry = setup.settings.entries[key] else { throw SettingsError.unknownKey(key.rawValue) }
                if options.json {
                    try printJSON(Row(key: key.rawValue, value: entry.value.description, source: entry.source.rawValue, environment: key.environmentName, summary: key.summary))
                } else {
                    print(entry.value.description)
                }
            }
        }
    }

    struct SetSetting: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Change a setting in this device's settings file.")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The key, e.g. FastSave.") var key: String
        @Argument(help: "The value, e.g. on or off.") var value: String
        @Option(
            name: .customLong("cloud-documents"),
            help: ArgumentHelp("With UseCloud off, what becomes of each cloud document: keep-using-cloud (default), remove-cloud (local copy, peers drop it) or keep-cloud (local copy as a separate document).", valueName: "choice"))
        var cloudDocuments: String = MoveToLocalChoice.keepUsingCloud.rawValue

        func run() async throws {
            try await runCommand {
                let key = try SettingKey.named(key)
                var parsed = try key.parse(value)
                // A container is remembered as an absolute path: later commands may run anywhere.
                if key == .container, case .text(let path) = parsed, !path.isEmpty {
                    parsed = .text(absolutePath(path))
                }
                guard let choice = MoveToLocalChoice(rawValue: cloudDocuments) else {
                    throw AppError(.usage, "unknown choice '\(cloudDocuments)' for --cloud-documents; expected keep-using-cloud, remove-cloud or keep-cloud")
                }
                let (setup, _) = try options.bootstrap()
                try setup.settingsFile.set(key, to: parsed)
                var moved: [UseCloudChange] = []
                if key == .useCloud {
                    // Re-read so the new value is in force, then bring the documents in line.
                    let (_, library) = try options.bootstrap()
                    moved = try await library.closing { library in
                        await library.sync()
                        let moved = await library.applyUseCloud { _ in choice }
                        await library.sync()
                        return moved
                    }
                }
                if options.json {
                    try printJSON(["key": key.rawValue, "value": parsed.description, "moved": moved.map { "\($0.name): \($0.movedTo?.rawValue ?? $0.problem ?? "")" }.joined(separator: "; ")])
                } else {
                    print("\(key.rawValue) = \(parsed)")
                    for change in moved {
                        if let location = change.movedTo { print("  \(change.name) → \(location.rawValue)") }
                        if let problem = change.problem { print("  \(change.name): \(problem)") }
                    }
                }
            }
        }
    }
}
