import AppSupport
import ArgumentParser
import Engine
import Foundation
import Model
import Sync

struct ContainerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "container", abstract: "Look at, copy, verify, repair or reset the shared container.",
        subcommands: [
            ContainerStatus.self, ContainerCopy.self, ContainerVerify.self, ContainerRepair.self, ContainerReset.self, ContainerAdopt.self,
            ContainerDump.self, ContainerUpgrade.self, ContainerUnlock.self, ContainerTrust.self,
        ],
        defaultSubcommand: ContainerStatus.self)

    struct ContainerStatus: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Identity, devices, documents and tombstones in the container.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await runCommand {
                let (setup, _) = try options.bootstrap()
                let container = try setup.containerView()
                let output = try ContainerStatusRow(container)
                if options.json { try printJSON(output); return }
                output.lines.forEach { print($0) }
            }
        }
    }

    struct ContainerCopy: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "copy", abstract: "Copy the container into a folder (for a bug report).")
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The destination folder (must not exist).") var destination: String

        func run() async throws {
            try await runCommand {
                let (_, library) = try options.bootstrap()
                let url = URL(fileURLWithPath: destination)
                if FileManager.default.fileExists(atPath: url.path) {
                    throw AppError(.writeFailed, "\(url.path) already exists; choose a new folder")
                }
                let skipped = try await library.copyContainer(to: url)
                if options.json { return try printJSON(ContainerCopyRow(copiedTo: url, skipped: skipped.map(\.description))) }
                print("copied the container to \(url.path)")
                for file in skipped {
                    printError("multidoc: warning: \(file.description)")
                }
            }
        }
    }

    struct ContainerVerify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "verify", abstract: "Read every file in the container and report the ones that are not valid.")
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await runCommand {
                let (setup, library) = try options.bootstrap()
                let container = try setup.containerView()
                let check = try ContainerCheck(container, stuck: try await library.closing { await $0.stuckSaves() })
                if options.json { try printJSON(check) } else { check.lines.forEach { print($0) } }
                if !check.problems.isEmpty { throw ExitCode(9) }
            }
        }
    }

    struct ContainerReset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "reset", abstract: "Empty the container and seed a new identity; every device notices and asks what to do.")
        @OptionGroup var options: GlobalOptions
        @Flag(help: "Really do it.") var yes = false

        func run() async throws {
            try await runCommand {
                guard yes else { throw AppError(.usage, "resetting removes every document from the container; add --yes to do it") }
                let identity = try options.bootstrap().0.resetContainer()
                // This device adopts it as every other device will: its cloud documents were in
                // the old container, so they become local documents (nothing is lost).
                let (_, library) = try options.bootstrap(onContainerChange: { _ in .adoptNew })
                let report = try await library.closing { await $0.sync() }
                if options.json { return try printJSON(ContainerResetRow(containerID: identity.containerID, report)) }
                print("container reset; new identity \(identity.containerID.uuidString.lowercased())")
                for problem in report.problems { print("  \(problem)") }
            }
        }
    }

    struct ContainerRepair: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "repair",
            abstract: "Let devices go on past logs missing from the container.",
            discussion: """
                A log missing while later ones of its device are there stops every device that has \
                not applied it (sync, list and verify report it). When this device has what is \
                missing, repair writes a baseline of its copy that covers it; otherwise it names \
                the device to run it on. A container left without its identity file (none, or \
                only damaged ones) gets the identity this device remembers written again first. \
                Exits 0 when nothing is left stalled, 1 when something is.
                """)
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await runCommand {
                let setup = try options.device.setup(environment: ProcessInfo.processInfo.environment)
                if let restored = try setup.restoreContainerIdentity() {
                    printError("multidoc: the container had no identity left: wrote \(restored.uuidString.lowercased()), the one this device synced with, again")
                }
                let outcomes = try await options.withLibrary { library in try await library.repairGaps() }
                if options.json {
                    try printJSON(outcomes.map(RepairRow.init))
                } else if outcomes.isEmpty {
                    print("nothing to repair: no document waits for a missing log")
                } else {
                    outcomes.forEach { print($0.line) }
                }
                if outcomes.contains(where: { !$0.repaired }) { throw ExitCode.failure }
            }
        }
    }

    struct ContainerDump: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "dump", abstract: "Print any container file, of either format, as readable JSON.",
            discussion: """
                Format 2 logs are binary: this shows their header (container, document, writer, \
                sequence) and their changes, text operations included. Needs no device root: it \
                takes the device options as every command does, and reads only the file. The \
                output is JSON with or without --json.
                """)
        @OptionGroup var options: GlobalOptions
        @Argument(help: "A file in the container (a log, baseline, info, tombstone, registry or identity file).") var path: String

        func run() async throws {
            try await runCommand {
                let url = URL(fileURLWithPath: path)
                do throws(SyncError) {
                    let data = try Container.dump(fileAt: url)
                    FileHandle.standardOutput.write(data + Data("\n".utf8))
                } catch {
                    throw AppError(.storeFailed, "\(url.path): \(error.detail)", cause: error)
                }
            }
        }
    }

    struct ContainerUpgrade: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "upgrade", abstract: "Move the container to format 2 (text edits merge), to signed files, or to encrypted ones.",
            discussion: """
                Syncs first, then marks the container as format 2: from then on every device writes \
                binary logs whose text changes are operations, so edits made on two devices at once \
                are both kept. Devices running a build that reads only format 1 stop syncing with the \
                container (they say its format is too new) until they are updated, so the command \
                refuses while a registered device is not known to read format 2; --force moves it anyway. \
                Run it once every device is up to date (each has run `multidoc sync`).

                --sign moves it on to signed files (Docs/SECURITY.md): this device becomes the root of                 the container's admissions and signs everything it wrote; every other device then asks                 to join, and is admitted with 'multidoc device admit FINGERPRINT'. Until then its files                 are refused (not lost: accepted once it is admitted). --encrypt also seals every file's                 content with a key derived from a passphrase (--passphrase-file,                 \(Passphrase.environmentVariable), or the terminal); other devices run 'multidoc container                 unlock' with it.
                """)
        @OptionGroup var options: GlobalOptions
        @Flag(help: "Move the container even while some registered devices are not known to read the new format or to sign.") var force = false
        @Flag(help: "Sign the container's files; only admitted devices write.") var sign = false
        @Flag(help: "Encrypt the container's files with a passphrase (implies --sign).") var encrypt = false
        @Option(help: "With --encrypt: read the passphrase from the first line of this file.") var passphraseFile: String?

        func run() async throws {
            try await runCommand {
                if sign || encrypt { return try await secure() }
                let (_, library) = try options.bootstrap()
                let result = try await library.closing { try await $0.upgradeContainer(force: force) }
                if options.json { try printJSON(result) }
                if let refusal = result.refusal { throw refusal }
                if !options.json { result.lines.forEach { print($0) } }
            }
        }

        private func secure() async throws {
            let passphrase = encrypt
                ? try Passphrase.read(file: passphraseFile, environment: ProcessInfo.processInfo.environment, confirm: true) : nil
            let (_, library) = try options.bootstrap()
            let result = try await library.closing { try await $0.secureContainer(passphrase: passphrase, force: force) }
            if options.json { try printJSON(result) }
            if let refusal = result.refusal { throw refusal }
            if !options.json { result.lines.forEach { print($0) } }
        }
    }

    struct ContainerAdopt: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "adopt",
            abstract: "Sync with a container whose identity changed (it was reset, or another one was mounted).",
            discussion: """
                Cloud documents the container does not have become local documents; after a reset, \
                that is every cloud document of the old container. Nothing is deleted.
                """)
        @OptionGroup var options: GlobalOptions

        func run() async throws {
            try await runCommand {
                let (setup, library) = try options.bootstrap(onContainerChange: { _ in .adoptNew })
                _ = try setup.containerView()
                let report = try await library.closing { try await syncPass($0, json: options.json) }
                // Nothing adopted (a container this device has seen signed, emptied of its
                // identity, is not seeded over): the command fails with why.
                if let error = report.containerError { throw error }
                if options.json { return try printJSON(ContainerAdoptRow(report, container: setup.container)) }
                print("syncing with the container at \(setup.container?.path ?? "?")")
                for problem in report.problems { print("  \(problem)") }
            }
        }
    }
}

