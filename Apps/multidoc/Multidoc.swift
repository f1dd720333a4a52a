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

        Exit codes: 0 ok, 1 other failure, 3 unknown document, 4 ambiguous name, 5 invalid name, \
        6 unusable device root, 7 container unavailable, 8 container of an unknown format, \
        9 store failed, 10 write failed, 11 wrong location for a move, 12 busy, 13 bad setting, \
        64 bad usage.
        """,
        subcommands: [
            Init.self, Demo.self, New.self, List.self, Show.self, Edit.self, Remove.self, Rename.self, Convert.self,
            MoveToCloud.self, MoveToLocal.self, SyncCommand.self, SettingsCommand.self, Latencies.self,
            Inspect.self, ContainerCommand.self, Status.self,
        ]
    )
}
