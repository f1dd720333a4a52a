import AppSupport
import ArgumentParser
import Engine
import FileIO
import Foundation
import Model
import Settings
import Storage
import Sync

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "Import and export now; --watch keeps going and prints events as they happen.")
    @OptionGroup var options: GlobalOptions
    @Flag(help: "Keep syncing and print events until interrupted.") var watch = false

    struct Output: Encodable {
        var cloudAvailable: Bool
        var discovered: [String]
        var removed: [String]
        var importedLogs: Int
        var exportedLogs: Int
        var quarantined: [String]
        var problems: [String]
        /// Documents whose saves could not be shipped into the container (exit 10).
        var unshipped: [String]
        /// Values last-writer-wins decided between concurrent writes (texts merge instead).
        var conflicts: [ConflictReport]
    }

    func run() async throws {
        try await runCommand {
            let (setup, library) = try options.bootstrap()
            let watched: SyncReport? = try await library.closing { library in
                guard !watch else {
                    let events = await library.events()
                    let printer = Task {
                        for await event in events { print(describe(event)); fflush(nil) }
                    }
                    defer { printer.cancel() }
                    try await LiveSync(library: library).run()
                    return nil
                }
                return try await syncPass(library, json: options.json)
            }
            guard let report = watched else { return }
            let output = Output(cloudAvailable: report.cloudAvailable, discovered: report.discovered, removed: report.removed,
                                importedLogs: report.importedLogs, exportedLogs: report.exportedLogs,
                                quarantined: report.quarantined.map(\.description), problems: report.problems.map(\.description),
                                unshipped: report.unshipped, conflicts: report.conflicts)
            guard setup.container != nil else {
                throw EngineError.containerUnavailable(
                    "no container is configured: nothing to sync (--container DIR, MULTIDOC_CONTAINER, or: multidoc settings set Container DIR)")
            }
            // Nothing was synced: say why once (no success line first), and exit with its code
            // (7, or 8 for a newer format); --json still prints what the pass saw.
            if let error = report.containerError {
                if options.json { try printJSON(output) }
                // The way out of a container this device refused (its identity changed).
                let hint = report.problems.lazy.compactMap { if case .containerChanged = $0 { $0.wayOut } else { nil } }.first.map { "; \($0)" } ?? ""
                throw AppError(AppError(error).status, error.description + hint, cause: error)
            }
            if options.json {
                try printJSON(output)
            } else {
                print("imported \(report.importedLogs) logs, exported \(report.exportedLogs), discovered \(report.discovered.count), removed \(report.removed.count)")
                for conflict in report.conflicts { print("conflict: \(conflict)") }
                reportSync(report, json: false)
            }
            // Saves that stayed on this device are not synced, whatever else the pass did.
            let unshipped = report.unshipped
            if !unshipped.isEmpty {
                let which = unshipped.count == 1 ? "\(unshipped[0])'s saves were" : "saves of \(unshipped.count) documents were"
                throw AppError(.writeFailed, "\(which) not shipped into the container at \(setup.container?.path ?? "?") "
                    + "(the warnings above say why; `multidoc container verify` checks the container); they wait in the outbox for the next sync")
            }
        }
    }

    private func describe(_ event: LibraryEvent) -> String {
        let time = ISO8601DateFormatter().string(from: Date())
        switch event {
        case .documentAdded(let summary): return "\(time) added \(summary.name) (\(summary.origin.rawValue))"
        case .documentRemoved(_, let name): return "\(time) removed \(name)"
        case .objectsDidChange(let id, _): return "\(time) changed \(id)"
        case .didSave(let id, _): return "\(time) saved \(id)"
        case .didImport(let id, let summary, let from):
            return "\(time) imported into \(id) from \(from.joined(separator: ", ")): \(summary.inserted.count) inserted, \(summary.updated.count) updated, \(summary.deleted.count) deleted"
        case .becameViewable(let id): return "\(time) viewable \(id)"
        case .downloadProgress(let id, let percent): return "\(time) downloading \(id) \(percent)%"
        case .cloudAvailability(_, let detail): return "\(time) \(detail)"
        case .containerChanged(let detail): return "\(time) \(detail)"
        case .quarantined(let detail): return "\(time) quarantined \(detail)"
        case .recovered(_, let report): return "\(time) recovered: \(report)"
        case .failure(let detail): return "\(time) error: \(detail)"
        }
    }
}

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