extension ContainerCommand {
    struct ContainerUnlock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unlock", abstract: "Give this device the key of an encrypted container (from its passphrase).",
            discussion: """
                The passphrase comes from --passphrase-file, the \(Passphrase.environmentVariable) \
                environment variable, or the terminal. The key derived from it is kept in the root's \
                container.key (0600); the passphrase is not kept. A wrong passphrase changes nothing \
                (exit 15).
                """)
        @OptionGroup var options: GlobalOptions
        @Option(help: "Read the passphrase from the first line of this file.") var passphraseFile: String?

        func run() async throws {
            try await runCommand {
                let passphrase = try Passphrase.read(file: passphraseFile, environment: ProcessInfo.processInfo.environment, confirm: false)
                let (_, library) = try options.bootstrap()
                let unlocked = try await library.closing { try await $0.unlockContainer(passphrase: passphrase) }
                if options.json { return try printJSON(["unlocked": unlocked]) }
                print(unlocked ? "unlocked: this device reads and writes the encrypted container" : "the container is not encrypted; nothing to unlock")
            }
        }
    }
}

extension ContainerCommand {
    struct ContainerTrust: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "trust", abstract: "Pin the root a signed container is trusted under, by its whole fingerprint.",
            discussion: """
                A device meeting a signed container for the first time trusts the one root it finds \
                and says so; when it finds signing records of two keys it trusts neither and waits \
                for this command. Read the fingerprint off `multidoc device list` on a device that \
                synced with the container before. `multidoc init --expect-root` does the same ahead \
                of the first contact.
                """)
        @OptionGroup var options: GlobalOptions
        @Argument(help: "The root's fingerprint, whole (16 hex digits).") var fingerprint: String
        @Flag(help: "Trust this root although another is trusted now (what was learned under it is forgotten).") var replace = false

        func run() async throws {
            try await runCommand {
                let (_, library) = try options.bootstrap()
                let pinned = try await library.closing { try await $0.trustRoot(fingerprint: fingerprint, replacing: replace) }
                if options.json { return try printJSON(["root": pinned]) }
                print("trusting root \(pinned): only devices it admits are read")
            }
        }
    }
}
