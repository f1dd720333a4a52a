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

// 2. The daemon SIGKILLed in the middle of imports, exports and baselines while peers write.
extension CrashLoopTests {
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