struct Latencies: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Recorded sync latencies: count, min, p50, p90, p99, max; --csv and --plot.")
    @OptionGroup var options: GlobalOptions
    @Flag(help: "Print the raw samples as CSV.") var csv = false
    @Option(help: ArgumentHelp("Draw latencies over time and their distribution into an SVG file.", valueName: "file.svg")) var plot: String?

    struct Output: Encodable {
        var oneWay: LatencyStatistics?
        var roundTrip: LatencyStatistics?
    }

    func run() async throws {
        try await runCommand {
            let (setup, _) = try options.bootstrap()
            let samples = LatencyLog(url: setup.root.latenciesURL).read()
            if csv { print(LatencyReport.csv(samples), terminator: ""); return }
            if let plot {
                let url = URL(fileURLWithPath: plot)
                do {
                    try AtomicFile.write(Data(LatencyReport.svg(samples).utf8), to: url)
                } catch {
                    throw AppError(.writeFailed, "cannot write plot: \(error)")
                }
            }
            let oneWay = LatencyStatistics(milliseconds: samples.map(\.oneWayMs))
            let roundTrip = LatencyStatistics(milliseconds: samples.compactMap(\.roundTripMs))
            if options.json { try printJSON(Output(oneWay: oneWay, roundTrip: roundTrip)); return }
            guard oneWay != nil else { print("no latencies recorded yet (inspect a document with EnablePing on on two devices)"); return }
            var rows = [["", "COUNT", "MIN", "P50", "P90", "P99", "MAX"]]
            for (label, stats) in [("one-way", oneWay), ("round-trip", roundTrip)] {
                guard let stats else { continue }
                rows.append([label, "\(stats.count)", ms(stats.minMs), ms(stats.p50Ms), ms(stats.p90Ms), ms(stats.p99Ms), ms(stats.maxMs)])
            }
            printTable(rows)
            print("one-way \(LatencyReport.sparkline(samples.map(\.oneWayMs)))")
            if let plot { print("plot written to \(plot)") }
        }
    }
}

func ms(_ value: Double) -> String { String(format: "%.2f ms", value) }

struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Inspect a document and keep syncing; with EnablePing on, answer peers' changes with pings.")
    @OptionGroup var options: GlobalOptions
    @Argument(help: "A name, UUID or unique UUID prefix.") var document: String
    @Option(name: .customLong("ping-rounds"), help: "Stop after sending this many pings.") var pingRounds: Int?
    @Flag(name: .customLong("start-ping"), help: "Send the first ping now.") var startPing = false

    func run() async throws {
        try await runCommand {
            let counts = try await options.withLibrary { library in
                await library.sync()
                let record = try await library.resolve(document)
                await library.inspect(record.id, rounds: pingRounds)
                if startPing { try await library.startPing() }
                let rounds = pingRounds
                try await LiveSync(library: library) { _ in
                    guard rounds != nil else { return .goOn }
                    return await library.pingFinished ? .stop : .goOn
                }.run()
                return await library.pingCounts
            }
            print("pings sent: \(counts.sent), answered: \(counts.answered)")
        }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The device's daemon and container status.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runCommand {
            let (setup, library) = try options.bootstrap()
            // What is waiting in the container first, as every command that reads state does.
            let documents = try await library.closing { library in
                var report = try await syncPass(library, json: options.json, .refresh(nil))
                // Saves stuck behind a slot another copy of this root took: a command's pass does
                // not ship them, so it would not say so.
                for problem in await library.stuckSaves() where !report.problems.contains(problem) { report.problems.append(problem) }
                reportSync(report, json: options.json)
                return await library.documentCount()
            }
            // The status file of a killed daemon stays behind; the lock tells whether one runs.
            var daemonRunning = false
            if FileManager.default.fileExists(atPath: setup.root.daemonLockURL.path),
               let lock = try? FileLock(url: setup.root.daemonLockURL) {
                daemonRunning = (try? lock.tryLock(.shared)) == false
                lock.unlock()
            }
            let statusData = daemonRunning ? try? AtomicFile.readRewritten(setup.root.daemonStatusURL) : nil
            let daemon = statusData.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            let available = setup.container.map { Container(root: $0).isAvailable }
            if options.json {
                var object: [String: Any] = ["root": setup.root.url.path, "documents": documents, "device": setup.identity.name]
                object["container"] = setup.container?.path
                object["containerAvailable"] = available
                // `daemon`: `running`, and the daemon's status file when one runs (Docs/DAEMON.md).
                object["daemon"] = (daemon ?? [:]).merging(["running": daemon != nil]) { _, running in running }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            print("device:    \(setup.identity.name) (\(setup.identity.model)) \(setup.identity.id)")
            print("root:      \(setup.root.url.path)")
            print("container: \(setup.container?.path ?? "none") \(available.map { $0 ? "(available)" : "(unavailable)" } ?? "")")
            print("documents: \(documents)")
            guard let daemon else {
                print("daemon:    not running (start it with: multidocd\(options.root.map { " --root '\($0)'" } ?? "") &)")
                return
            }
            for line in Self.daemonLines(daemon, now: Date()) { print(line) }
        }
    }
}

