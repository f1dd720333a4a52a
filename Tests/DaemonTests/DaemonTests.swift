#if canImport(Glibc)
import Glibc
#endif
import Engine
import Foundation
import Model
import Settings
import Storage
import Testing
import TestSupport

/// `multidocd` run as separate processes on temporary device roots and one container.
@Suite(.serialized) struct DaemonTests {
    let folder: TemporaryDirectory
    var container: URL { folder.appending("container") }

    init() throws {
        folder = try TemporaryDirectory("daemon")
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
    }

    func root(_ name: String) -> URL { folder.appending(name) }

    /// Starts a daemon on device `name`, setting its root up first (`multidoc init`) as a user would.
    func start(_ name: String, _ extra: [String] = [], log: String? = nil) throws -> DaemonProcess {
        if !FileManager.default.fileExists(atPath: root(name).path) {
            let setUp = try ProductRunner.run(
                "multidoc", ["init", "--no-input", "--root", root(name).path, "--container", container.path, "--device-name", name])
            guard setUp.status == 0 else { throw DaemonTestError("multidoc init on \(name) failed: \(setUp.stderr)") }
        }
        return try DaemonProcess(
            ["--root", root(name).path, "--container", container.path, "--device-name", name, "--log-level", "debug"] + extra,
            log: folder.appending(log ?? "\(name).log"))
    }

    /// Waits until the daemon's status file says it runs and has finished a pass.
    func waitUntilRunning(_ daemon: DaemonProcess, root name: String) async throws {
        let url = DeviceRoot(url: root(name)).daemonStatusURL
        let running = await eventually(timeout: .seconds(20)) {
            guard let status = readStatus(url) else { return false }
            return status["running"] as? Bool == true && status["lastSyncAt"] != nil
                && (status["pid"] as? Int).map(Int32.init) == daemon.pid
        }
        guard running else {
            throw DaemonTestError("multidocd on \(name) did not report running within 20 s; log:\n\(daemon.log)")
        }
    }

    /// The root's remembered container is enough, the log goes where --log-file says (the
    /// terminal gets one line naming it), and `multidoc status` reads like the rest of the CLI.
    @Test func aDaemonOnAnInitializedRootLogsToItsFileAndStatusSaysSo() async throws {
        defer { folder.remove() }
        let setUp = try ProductRunner.run(
            "multidoc", ["init", "--no-input", "--root", root("L").path, "--container", container.path, "--device-name", "L"])
        #expect(setUp.status == 0, "\(setUp.stderr)")
        let logFile = root("L").appendingPathComponent("multidocd.log")
        let daemon = try DaemonProcess(["--root", root("L").path, "--log-file", logFile.path], log: folder.appending("L-terminal.log"))
        try await waitUntilRunning(daemon, root: "L")
        #expect(daemon.log == "multidocd: logging to \(logFile.path)\n", "\(daemon.log)")
        let status = try ProductRunner.run("multidoc", ["status", "--root", root("L").path])
        #expect(status.stdout.contains("daemon:    running (pid \(daemon.pid))"), "\(status.stdout)")
        #expect(status.stdout.contains("container: \(container.path) (available)"), "\(status.stdout)")
        daemon.send(SIGTERM)
        #expect(await daemon.waitForExit(timeout: .seconds(20)) == 0)
        let written = try String(contentsOf: logFile, encoding: .utf8)
        #expect(written.contains("starting") && written.contains("stopped"), "\(written)")
    }

    /// A log file that cannot be opened stops the daemon before it starts, saying which file
    /// and why: a daemon that ran on while every line of its log went nowhere would hide
    /// whatever went wrong later.
    @Test func aLogFileThatCannotBeOpenedStopsTheDaemonWithOneLine() async throws {
        defer { folder.remove() }
        let setUp = try ProductRunner.run(
            "multidoc", ["init", "--no-input", "--root", root("L").path, "--container", container.path, "--device-name", "L"])
        #expect(setUp.status == 0, "\(setUp.stderr)")
        for (index, (logFile, reason)) in [(folder.appending("missing/x.log").path, "does not exist"), (folder.url.path, "directory")].enumerated() {
            let daemon = try DaemonProcess(["--root", root("L").path, "--log-file", logFile], log: folder.appending("L-terminal-\(index).log"))
            let code = await daemon.waitForExit(timeout: .seconds(20))
            #expect(code != nil && code != 0)
            #expect(daemon.log.hasPrefix("multidocd: error: cannot open the log file \(logFile)"), "\(daemon.log)")
            #expect(daemon.log.contains(reason), "\(daemon.log)")
        }
        #expect(readStatus(DeviceRoot(url: root("L")).daemonStatusURL)?["running"] as? Bool != true)
    }

