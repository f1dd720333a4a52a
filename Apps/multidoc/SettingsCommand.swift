import AppSupport
import ArgumentParser
import Engine
import Foundation
import Model
import Settings

struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "settings", abstract: "Show and change this device's settings.",
        subcommands: [ListSettings.self, GetSetting.self, SetSetting.self], defaultSubcommand: ListSettings.self)

    struct ListSettings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Every setting with its value and where the value came from.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await runCommand {
                let (setup, _) = try options.bootstrap()
                let rows = setup.settings.all.map { SettingRow($0) }
                if options.json { try printJSON(rows); return }
                printTable(SettingRow.table(rows))
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
                    try printJSON(SettingRow(entry, masked: false))
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
                let parsed = try SettingRow.value(value, for: key)
                guard let choice = MoveToLocalChoice(rawValue: cloudDocuments) else {
                    throw AppError(.usage, "unknown choice '\(cloudDocuments)' for --cloud-documents; expected keep-using-cloud, remove-cloud or keep-cloud")
                }
                let (setup, _) = try options.bootstrap()
                try setup.setSetting(key, to: parsed)
                // Opened again so the new value is in force.
                let moved = key == .useCloud ? try await options.withLibrary { await $0.applyUseCloudNow(choice) } : []
                if options.json {
                    try printJSON(["key": key.rawValue, "value": parsed.description, "moved": moved.map { "\($0.name): \($0.movedTo?.rawValue ?? $0.problem ?? "")" }.joined(separator: "; ")])
                } else {
                    print("\(key.rawValue) = \(parsed)")
                    moved.flatMap(\.lines).forEach { print($0) }
                }
            }
        }
    }
}
