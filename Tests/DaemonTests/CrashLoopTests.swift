#if canImport(Glibc)
import Glibc
#endif
import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
@testable import Sync
import Testing
import TestSupport

/// SIGKILL at random moments, many times: the CLI in the middle of edits and creates, the
/// daemon in the middle of imports, exports, baselines and pruning while peers write, and a
/// full pass writing a baseline. After every kill the device opens, its stores are consistent,
/// the container verifies, and no log is applied twice or lost; after the last, everything
/// confirmed is on every device exactly once. Seeds are printed (`MULTIDOC_CRASH_SEED` replays
/// one); each run prints its kills and rounds (Docs/RELIABILITY.md says what is promised).
@Suite(.serialized, .offThePool) struct CrashLoopTests {
    let folder: TemporaryDirectory
    var container: URL { folder.appending("container") }

    init() throws {
        folder = try TemporaryDirectory("crash")
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
    }

    func root(_ name: String) -> URL { folder.appending(name) }

    static func seed(_ test: String) -> UInt64 {
        let seed = ProcessInfo.processInfo.environment["MULTIDOC_CRASH_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        print("CrashLoopTests.\(test) seed \(seed) (MULTIDOC_CRASH_SEED=\(seed) replays its kill timings)")
        return seed
    }

    // MARK: Processes

    /// Starts `multidoc` with `arguments`; stderr goes to `stderr`.
    func spawn(_ product: String, _ arguments: [String], stderr: URL) throws -> Process {
        guard let executable = ProductRunner.path(of: product) else { throw DaemonTestError("\(product) is not built next to the tests") }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("MULTIDOC_") { environment[key] = nil }
        process.environment = environment
        _ = FileManager.default.createFile(atPath: stderr.path, contents: nil)
        let handle = try FileHandle(forWritingTo: stderr)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()
        return process
    }

    enum Outcome: Equatable { case exited(Int32), killed }

    /// Lets `process` run for `delay`, then SIGKILLs it if it still runs; how it ended.
    func killAfter(_ process: Process, _ delay: Duration) async -> Outcome {
        let deadline = ContinuousClock.now + delay
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(2))
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        if process.terminationReason == .uncaughtSignal {
            return process.terminationStatus == SIGKILL ? .killed : .exited(128 + process.terminationStatus)
        }
        return .exited(process.terminationStatus)
    }

    func cli(_ arguments: [String], root name: String, extra: [String] = []) throws -> ProductRunner.Result {
        try ProductRunner.run("multidoc", arguments + ["--root", root(name).path, "--container", container.path, "--device-name", name] + extra, timeout: 60)
    }

    // MARK: State, read in-process

    func deviceID(_ name: String) throws -> DeviceID {
        try DeviceRoot(url: root(name)).loadDevice(defaultName: name, model: "test", newID: UUID.init).id
    }

    /// The contents of device `name`'s store of the document called `document`; nil if it has none.
    func contents(_ name: String, _ document: String) throws -> (record: LocalDocumentRecord, contents: StoreContents)? {
        let deviceRoot = DeviceRoot(url: root(name))
        guard let record = deviceRoot.records().first(where: { $0.name.rawValue == document }) else { return nil }
        let store = try StoreProvider.standard().open(record.store, at: deviceRoot.storeURL(record), create: false)
        defer { store.close() }
        return (record, try store.read())
    }

    /// Every record of the device opens and reads (a killed `new` may leave a folder without a
    /// record, never a record without a store).
    func everyStoreOpens(_ name: String) throws -> Int {
        let deviceRoot = DeviceRoot(url: root(name))
        var count = 0
        for record in deviceRoot.records() {
            let store = try StoreProvider.standard().open(record.store, at: deviceRoot.storeURL(record), create: false)
            _ = try store.read()
            store.close()
            count += 1
        }
        return count
    }

    static func occurrences(_ marker: String, in text: String) -> Int { text.components(separatedBy: marker).count - 1 }

