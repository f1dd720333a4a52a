import AppSupport
import ArgumentParser

@main
struct Multidoc: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multidoc",
        abstract: "Keep many documents in step across devices through a folder you control.",
        discussion: """
        A device is a folder (its root); devices ship write-once transaction logs through a shared \
        container folder and import each other's. Every command that reads state first imports \
        what is waiting in the container; every command that changes state exports before it returns.

        Every command but 'demo' (which makes devices of its own) takes the device options \
        (--root, --container, the settings such as --fast-save), --json and --verbose, before or \
        after the command: \
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

    /// Global options may come before the verb (AppSupport's ``CommandLineShape``).
    static func main() async {
        await CommandLineShape.runRoot(
            Multidoc.self, valueOptions: GlobalOptions.valueOptionNames, flags: GlobalOptions.flagNames, nonNegative: nonNegativeOptions)
    }

    /// The options whose values are saves, positions, lengths or counts: a negative one is named
    /// as such (ArgumentParser would take `-1` for an option and say the value is missing).
    static let nonNegativeOptions: CommandLineShape.NonNegativeOptions = ["--at": [0], "--to": [0], "--insert": [0], "--delete": [0, 1], "--ping-rounds": [0]]
}