extension Status {
    /// The daemon's status file in words, one fact a line.
    static func daemonLines(_ status: [String: Any], now: Date) -> [String] {
        let dates = ISO8601DateFormatter()
        func ago(_ key: String) -> String? {
            guard let text = status[key] as? String, let date = dates.date(from: text) else { return nil }
            let seconds = max(0, Int(now.timeIntervalSince(date)))
            let span = seconds < 60 ? "\(seconds) s" : seconds < 3600 ? "\(seconds / 60) min" : seconds < 86_400 ? "\(seconds / 3600) h" : "\(seconds / 86_400) d"
            return "\(span) ago"
        }
        var lines: [String] = []
        let pid = (status["pid"] as? Int).map { " (pid \($0))" } ?? ""
        lines.append("daemon:    running\(pid)\(ago("startedAt").map { ", started \($0)" } ?? "")")
        let passes = status["passes"] as? Int ?? 0
        lines.append("           \(passes) \(passes == 1 ? "pass" : "passes"), last \(ago("lastSyncAt") ?? "not yet"); last import \(ago("lastImportAt") ?? "none yet")")
        if status["containerAvailable"] as? Bool == false { lines.append("           the container is unavailable to it") }
        if let error = status["lastError"] as? String { lines.append("           last problem (\(ago("lastErrorAt") ?? "")): \(error)") }
        if let inspecting = status["inspecting"] as? String {
            lines.append("           inspecting \(inspecting): \(status["pingsSent"] as? Int ?? 0) pings sent, \(status["pingsAnswered"] as? Int ?? 0) answered")
        }
        return lines
    }
}