    @Test func oneDaemonPerRootAndSIGTERMStopsItCleanly() async throws {
        defer { folder.remove() }
        let first = try start("A")
        try await waitUntilRunning(first, root: "A")
        let status = try #require(readStatus(DeviceRoot(url: root("A")).daemonStatusURL))
        for key in ["pid", "startedAt", "running", "containerAvailable", "documents", "lastSyncAt", "pingsSent"] {
            #expect(status[key] != nil, "status lacks \(key)")
        }
        #expect(status["containerAvailable"] as? Bool == true)

        let second = try start("A", log: "A-second.log")
        let code = await second.waitForExit(timeout: .seconds(20))
        #expect(code == 2, "\(second.log)")
        #expect(second.log.contains("multidocd is already running for"), "\(second.log)")
        #expect(second.log.contains("(pid \(first.pid))"), "\(second.log)")
        #expect(second.log.split(separator: "\n").count == 1, "\(second.log)")
        #expect(first.process.isRunning)

        first.send(SIGTERM)
        let stopped = await first.waitForExit(timeout: .seconds(20))
        #expect(stopped == 0, "\(first.log)")
        let after = readStatus(DeviceRoot(url: root("A")).daemonStatusURL)
        #expect(after == nil || after?["running"] as? Bool == false)
        #expect(first.log.contains("stopped"), "\(first.log)")

        // The lock went with it: a new daemon starts.
        let third = try start("A", log: "A-third.log")
        try await waitUntilRunning(third, root: "A")
        third.send(SIGINT)
        #expect(await third.waitForExit(timeout: .seconds(20)) == 0, "\(third.log)")
    }

    @Test func aKilledDaemonDoesNotBlockTheNextOne() async throws {
        defer { folder.remove() }
        let killed = try start("A")
        try await waitUntilRunning(killed, root: "A")
        killed.send(SIGKILL)
        #expect(await killed.waitForExit(timeout: .seconds(10)) == 128 + SIGKILL)
        // Its status file stays behind, saying running; the lock does not.
        #expect(readStatus(DeviceRoot(url: root("A")).daemonStatusURL)?["running"] as? Bool == true)
        let next = try start("A", log: "A-next.log")
        try await waitUntilRunning(next, root: "A")
        next.send(SIGTERM)
        #expect(await next.waitForExit(timeout: .seconds(20)) == 0, "\(next.log)")
    }