    /// The container verifies, and `device`'s logs of `document` plus what waits in its outbox
    /// are exactly 1…applied, nothing missing and nothing ahead of the store.
    func checkShipping(_ document: DocumentID, device: DeviceID, contents: StoreContents, context: String) {
        if FileManager.default.fileExists(atPath: container.path) {
            let verification = Container(root: container).verify()
            #expect(verification.problems.isEmpty, "\(context): container verify: \(verification.problems)")
        }
        let applied = contents.sync.applied[device] ?? 0
        let shipped = Container(root: container).logSequences(document, device: device)
        #expect((shipped.last ?? 0) <= applied, "\(context): the container holds log \(shipped.last ?? 0) the store never committed (applied \(applied))")
        let present = Set(shipped).union(contents.sync.outbox.keys)
        let pruned = shipped.first.map { $0 - 1 } ?? (contents.sync.outbox.keys.min().map { $0 - 1 } ?? applied)
        let missing = (pruned + 1 > applied ? [] : Array((pruned + 1)...applied)).filter { !present.contains($0) }
        #expect(missing.isEmpty, "\(context): logs \(missing) are neither shipped nor in the outbox")
    }

    // MARK: 1. The CLI in the middle of edits and creates

    /// How the CLI loop runs: the store kind, whether the container is away during the kills
    /// (saves are then synced and wait in the outbox; with it there, a save's commit is not synced
    /// and its log is its durable step), and how many rounds.
    struct CLILoop: Sendable, CustomTestStringConvertible {
        var store: String
        var containerAway: Bool
        var rounds: Int
        var testDescription: String { "\(store), container \(containerAway ? "away" : "there"), \(rounds) rounds" }
    }