struct ContainerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "container", abstract: "Look at, copy, verify, repair or reset the shared container.",
        subcommands: [
            ContainerStatus.self, ContainerCopy.self, ContainerVerify.self, ContainerRepair.self, ContainerReset.self, ContainerAdopt.self,
            ContainerDump.self, ContainerUpgrade.self, ContainerUnlock.self, ContainerTrust.self,
        ],
        defaultSubcommand: ContainerStatus.self)

    static func container(_ setup: DeviceSetup) throws -> Container { try setup.containerView() }

    static func identity(of container: Container) throws(EngineError) -> ContainerIdentity? {
        do {
            return try container.identity()
        } catch {
            if case .unknownFormat = error.kind { throw .containerFormat(error.description) }
            throw .containerUnavailable(error.description)
        }
    }

    struct ContainerStatus: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Identity, devices, documents and tombstones in the container.")
        @OptionGroup var options: GlobalOptions

        struct Output: Encodable {
            var path: String
            var containerID: String?
            var format: Int?
            var devices: [String]
            var documents: Int
            var tombstones: Int
            var logs: Int
            var trust: TrustState?
            /// Files of the identity folder passed over (damaged): named with the way out.
            var passedOver: [String]
        }

        func run() async throws {
            try await runCommand {
                let (setup, _) = try options.bootstrap()
                let container = try ContainerCommand.container(setup)
                let summary: ContainerSummary
                do throws(SyncError) {
                    summary = try container.summary()
                } catch {
                    if case .unknownFormat = error.kind { throw EngineError.containerFormat(error.description) }
                    throw EngineError.containerUnavailable(error.description)
                }
                let output = Output(
                    path: container.root.path, containerID: summary.identity?.containerID.uuidString.lowercased(), format: summary.identity?.format,
                    devices: summary.devices.map { "\($0.name) (\($0.device))" }, documents: summary.documents,
                    tombstones: summary.tombstones, logs: summary.logs, trust: summary.trust, passedOver: summary.passedOver.map(\.description))
                if options.json { try printJSON(output); return }
                print("container:  \(output.path)")
                print("identity:   \(output.containerID ?? "not seeded") format \(output.format.map(String.init) ?? "-")")
                print("devices:    \(output.devices.joined(separator: ", "))")
                print("documents:  \(output.documents) (\(output.logs) logs), tombstones: \(output.tombstones)")
                if let trust = output.trust {
                    print("trust:      signed\(trust.encrypted ? " and encrypted" : ""), root \(trust.root); \(trust.admitted) admitted, \(trust.askingToJoin) asking to join, \(trust.removed) removed ('multidoc device list')")
                } else {
                    print("trust:      not signed: anyone who can write into the folder is trusted ('multidoc container upgrade --sign')")
                }
                for file in output.passedOver { print("passed over: \(file)") }
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
                print("copied the container to \(url.path)")
                for file in skipped {
                    FileHandle.standardError.write(Data("multidoc: warning: \(file.description)\n".utf8))
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
                let container = try ContainerCommand.container(setup)
                var problems: [String] = []
                // This device's saves that cannot ship because another file took their slot: the
                // container is sound, this device is stuck, and the line says what gets it out.
                problems += try await library.closing { await $0.stuckSaves() }.map(\.description)
                do throws(SyncError) {
                    _ = try container.identity()
                } catch {
                    // A container this user cannot list is not one with problems in it: nothing was checked.
                    if error.kind == .containerUnavailable { throw EngineError.containerUnavailable(error.description) }
                    problems.append("\(error)")
                }
                // verify() names every file once, conflict copies included.
                let verification = container.verify()
                problems += verification.problems.map(\.description)
                let waiting = verification.waiting.map(\.description)
                if options.json {
                    struct Output: Encodable { var checkedFiles: Int; var checkedLogs: Int; var problems: [String]; var waiting: [String] }
                    try printJSON(Output(checkedFiles: verification.checkedFiles, checkedLogs: verification.checkedLogs, problems: problems, waiting: waiting))
                } else {
                    print("checked \(verification.checkedFiles) files (\(verification.checkedLogs) logs): \(problems.isEmpty ? "all valid" : "\(problems.count) problems")")
                    problems.forEach { print("  \($0)") }
                    if !waiting.isEmpty { print("\(waiting.count) not finished yet (not a problem):") }
                    waiting.forEach { print("  \($0)") }
                }
                if !problems.isEmpty { throw ExitCode(9) }
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
                let (setup, _) = try options.bootstrap()
                let container = try ContainerCommand.container(setup)
                let identity: ContainerIdentity
                do {
                    identity = try container.reset(device: setup.identity.id, now: Date())
                } catch {
                    throw EngineError.containerUnavailable("\(error)")
                }
                // This device adopts it as every other device will: its cloud documents were in
                // the old container, so they become local documents (nothing is lost).
                let (_, library) = try options.bootstrap(onContainerChange: { _ in .adoptNew })
                let report = try await library.closing { await $0.sync() }
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
                the device to run it on. Exits 0 when nothing is left stalled, 1 when something is.
                """)
        @OptionGroup var options: GlobalOptions

        struct Row: Encodable {
            var name: String
            var repaired: Bool
            var gaps: [String]
            var detail: String
        }

        func run() async throws {
            try await runCommand {
                let outcomes = try await options.withLibrary { library in try await library.repairGaps() }
                if options.json {
                    try printJSON(outcomes.map { Row(name: $0.name, repaired: $0.repaired, gaps: $0.gaps.map(\.description), detail: $0.detail) })
                } else if outcomes.isEmpty {
                    print("nothing to repair: no document waits for a missing log")
                } else {
                    for outcome in outcomes {
                        let gaps = outcome.gaps.map { "\($0) (log \($0.nextPresent) is there)" }.joined(separator: ", ")
                        print("\(outcome.name): \(outcome.repaired ? "repaired" : "not repaired"): missing \(gaps); \(outcome.detail)")
                    }
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
                sequence) and their changes, text operations included. Needs no device root.
                """)
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
                if !result.upgraded, !result.already {
                    let names = result.devicesNotReady.joined(separator: ", ")
                    throw AppError(.containerFormat, "not moved: \(names) \(result.devicesNotReady.count == 1 ? "is" : "are") not known to read format 2; update \(result.devicesNotReady.count == 1 ? "it" : "them") and run `multidoc sync` there, or add --force")
                }
                guard !options.json else { return }
                if result.already {
                    print("the container is already of format \(result.format)")
                } else {
                    print("moved the container to format \(result.format): text edits made on several devices at once now merge")
                    if !result.devicesNotReady.isEmpty {
                        print("these devices must be updated before they sync again: \(result.devicesNotReady.joined(separator: ", "))")
                    }
                }
            }
        }

        private func secure() async throws {
            let passphrase = encrypt
                ? try Passphrase.read(file: passphraseFile, environment: ProcessInfo.processInfo.environment, confirm: true) : nil
            let (_, library) = try options.bootstrap()
            let result = try await library.closing { try await $0.secureContainer(passphrase: passphrase, force: force) }
            if options.json { try printJSON(result) }
            if !result.signed {
                let names = result.devicesNotReady.joined(separator: ", ")
                throw AppError(.containerFormat, "not moved: \(names) \(result.devicesNotReady.count == 1 ? "runs a build" : "run builds") that cannot sign; update \(result.devicesNotReady.count == 1 ? "it" : "them") and run `multidoc sync` there, or add --force")
            }
            guard !options.json else { return }
            print("the container is signed\(result.encrypted ? " and encrypted" : ""); its root is this device, fingerprint \(result.root)")
            if !result.waitingForAdmission.isEmpty {
                print("asking to join (compare each fingerprint on that device, then 'multidoc device admit FINGERPRINT'):")
                for device in result.waitingForAdmission { print("  \(device)") }
            }
            if result.encrypted { print("other devices run 'multidoc container unlock' with the passphrase") }
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
                _ = try ContainerCommand.container(setup)
                let report = try await library.closing { try await syncPass($0, json: options.json) }
                // Nothing adopted (a container this device has seen signed, emptied of its
                // identity, is not seeded over): the command fails with why.
                if let error = report.containerError { throw error }
                if options.json {
                    try printJSON(["cloudAvailable": "\(report.cloudAvailable)", "problems": report.problems.map(\.description).joined(separator: "\n")])
                    return
                }
                print("syncing with the container at \(setup.container?.path ?? "?")")
                for problem in report.problems { print("  \(problem)") }
            }
        }
    }
}

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "This device's identity, and who may write into a signed container.",
        subcommands: [DeviceList.self, DeviceAdmit.self, DeviceRemove.self, NewIdentity.self])

    struct NewIdentity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "new-identity",
            abstract: "Make this root a new device (for a root that was copied or restored from a backup).",
            discussion: """
                Two copies of one root save under one device UUID: the same log numbers with \
                different contents, and the copy's saves wait behind slots the other took ("a \
                different log with this sequence is already in the container"). Run this on the \
                copy: its waiting saves are saved again as a new device's and ship with the next \
                sync; what it shipped before stays, and the old UUID stays the other copy's. Stop \
                multidocd on this root first. Run it again if it was cut short.
                """)
        @OptionGroup var options: GlobalOptions
        @Flag(help: "Do it (without this flag, only say what would happen).") var yes = false

        struct Output: Encodable {
            var old: String
            var new: String
            var resaved: [String]
            var saves: Int
        }

        func run() async throws {
            try await runCommand {
                let setup = try options.device.setup(environment: ProcessInfo.processInfo.environment, finishingIdentityChange: true)
                guard yes else {
                    print("this device is \(setup.identity.id); 'multidoc device new-identity --yes' makes it a new device and saves its waiting saves again as that device's")
                    return
                }
                let report = try setup.takeNewIdentity(stores: .standard(options: setup.storeOptions))
                if options.json {
                    try printJSON(Output(old: report.old.description, new: report.new.description, resaved: report.resaved, saves: report.saves))
                    return
                }
                print("this device is now \(report.new) (was \(report.old)); \(report.saves) waiting saves of \(report.resaved.count) documents saved again: run 'multidoc sync' to ship them")
            }
        }
    }
}
