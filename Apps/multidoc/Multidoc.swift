import AppSupport
import ArgumentParser
import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync

@main
struct Multidoc: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multidoc",
        abstract: "Keep many documents in step across devices through a folder you control.",
        discussion: """
        A device is a folder (its root); devices ship write-once transaction logs through a shared \
        container folder and import each other's. Every command that reads state first imports \
        what is waiting in the container; every command that changes state exports before it returns.

        Every command takes the device options (--root, --container, the settings such as \
        --fast-save), --json and --verbose, before or after the command: \
        'multidoc --root ~/devA list' is 'multidoc list --root ~/devA'. See 'multidoc help <command>'.

        \(ExitStatus.help(ExitStatus.allCases.filter { $0 != .alreadyRunning }))
        """,
        version: MultidocVersion.line("multidoc"),
        subcommands: [
            Init.self, Demo.self, New.self, List.self, Show.self, Edit.self, History.self, Revert.self, Remove.self, Trash.self, Restore.self,
            Rename.self, Convert.self,
            MoveToCloud.self, MoveToLocal.self, SyncCommand.self, SettingsCommand.self, Latencies.self,
            Inspect.self, ContainerCommand.self, DeviceCommand.self, Status.self,
        ]
    )

    /// Global options may come before the verb; a parser error is one line in the documented
    /// form (`multidoc: error: …`, exit 64) with a suggestion for a mistyped verb or option.
    static func main() async {
        let arguments = CommandLineShape.globalOptionsLast(
            Array(CommandLine.arguments.dropFirst()), valueOptions: GlobalOptions.valueOptionNames, flags: GlobalOptions.flagNames)
        let command: any ParsableCommand
        do {
            command = try parseAsRoot(arguments)
        } catch {
            guard exitCode(for: error) != .success else { exit(withError: error) }
            let path = commandPath(arguments)
            let deepest = path.last ?? Multidoc.self
            let verbs = deepest.configuration.subcommands.map { $0._commandName }
            let options = CommandLineShape.longOptions(inHelp: helpMessage(for: deepest))
            var line = CommandLineShape.parserError(message(for: error), verbs: verbs, options: options)
            // A mistyped verb among options (`multidoc lsit --root X`): the verb is the mistake
            // to name, not the options the top level does not take.
            if path.isEmpty, let word = CommandLineShape.firstWord(arguments, valueOptions: GlobalOptions.valueOptionNames),
               !verbs.contains(word), word != "help" {
                line = "unknown command '\(word)'" + Suggestions.phrase(Suggestions.closest(to: word, among: verbs), quoted: true)
            }
            let help = (["multidoc"] + path.map { $0._commandName }).joined(separator: " ") + " --help"
            CommandLineShape.exitWithParserError(line, program: "multidoc", help: help)
        }
        do {
            try await runParsed(command)
        } catch {
            exit(withError: error)
        }
    }

    private static func runParsed(_ command: some ParsableCommand) async throws {
        if var asynchronous = command as? any AsyncParsableCommand {
            try await asynchronous.run()
        } else {
            var synchronous = command
            try synchronous.run()
        }
    }

    /// The subcommands named at the start of `arguments`, outermost first.
    static func commandPath(_ arguments: [String]) -> [any ParsableCommand.Type] {
        var path: [any ParsableCommand.Type] = []
        var current: any ParsableCommand.Type = Multidoc.self
        for word in arguments {
            guard let next = current.configuration.subcommands.first(where: { $0._commandName == word || $0.configuration.aliases.contains(word) }) else { break }
            path.append(next)
            current = next
        }
        return path
    }
}