    @Test func sighupReloadsTheSettingsFile() async throws {
        defer { folder.remove() }
        let daemon = try start("A")
        try await waitUntilRunning(daemon, root: "A")
        try Data(#"{"FastSave": false}"#.utf8).write(to: root("A").appendingPathComponent("settings.json"))
        daemon.send(SIGHUP)
        let reloaded = await eventually(timeout: .seconds(10)) { daemon.log.contains("settings reloaded") }
        #expect(reloaded, "\(daemon.log)")
        #expect(daemon.log.contains("FastSave=off(file)"), "\(daemon.log)")
        #expect(daemon.process.isRunning)
        daemon.send(SIGTERM)
        #expect(await daemon.waitForExit(timeout: .seconds(20)) == 0, "\(daemon.log)")
    }

    @Test(arguments: [
        (["--fast-save", "maybe"], Int32(13), "bad value 'maybe' for FastSave"),
        (["--ping-rounds", "0"], Int32(64), "--ping-rounds"),
        (["--rescan-interval", "soon"], Int32(64), "--rescan-interval"),
        (["--log-level", "loud"], Int32(64), "--log-level"),
        (["--start-ping"], Int32(64), "--start-ping needs --inspect"),
        (["--exit-when-pings-done", "--inspect", "x"], Int32(64), "needs --inspect DOC and --ping-rounds"),
    ])
    func badFlagsGetOneClearLineAndAnExitCode(arguments: [String], code: Int32, message: String) async throws {
        defer { folder.remove() }
        let daemon = try start("A", arguments)
        let status = await daemon.waitForExit(timeout: .seconds(20))
        #expect(status == code, "\(daemon.log)")
        #expect(daemon.log.contains(message), "\(daemon.log)")
        #expect(daemon.log.split(separator: "\n").count == 1, "\(daemon.log)")
    }

    @Test func anUnknownInspectedDocumentStopsTheDaemonWithCode3() async throws {
        defer { folder.remove() }
        let daemon = try start("A", ["--inspect", "Nowhere"])
        #expect(await daemon.waitForExit(timeout: .seconds(20)) == 3, "\(daemon.log)")
        #expect(daemon.log.contains("no document matches 'Nowhere'"), "\(daemon.log)")
    }

    // MARK: Ping

    func library(_ name: String, stores: StoreProvider, flags: [SettingKey: SettingValue] = [:]) throws -> DocumentLibrary {
        let setup = try DeviceSetup(
            rootPath: root(name).path, containerPath: container.path, flags: flags.merging([.deviceName: .text(name)]) { $1 },
            environment: [:], createRoot: true)
        return DocumentLibrary(.init(
            root: setup.root, container: setup.container, settings: setup.settings, identity: setup.identity, stores: stores))
    }

    /// A daemon that has imported something rests: its pass count stops growing while nothing
    /// changes (it used to climb ten a second, each pass's store files waking the next). The
    /// counter settling is waited for; the assertion is that it settles, and soon.
    @Test func anIdleDaemonStopsPassingOnceItHasImported() async throws {
        defer { folder.remove() }
        let stores = StoreProvider.standard()
        let a = try library("A", stores: stores)
        let created = try await a.create(name: try DocumentName("Quiet"))
        let daemon = try start("B")
        try await waitUntilRunning(daemon, root: "B")
        let statusB = DeviceRoot(url: root("B")).daemonStatusURL
        try await a.appendText(created.id, " edited on A")
        await a.closeAll()
        let imported = await eventually(timeout: .seconds(20)) {
            readStatus(statusB).map { $0["documents"] as? Int == 1 && $0["lastImportAt"] != nil } ?? false
        }
        #expect(imported, "\(daemon.log)")
        var last = -1
        var since = ContinuousClock.now
        let settled = await eventually(timeout: .seconds(20)) {
            let passes = readStatus(statusB)?["passes"] as? Int ?? -1
            if passes != last { (last, since) = (passes, .now) }
            return ContinuousClock.now - since > .seconds(2)
        }
        #expect(settled, "the pass count never settled (last \(last)); log:\n\(daemon.log)")
        #expect(last <= 6, "\(last) passes for one document and two imports")
        daemon.send(SIGTERM)
        #expect(await daemon.waitForExit(timeout: .seconds(20)) == 0)
    }

    @Test func aDaemonShipsAnotherProcesssSavesAndItsPeerImportsThem() async throws {
        defer { folder.remove() }
        // Another process of device A (this one) works with FastSave off: its logs wait in the
        // store's outbox until daemon A ships them. The document is made before the daemons
        // start, so this test is about shipping saves, not about a store's creation racing
        // the daemon's first look at it (the daemon's Documents settle covers that).
        let stores = StoreProvider.standard()
        let editor = try library("A", stores: stores, flags: [.fastSave: .bool(false)])
        let created = try await editor.create(name: try DocumentName("Notes"))
        await editor.closeAll()
        // No rescan for a minute: only inotify can get the save across in time.
        let a = try start("A", ["--rescan-interval", "60"])
        let b = try start("B", ["--rescan-interval", "60"])
        try await waitUntilRunning(a, root: "A")
        try await waitUntilRunning(b, root: "B")
        // Saved while both run: inotify on A's Documents wakes daemon A, which ships it.
        try await editor.setText(created.id, "written by another process of A")
        await editor.closeAll()

        // Daemon B imports it: read B's store from here (a third process of sorts) until it shows.
        var text = ""
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, text != "written by another process of A" {
            let reader = try library("B", stores: stores)
            text = (try? await reader.detail(created.id).text) ?? ""
            await reader.closeAll()
            if text != "written by another process of A" { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(text == "written by another process of A", "B:\n\(b.log)\nA:\n\(a.log)")
        // The status file follows at the end of the pass that imported it.
        let statusB = DeviceRoot(url: root("B")).daemonStatusURL
        let reported = await eventually(timeout: .seconds(10)) {
            readStatus(statusB).map { $0["documents"] as? Int == 1 && $0["lastImportAt"] != nil } ?? false
        }
        #expect(reported, "\(readStatus(statusB) ?? [:])")
        #expect(b.log.contains("document added"), "\(b.log)")
        #expect(b.log.contains("imported"), "\(b.log)")

        for daemon in [a, b] { daemon.send(SIGTERM) }
        #expect(await a.waitForExit(timeout: .seconds(20)) == 0, "\(a.log)")
        #expect(await b.waitForExit(timeout: .seconds(20)) == 0, "\(b.log)")
    }

    /// A save by another process of the device lands, and the daemon is told to stop before its
    /// pass (150 ms settle) or autosave could ship it: shutdown ships it, nothing is lost.
    @Test func sigtermWhileASaveWaitsToShipLosesNothing() async throws {
        defer { folder.remove() }
        let stores = StoreProvider.standard()
        let editor = try library("A", stores: stores, flags: [.fastSave: .bool(false)])
        let created = try await editor.create(name: try DocumentName("Notes"))
        await editor.closeAll()
        let a = try start("A", ["--fast-save", "off", "--rescan-interval", "60", "--autosave-interval", "60"])
        try await waitUntilRunning(a, root: "A")
        for index in 0..<5 {
            try await editor.appendText(created.id, " save\(index)")
        }
        await editor.closeAll()
        a.send(SIGTERM)
        #expect(await a.waitForExit(timeout: .seconds(20)) == 0, "\(a.log)")

        let peer = try library("B", stores: stores)
        await peer.sync()
        #expect(try await peer.detail(created.id).text.hasSuffix(" save0 save1 save2 save3 save4"), "A:\n\(a.log)")
        await peer.closeAll()
        let check = try library("A", stores: stores)
        let contents = try await check.withDocument(created.id) { try $0.read() }
        #expect(contents.sync.outbox.isEmpty, "every saved log was shipped before the daemon stopped")
        await check.closeAll()
    }

    /// SQLite with FastSave on; JSON with FastSave off (answers wait in the outbox until the
    /// daemon's pass, woken by its own save in Documents, or the 2 s autosave ships them).
    @Test(arguments: [("sqlite", "on"), ("json", "off")])
    func twoDaemonsPassTwentyPingsAroundAndRecordLatencies(store: String, fastSave: String) async throws {
        defer { folder.remove() }
        let stores = StoreProvider.standard()
        // A creates the document and B discovers it, in process, before the daemons start.
        let libraryA = try library("A", stores: stores, flags: [.store: .text(store)])
        let created = try await libraryA.create(name: try DocumentName("Ping"))
        await libraryA.sync()
        await libraryA.closeAll()
        let libraryB = try library("B", stores: stores, flags: [.store: .text(store)])
        await libraryB.sync()
        #expect(await libraryB.list().map(\.name) == ["Ping"])
        await libraryB.closeAll()

        let rounds = 20
        let ping = ["--store", store, "--fast-save", fastSave, "--enable-ping", "on", "--inspect", "Ping", "--ping-rounds", "\(rounds)", "--exit-when-pings-done", "--rescan-interval", "1"]
        let started = ContinuousClock.now
        let b = try start("B", ping)
        let a = try start("A", ping + ["--start-ping"])
        let codeA = await a.waitForExit(timeout: .seconds(60))
        let codeB = await b.waitForExit(timeout: .seconds(60) - (ContinuousClock.now - started))
        #expect(codeA == 0, "A:\n\(a.log)")
        #expect(codeB == 0, "B:\n\(b.log)")

        let samplesA = LatencyLog(url: DeviceRoot(url: root("A")).latenciesURL).read()
        let samplesB = LatencyLog(url: DeviceRoot(url: root("B")).latenciesURL).read()
        // A started, so it imported the answers it replied to (B's last may land after A stopped).
        #expect(samplesA.count >= rounds - 1, "A recorded \(samplesA.count) samples")
        #expect(samplesB.count >= rounds, "B recorded \(samplesB.count) samples")
        #expect(samplesA.allSatisfy { $0.fromName == "B" && $0.document == created.id })
        #expect(samplesB.allSatisfy { $0.fromName == "A" && $0.document == created.id })
        #expect(samplesA.contains { $0.roundTripMs != nil }, "A measured no round trip")
        let elapsed = ContinuousClock.now - started
        for (name, samples) in [("A", samplesA), ("B", samplesB)] {
            let oneWay = LatencyStatistics(milliseconds: samples.map(\.oneWayMs))
            let roundTrip = LatencyStatistics(milliseconds: samples.compactMap(\.roundTripMs))
            print("ping ring \(store) FastSave \(fastSave) \(name): \(samples.count) samples, one-way p50 \(oneWay?.p50Ms ?? 0) ms max \(oneWay?.maxMs ?? 0) ms, round trip p50 \(roundTrip?.p50Ms ?? 0) ms (\(roundTrip?.count ?? 0)); both daemons done in \(elapsed)")
        }

        // Every ping is in the document: twenty from each side.
        let check = try library("A", stores: stores)
        await check.sync()
        let text = try await check.detail(created.id).text
        #expect(await check.list().first?.store.rawValue == store)
        await check.closeAll()
        #expect(text.components(separatedBy: " A pings").count - 1 == rounds, "\(text)")
        #expect(text.components(separatedBy: " B pings").count - 1 == rounds, "\(text)")
    }
}
