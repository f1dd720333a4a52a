#if canImport(Glibc)
import Glibc
#endif
import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import Synchronization

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The programs the benchmark drives, found next to itself (one `swift build -c release`).
struct Programs {
    let bench: URL
    let multidoc: URL
    let multidocd: URL

    init() throws {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: CommandLine.arguments[0])
        bench = me
        let folder = me.deletingLastPathComponent()
        multidoc = folder.appendingPathComponent("multidoc")
        multidocd = folder.appendingPathComponent("multidocd")
        for program in [multidoc, multidocd] where !FileManager.default.isExecutableFile(atPath: program.path) {
            throw BenchError("\(program.path) is missing: build everything first with `swift build -c release`")
        }
    }
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data("· \(text)\n".utf8))
}

func elapsedSeconds(since start: ContinuousClock.Instant) -> Double {
    let duration = ContinuousClock.now - start
    return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// Device roots and a container under one folder, as the apps see them.
struct Workspace {
    let folder: URL
    var container: URL { folder.appendingPathComponent("container") }

    init(_ folder: URL) throws {
        self.folder = folder
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
    }

    func root(_ device: String) -> URL { folder.appendingPathComponent("device-\(device)") }

    /// A library for `device`, built as the CLI builds it (as the daemon does, with
    /// `keepsSpareStores`).
    func library(_ device: String, store: String, flags: [SettingKey: SettingValue] = [:], keepsSpareStores: Bool = false) throws -> (DeviceSetup, DocumentLibrary) {
        var all: [SettingKey: SettingValue] = [.deviceName: .text(device), .store: .text(store), .useCloud: .bool(true)]
        all.merge(flags) { _, new in new }
        let setup = try DeviceSetup(rootPath: root(device).path, containerPath: container.path, flags: all, environment: [:], createRoot: true)
        var logger = Logger(label: "multidoc.bench.\(device)")
        logger.logLevel = .error
        return (setup, setup.makeLibrary(stores: .standard(), logger: logger, keepsSpareStores: keepsSpareStores))
    }
}

/// A started program whose output goes to a log file.
final class Child {
    let process = Process()
    let log: URL

    init(_ executable: URL, _ arguments: [String], log: URL) throws {
        self.log = log
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("MULTIDOC_") { environment[key] = nil }
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    /// Waits for the exit (killing it after `timeout`); its status, or nil on timeout.
    func wait(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                kill(process.processIdentifier, SIGKILL)
                return nil
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Peak resident memory so far (VmHWM), in bytes.
    var peakResidentBytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return nil }
        return kilobytes * 1024
    }
}

enum Scenarios {
    /// Two daemons inspecting one document ping each other for `rounds` rounds.
    /// `secure`: the container is signed and encrypted first (A its root, B unlocked and admitted).
    static func daemonPing(
        _ programs: Programs, folder: URL, store: String, fastSave: Bool, rounds: Int, secure: Bool = false
    ) async throws -> [LatencySample] {
        let space = try Workspace(folder)
        let (_, a) = try space.library("A", store: store)
        _ = try await a.create(name: try DocumentName("Ping"))
        await a.sync()
        let (_, b) = try space.library("B", store: store)
        await b.sync()
        if secure {
            _ = try await a.secureContainer(passphrase: "benchmark", force: true)
            _ = try await b.unlockContainer(passphrase: "benchmark")
            let fingerprint = try await b.deviceList().thisFingerprint ?? ""
            _ = try await a.admit(fingerprints: [fingerprint])
            await b.sync()
        }
        await a.closeAll()
        await b.closeAll()
        func daemon(_ device: String, _ extra: [String]) throws -> Child {
            try Child(programs.multidocd, [
                "--root", space.root(device).path, "--container", space.container.path, "--device-name", device,
                "--store", store, "--fast-save", fastSave ? "on" : "off", "--enable-ping", "on", "--inspect", "Ping",
                "--ping-rounds", String(rounds), "--exit-when-pings-done", "--log-level", "warning",
            ] + extra, log: folder.appendingPathComponent("multidocd-\(device).log"))
        }
        let daemonB = try daemon("B", [])
        let daemonA = try daemon("A", ["--start-ping"])
        let limit = Duration.seconds(30 + rounds)
        let codeA = await daemonA.wait(timeout: limit)
        let codeB = await daemonB.wait(timeout: limit)
        guard codeA == 0, codeB == 0 else {
            throw BenchError("the pinging daemons did not finish (A: \(codeA.map(String.init) ?? "timeout"), B: \(codeB.map(String.init) ?? "timeout")); logs in \(folder.path)")
        }
        return LatencyLog(url: DeviceRoot(url: space.root("A")).latenciesURL).read()
            + LatencyLog(url: DeviceRoot(url: space.root("B")).latenciesURL).read()
    }

    /// `new` on A (in process) until B, kept in step by the live sync loop the CLI and benchmark
    /// share, reports the document viewable. One sample per document.
    static func newToViewable(folder: URL, store: String, documents: Int) async throws -> [Double] {
        let space = try Workspace(folder)
        // Both devices keep a spare store, as their daemons do (LiveSync makes B's when it starts).
        let (_, a) = try space.library("A", store: store, keepsSpareStores: true)
        let (setupB, b) = try space.library("B", store: store, keepsSpareStores: true)
        await a.sync()
        await b.sync()
        await a.prepareSpareStores()
        // Waited for, not polled: a poll every 200 µs took a share of the two cores A and B work on.
        enum Arrival: Sendable {
            case viewable(DocumentID, ContinuousClock.Instant)
            case timeout
        }
        let (arrivals, arrival) = AsyncStream.makeStream(of: Arrival.self)
        let events = await b.events()
        let listener = Task {
            for await event in events {
                if case .becameViewable(let id) = event { arrival.yield(.viewable(id, ContinuousClock.now)) }
            }
        }
        var waiting = arrivals.makeAsyncIterator()
        let stop = Mutex(false)
        let loop = Task {
            _ = setupB
            try? await LiveSync(library: b, configuration: .init(rescanInterval: .seconds(5))) { _ in
                stop.withLock { $0 } ? .stop : .goOn
            }.run()
        }
        defer { listener.cancel() }
        // Let the watcher settle before the first document.
        try await Task.sleep(for: .milliseconds(200))
        var samples: [Double] = []
        for index in 0..<documents {
            let start = ContinuousClock.now
            let created = try await a.create(name: try DocumentName("New\(index)"))
            let timeout = Task {
                try await Task.sleep(until: start + .seconds(10))
                arrival.yield(.timeout)
            }
            var seen: ContinuousClock.Instant?
            waiting: while let next = await waiting.next() {
                switch next {
                case .viewable(let id, let at) where id == created.id:
                    seen = at
                    break waiting
                case .viewable: continue
                case .timeout: break waiting
                }
            }
            timeout.cancel()
            guard let seen else { throw BenchError("B never reported New\(index) viewable") }
            let duration = seen - start
            samples.append(Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
            // A device that creates a document now and then has its spare store back by the next.
            await a.waitForSpareStores()
            await b.waitForSpareStores()
        }
        stop.withLock { $0 = true }
        _ = try await a.create(name: try DocumentName("Stop"))  // wakes the loop so it sees `stop`
        _ = await loop.value
        await a.closeAll()
        await b.closeAll()
        return samples
    }

    struct Throughput {
        var seconds: Double
        var logs: Int
    }

    /// A fresh device imports a backlog of `changes` inserts (100 per log) in one pass.
    static func backlog(folder: URL, store: String, changes: Int) async throws -> Throughput {
        let space = try Workspace(folder)
        progress("  writing \(changes) changes in \((changes + 99) / 100) logs …")
        let filler = ContainerFiller(container: space.container, deviceName: "A")
        let id = try filler.addDocument(named: "Backlog", rows: changes)
        let (_, b) = try space.library("B", store: store)
        progress("  importing into a fresh device …")
        let start = ContinuousClock.now
        let report = await b.sync()
        let seconds = elapsedSeconds(since: start)
        let rows = try await b.withDocument(id) { document in try document.read().graph.objects.values.filter { $0.entity == "Row" }.count }
        await b.closeAll()
        guard rows == changes else { throw BenchError("the fresh device holds \(rows) of \(changes) rows after its pass") }
        return Throughput(seconds: seconds, logs: report.importedLogs)
    }

    /// A fresh device joins a container holding one document of `changes` rows behind a
    /// baseline plus `logs` later saves: seconds until it is viewable and holds every row.
    static func bigJoin(folder: URL, store: String, changes: Int, logs: Int) async throws -> Double {
        let space = try Workspace(folder)
        progress("  writing a document of \(changes) rows behind a baseline, and \(logs) logs after it …")
        let filler = ContainerFiller(container: space.container, deviceName: "A")
        let (id, rows) = try filler.addBigDocument(named: "Big", changes: changes, logs: logs)
        let (_, j) = try space.library("J", store: store)
        progress("  a fresh device joins …")
        let start = ContinuousClock.now
        let report = await j.sync()
        let seconds = elapsedSeconds(since: start)
        guard report.problems.isEmpty else { throw BenchError("the joining pass reported \(report.problems)") }
        let summary = await j.list().first { $0.id == id }
        let held = try await j.withDocument(id) { document in try document.read().graph.objects.values.filter { $0.entity == "Row" }.count }
        await j.closeAll()
        guard summary?.viewable == true else { throw BenchError("the big document is not viewable after the joining pass") }
        guard held == rows else { throw BenchError("the fresh device holds \(held) of \(rows) rows after its pass") }
        return seconds
    }

    /// `multidoc list` on B: the first run (discovers and imports every document), the second
    /// (looks at every store and marks them quiet) and the steady state every later command sees.
    static func lists(_ scale: ScaleWorkspace) async throws -> (cold: Double, second: Double, steady: Double) {
        let (cold, second) = try await scale.prepareB()
        progress("  multidoc list on B, steady state …")
        let (steady, listed) = try scale.list(device: "B")
        guard listed.count >= scale.documents else { throw BenchError("multidoc list showed \(listed.count) of \(scale.documents) documents") }
        return (cold, second, steady)
    }

    /// The full pass a daemon's rescan runs on B, in milliseconds: a fresh process without the
    /// quiet index looks at every document; the next pass skips the quiet ones (the 5 s rescan).
    static func passes(_ scale: ScaleWorkspace) async throws -> (thoroughMs: Double, quietMs: Double) {
        _ = try await scale.prepareB()
        try? FileManager.default.removeItem(at: DeviceRoot(url: scale.root("B")).catalogURL)
        let (_, b) = try scale.space.library("B", store: scale.store)
        var start = ContinuousClock.now
        await b.sync()
        let thorough = (ContinuousClock.now - start).milliseconds
        start = ContinuousClock.now
        let report = await b.sync()
        let quiet = (ContinuousClock.now - start).milliseconds
        await b.closeAll()
        guard report.skippedQuiet >= scale.documents else {
            throw BenchError("the steady pass skipped \(report.skippedQuiet) of \(scale.documents) quiet documents")
        }
        return (thorough, quiet)
    }

    /// The daemon's peak resident memory while it discovers and imports the `documents`
    /// documents of `container` into the fresh device root `root`.
    static func daemonMemory(_ programs: Programs, container: URL, root: URL, device: String, log: URL, store: String, documents: Int) async throws -> (bytes: Int, seconds: Double) {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let start = ContinuousClock.now
        let daemon = try Child(programs.multidocd, [
            "--root", root.path, "--container", container.path, "--device-name", device, "--store", store,
            "--rescan-interval", "0.5", "--log-level", "warning",
        ], log: log)
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        // The first pass imports everything: about as long as a first `multidoc list`.
        let deadline = ContinuousClock.now + .seconds(max(300, documents / 15))
        var synced: Int?
        var seconds = 0.0
        while ContinuousClock.now < deadline, daemon.process.isRunning {
            if let now = DaemonStatusFile(root: root) {
                if synced == nil, now.documents >= documents {
                    synced = now.passes
                    seconds = elapsedSeconds(since: start)
                } else if let synced, now.passes > synced {
                    break  // one more full pass over everything
                }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let peak = daemon.peakResidentBytes
        kill(daemon.process.processIdentifier, SIGTERM)
        _ = await daemon.wait(timeout: .seconds(20))
        guard synced != nil, let peak else { throw BenchError("the daemon did not sync \(documents) documents; see \(daemon.log.path)") }
        return (peak, seconds)
    }
}