    @Test(arguments: [
        CLILoop(store: "sqlite", containerAway: false, rounds: 200), CLILoop(store: "json", containerAway: false, rounds: 70),
        CLILoop(store: "sqlite", containerAway: true, rounds: 70), CLILoop(store: "json", containerAway: true, rounds: 70),
    ])
    func theCLIKilledInTheMiddleOfEditsAndCreates(loop: CLILoop) async throws {
        defer { folder.remove() }
        var random = SeededGenerator(seed: Self.seed("cli"))
        try FileManager.default.createDirectory(at: root("B"), withIntermediateDirectories: true)
        let errors = folder.appending("cli.stderr")
        let storeFlags = ["--store", loop.store]
        #expect(try cli(["init", "--no-input"], root: "A", extra: storeFlags).status == 0)
        #expect(try cli(["new", "Doc"], root: "A", extra: storeFlags).status == 0)
        let away = folder.appending("container.away")
        if loop.containerAway { try FileManager.default.moveItem(at: container, to: away) }
        let a = try deviceID("A")
        let start = try #require(try contents("A", "Doc"))
        let offset = start.contents.sync.applied[a] ?? 0
        let doc = start.record.id

        // How long an edit takes here (the median of three: one can be slowed by the machine),
        // so kills land anywhere in it.
        var samples: [Duration] = []
        var calibrations: [String] = []
        for index in 0..<3 {
            let calibration = ContinuousClock.now
            #expect(try cli(["edit", "Doc", "--append", " <calibrate\(index)>"], root: "A", extra: storeFlags).status == 0)
            samples.append(ContinuousClock.now - calibration)
            calibrations.append("<calibrate\(index)>")
        }
        // Kept up to date from the edits that complete: the machine's load changes during the
        // loop (other suites run alongside), and kills must keep landing inside a command.
        var editTime = samples.sorted()[1]
        var confirmed: [String] = calibrations, attempted: [String] = calibrations
        var confirmedDocuments: [String] = []
        var kills = (edit: 0, new: 0), completed = 0
        let rounds = loop.rounds
        for round in 0..<rounds {
            let creating = round % 9 == 4
            let marker = "<e\(round)>"
            let arguments = creating
                ? ["new", "N\(round)"]
                : ["edit", "Doc", "--append", " \(marker)"]
            let started = ContinuousClock.now
            let process = try spawn("multidoc", arguments + ["--root", root("A").path, "--container", container.path, "--device-name", "A"] + storeFlags, stderr: errors)
            // From mid-start-up (nothing happens before the dynamic loader is done) to past the end.
            let delay = Duration.microseconds(Int64.random(in: Int64(editTime.microseconds * 3 / 10)...Int64(editTime.microseconds * 13 / 10), using: &random))
            switch await killAfter(process, delay) {
            case .killed:
                if creating { kills.new += 1 } else { kills.edit += 1 }
            case .exited(0):
                completed += 1
                if creating {
                    confirmedDocuments.append("N\(round)")
                } else {
                    confirmed.append(marker)
                    samples.append(ContinuousClock.now - started)
                    editTime = samples.suffix(9).sorted()[samples.suffix(9).count / 2]
                }
            case .exited(let code):
                Issue.record("round \(round): multidoc \(arguments.joined(separator: " ")) exited \(code): \((try? String(contentsOf: errors, encoding: .utf8)) ?? "")")
            }
            if !creating { attempted.append(marker) }

            // After every kill: the device opens, the store is consistent, nothing twice or lost.
            let context = "round \(round) (seed above)"
            #expect(try everyStoreOpens("A") >= 1 + confirmedDocuments.count, "\(context)")
            let now = try #require(try contents("A", "Doc"))
            let text = now.contents.graph.textEntry?.text ?? ""
            for marker in confirmed { #expect(Self.occurrences(marker, in: text) == 1, "\(context): \(marker) not exactly once in \(text)") }
            let present = attempted.filter { Self.occurrences($0, in: text) > 0 }
            #expect(present.allSatisfy { Self.occurrences($0, in: text) == 1 }, "\(context): a marker twice: \(text)")
            // The device's own words stay in the order it typed them, kills or not.
            let order = present.compactMap { text.range(of: $0)?.lowerBound }
            #expect(order == order.sorted(), "\(context): this device's edits out of order: \(text)")
            #expect(UInt64(present.count) == (now.contents.sync.applied[a] ?? 0) - offset,
                    "\(context): \(present.count) edits in the text but \((now.contents.sync.applied[a] ?? 0) - offset) logs committed")
            checkShipping(doc, device: a, contents: now.contents, context: context)
        }

        // The device runs again (the container back): a pass ships what the kills left in
        // outboxes; B gets all of it.
        if loop.containerAway { try FileManager.default.moveItem(at: away, to: container) }
        #expect(try cli(["sync"], root: "A").status == 0)
        #expect(try cli(["list"], root: "A").status == 0)
        let verify = try cli(["container", "verify"], root: "A")
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let b = try cli(["show", "Doc", "--json"], root: "B")
        #expect(b.status == 0, "\(b.stderr)")
        let textA = try #require(try contents("A", "Doc")).contents.graph.textEntry?.text ?? ""
        let onB = try #require(try contents("B", "Doc"))
        let textB = onB.contents.graph.textEntry?.text ?? ""
        #expect(textA == textB)
        #expect(onB.contents.sync.applied[a] == (try contents("A", "Doc"))?.contents.sync.applied[a])
        for marker in confirmed { #expect(Self.occurrences(marker, in: textB) == 1, "\(marker) on B") }
        let orderOnB = attempted.compactMap { textB.range(of: $0)?.lowerBound }
        #expect(orderOnB == orderOnB.sorted(), "A's edits out of order on B: \(textB)")
        let names = Set(DeviceRoot(url: root("B")).records().map(\.name.rawValue))
        for name in confirmedDocuments { #expect(names.contains(name), "\(name) was created (exit 0) but B does not have it") }
        let lost = confirmed.filter { Self.occurrences($0, in: textB) != 1 }.count + confirmedDocuments.filter { !names.contains($0) }.count
        let committedThoughKilled = attempted.filter { Self.occurrences($0, in: textB) == 1 }.count - confirmed.count
        print("CrashLoopTests.cli (\(loop.testDescription)): \(kills.edit) edits and \(kills.new) creates killed (\(committedThoughKilled) killed edits had committed and arrived once), \(completed) completed, \(confirmed.count) confirmed edits, lost \(lost); an edit takes \(editTime)")
        #expect(kills.edit + kills.new >= rounds * 3 / 10, "too few kills landed (\(kills)); the calibration is off")
    }

    // MARK: 2. The daemon in the middle of imports and exports

    /// An in-process device of the test: a library over real stores on its own root.
    func library(_ name: String, fastSave: Bool) throws -> DocumentLibrary {
        let setup = try DeviceSetup(
            rootPath: root(name).path, containerPath: container.path,
            flags: [.deviceName: .text(name), .fastSave: .bool(fastSave)], environment: [:], createRoot: true)
        var logger = Logger(label: "crash.\(name)")
        logger.logLevel = .critical
        return setup.makeLibrary(stores: .standard(), logger: logger)
    }

    @Test func theDaemonKilledInTheMiddleOfImportsExportsAndBaselines() async throws {
        defer { folder.remove() }
        var random = SeededGenerator(seed: Self.seed("daemon"))
        // B: a peer saving all the time (FastSave on). A': another process of device A saving
        // with FastSave off, so only A's daemon ships its logs.
        let peer = try library("B", fastSave: true)
        let local = try library("A", fastSave: false)
        let fromB = try await peer.create(name: try DocumentName("FromB")).id
        let fromA = try await local.create(name: try DocumentName("FromA")).id
        await local.flushAll()
        let a = try deviceID("A"), b = try deviceID("B")
        _ = await peer.sync()

        let baseB = try await peer.detail(fromB).text
        let baseA = try await local.detail(fromA).text
        let offsetB = try #require(try contents("B", "FromB")).contents.sync.applied[b] ?? 0
        let offsetA = try #require(try contents("A", "FromA")).contents.sync.applied[a] ?? 0
        // The read just above opened a second connection to FromA beside `local`'s: before the
        // Storage fix, its header check closed a descriptor of the file and dropped `local`'s
        // POSIX locks, and the daemons' checkpoints then corrupted FromA ("database disk image
        // is malformed", 3 runs out of 3). From here on A's stores are read through `local`.
        func viaLocal(_ name: String) async throws -> (record: LocalDocumentRecord, contents: StoreContents)? {
            guard let record = DeviceRoot(url: root("A")).records().first(where: { $0.name.rawValue == name }) else { return nil }
            return (record, try await local.withDocument(record.id) { try $0.store.read() })
        }

        let writers = Writers()
        let writing = Task {
            var n = 0
            while !writers.stopped {
                n += 1
                try await peer.appendText(fromB, " <b\(n)>")
                try await local.appendText(fromA, " <a\(n)>")
                writers.wrote(n)
                try await Task.sleep(for: .milliseconds(6))
            }
        }

        var kills = 0, baselinesSeen = Set<String>()
        let rounds = 80
        for round in 0..<rounds {
            let daemon = try DaemonProcess(
                ["--root", root("A").path, "--container", container.path, "--device-name", "A", "--rescan-interval", "0.3", "--log-level", "error"],
                log: folder.appending("daemon-\(round % 2).log"))
            let delay = Duration.milliseconds(Int64.random(in: 60...520, using: &random))
            try? await Task.sleep(for: delay)
            daemon.send(SIGKILL)
            let code = await daemon.waitForExit(timeout: .seconds(10))
            if code == 128 + SIGKILL {
                kills += 1
            } else {
                Issue.record("round \(round): multidocd ended with \(String(describing: code)) before the kill: \(await daemon.settledLog())")
            }
            if round % 6 == 5 { _ = await peer.sync() }  // B imports A's logs and registers: A may prune

            let context = "round \(round) (seed above)"
            if let onA = try await viaLocal("FromB"), let appliedB = onA.contents.sync.applied[b] {
                let count = appliedB >= offsetB ? appliedB - offsetB : 0
                #expect(onA.contents.graph.textEntry?.text == baseB + (0..<count).map { " <b\($0 + 1)>" }.joined(),
                        "\(context): A applied \(count) of B's logs but its text says otherwise")
            }
            let mine = try #require(try await viaLocal("FromA"))
            checkShipping(fromA, device: a, contents: mine.contents, context: context)
            for entry in Container(root: container).baselines(fromB) { baselinesSeen.insert(entry.url.lastPathComponent) }
        }
        writers.stop()
        try await writing.value
        let written = writers.count

        // A runs again, undisturbed, until it has everything; then B syncs.
        let daemon = try DaemonProcess(
            ["--root", root("A").path, "--container", container.path, "--device-name", "A", "--rescan-interval", "0.2", "--log-level", "notice"],
            log: folder.appending("daemon-final.log"))
        var caughtUp = false
        let deadline = ContinuousClock.now + .seconds(60)
        while !caughtUp, ContinuousClock.now < deadline {
            if let onA = try await viaLocal("FromB"), let mine = try await viaLocal("FromA") {
                caughtUp = onA.contents.sync.applied[b] == offsetB + UInt64(written) && mine.contents.sync.outbox.isEmpty
            }
            if !caughtUp { try await Task.sleep(for: .milliseconds(50)) }
        }
        daemon.send(SIGTERM)
        #expect(await daemon.waitForExit(timeout: .seconds(30)) == 0, "\(daemon.log)")
        #expect(caughtUp, "A did not catch up after the kills; its daemon said: \(daemon.log.suffix(3000))")
        _ = await peer.sync()
        await peer.closeAll()
        await local.closeAll()

        let expectedB = baseB + (1...max(1, written)).prefix(written).map { " <b\($0)>" }.joined()
        let expectedA = baseA + (1...max(1, written)).prefix(written).map { " <a\($0)>" }.joined()
        let fromBOnA = try #require(try contents("A", "FromB")).contents
        let fromAOnB = try #require(try contents("B", "FromA")).contents
        #expect(fromBOnA.graph.textEntry?.text == expectedB)
        #expect(fromAOnB.graph.textEntry?.text == expectedA)
        #expect(fromAOnB.sync.applied[a] == offsetA + UInt64(written))
        #expect(Container(root: container).verify().problems.isEmpty)
        let lost = (fromBOnA.graph.textEntry?.text == expectedB ? 0 : 1) + (fromAOnB.graph.textEntry?.text == expectedA ? 0 : 1)
        print("CrashLoopTests.daemon: \(kills) daemon kills while B wrote \(written) logs and A' \(written) (shipped by the daemon); baselines of FromB seen: \(baselinesSeen.count); documents differing at the end: \(lost)")
        #expect(kills >= 75)
    }

    // MARK: 3. A full pass writing a baseline

    @Test func aPassKilledWhileWritingABaseline() async throws {
        defer { folder.remove() }
        var random = SeededGenerator(seed: Self.seed("baseline"))
        for name in ["A", "C"] { try FileManager.default.createDirectory(at: root(name), withIntermediateDirectories: true) }
        // B's logs are made here, straight in the container format (cheap), 105 at a time: past
        // the 100-log threshold, so A's next full pass imports them and writes a baseline.
        let b = DeviceIdentity(id: DeviceID(UUID()), name: "B", model: "test")
        let doc = DocumentID(UUID())
        let shared = Container(root: container)
        try shared.writeJSON(DocumentInfo(document: doc, name: try DocumentName("Big"), createdBy: b.id, createdByName: "B", createdAt: Date(), store: .sqlite),
                             to: shared.infoURL(doc, device: b.id))
        var written = 0
        var text = "B"
        func ship(_ change: LoggedChange) throws {
            let sequence = UInt64(written + 1)
            let log = TransactionLog(document: doc, device: b.id, sequence: sequence, stamp: Stamp(wall: 1_700_000_000_000 + sequence, counter: 0, device: b.id),
                                     committedAt: Date(), deviceName: "B", changes: [change])
            // Shipped like flush does (dot-named file, rename) minus the fsyncs: B's durability
            // is not under test.
            let logs = shared.logsDirectory(doc, device: b.id)
            try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
            let temporary = logs.appendingPathComponent(".tmp-\(sequence)")
            try log.encoded().write(to: temporary)
            let url = shared.logURL(doc, device: b.id, sequence: sequence)
            guard rename(temporary.path, url.path) == 0 else { throw DaemonTestError("rename \(url.path): errno \(errno)") }
        }
        try ship(LoggedChange(op: .insert, id: ObjectID("text"), entity: Entity.textEntry, attributes: [Entity.TextEntry.text: .string(text)]))
        func burst() throws {
            for _ in 0..<105 {
                written += 1
                text += " \(written)"
                try ship(LoggedChange(op: .update, id: ObjectID("text"), entity: Entity.textEntry, attributes: [Entity.TextEntry.text: .string(text)]))
            }
        }
        try burst()
        let calibration = ContinuousClock.now
        #expect(try cli(["sync"], root: "A").status == 0)
        var passTime = ContinuousClock.now - calibration
        let a = try deviceID("A")
        #expect(Container(root: container).baselines(doc).contains { $0.baseline.writtenBy == a }, "the calibration pass wrote no baseline")

        var kills = 0, completed = 0, baselinesWritten = 0
        let errors = folder.appending("sync.stderr")
        let rounds = 48
        var pruned: UInt64 = 0
        for round in 0..<rounds {
            // B prunes as its own compaction would: what A has applied (its registry entry)
            // and a baseline covers. The container stays small, and C must start from a baseline.
            let registered = shared.deviceRecords().first { $0.device == a }?.applied[doc]?[b.id] ?? 0
            let covered = shared.baselines(doc).first?.baseline.applied[b.id] ?? 0
            while pruned < min(registered, covered) {
                pruned += 1
                try? FileManager.default.removeItem(at: shared.logURL(doc, device: b.id, sequence: pruned))
            }
            try burst()
            let before = Set(Container(root: container).baselines(doc).map(\.url.lastPathComponent))
            let process = try spawn("multidoc", ["sync", "--root", root("A").path, "--container", container.path, "--device-name", "A"], stderr: errors)
            // Biased to the end of the pass, where the baseline is written.
            let delay = Duration.microseconds(Int64.random(in: Int64(passTime.microseconds * 3 / 10)...Int64(passTime.microseconds * 10 / 10), using: &random))
            let started = ContinuousClock.now
            switch await killAfter(process, delay) {
            case .killed:
                kills += 1
                passTime = passTime * 1.2  // passes grow with the container: aim later next time
            case .exited(0):
                completed += 1
                passTime = ContinuousClock.now - started
            case .exited(let code): Issue.record("round \(round): sync exited \(code): \((try? String(contentsOf: errors, encoding: .utf8)) ?? "")")
            }
            let after = Container(root: container).baselines(doc)
            if !Set(after.map(\.url.lastPathComponent)).subtracting(before).isEmpty { baselinesWritten += 1 }

            let context = "round \(round) (seed above)"
            // Every baseline file decodes (a full verify, which reads every log, every 10th round).
            let files = (try? FileManager.default.contentsOfDirectory(atPath: Container(root: container).baselinesDirectory(doc).path)) ?? []
            #expect(files.filter { ContainerFiles.isIgnored($0) == false }.count == after.count, "\(context): a baseline file does not decode: \(files)")
            if round % 10 == 9 {
                let problems = Container(root: container).verify().problems
                #expect(problems.isEmpty, "\(context): \(problems)")
            }
            for entry in after {
                let covered = entry.baseline.applied[b.id] ?? 0
                let text = entry.baseline.objects[ObjectID("text")]?.attributes[Entity.TextEntry.text]
                #expect(text == .string("B" + (0..<max(0, Int(covered) - 1)).map { " \($0 + 1)" }.joined()), "\(context): baseline \(entry.url.lastPathComponent) does not match what it covers")
            }
            if let onA = try contents("A", "Big") {
                let applied = Int(onA.contents.sync.applied[b.id] ?? 0)
                #expect(onA.contents.graph.textEntry?.text == "B" + (0..<max(0, applied - 1)).map { " \($0 + 1)" }.joined(), "\(context): A's store disagrees with the \(applied) logs it applied")
            }
        }
        // A runs again; a fresh device C builds the document from the baselines and logs.
        #expect(try cli(["sync"], root: "A").status == 0)
        let c = try cli(["show", "Big", "--json"], root: "C")
        #expect(c.status == 0, "\(c.stderr)")
        let expected = "B" + (1...written).map { " \($0)" }.joined()
        #expect(try contents("A", "Big")?.contents.graph.textEntry?.text == expected)
        #expect(try contents("C", "Big")?.contents.graph.textEntry?.text == expected)
        let lost = (try contents("C", "Big")?.contents.graph.textEntry?.text == expected) ? 0 : 1
        print("CrashLoopTests.baseline: \(kills) full passes killed (\(completed) completed, \(baselinesWritten) rounds wrote a baseline), \(written + 1) logs, \(pruned) pruned; a pass takes \(passTime); lost \(lost)")
        #expect(kills >= 18, "too few kills landed; the calibration is off")
    }
}

/// The writers' shared state in the daemon test.
private final class Writers: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    private var n = 0
    var stopped: Bool { lock.withLock { done } }
    var count: Int { lock.withLock { n } }
    func stop() { lock.withLock { done = true } }
    func wrote(_ count: Int) { lock.withLock { n = count } }
}


extension Duration {
    var microseconds: Int64 { components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000 }
}
