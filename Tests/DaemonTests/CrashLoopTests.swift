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
}

extension Duration {
    var microseconds: Int64 { components.seconds * 1_000_000 + components.attoseconds / 1_000_000_000_000 }
}
