#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport

/// Whether the Syncthing integration tests run: syncthing is installed, or CI says they must.
enum SyncthingAvailability {
    static var installed: Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/syncthing") }
    }

    static var required: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    static var shouldRun: Bool { installed || required }
}

/// Two Syncthing instances on loopback sharing one folder, started by `Tools/syncthing-pair`.
struct SyncthingPair {
    struct Side {
        let api: String
        let key: String
        let folder: URL
        let config: URL
    }

    let home: URL
    let folderID: String
    let a: Side
    let b: Side

    static var script: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/syncthing-pair")
    }

    /// Starts the pair in `home`; throws with the script's output if it fails.
    static func start(in home: URL) throws -> SyncthingPair {
        let result = try Command.run(script.path, ["start", home.path], timeout: 120)
        guard result.status == 0 else {
            throw PairError("Tools/syncthing-pair start failed (\(result.status)): \(result.stderr)\(result.stdout)")
        }
        let text = try String(contentsOf: home.appendingPathComponent("pair.env"), encoding: .utf8)
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { values[String(parts[0])] = String(parts[1]) }
        }
        func side(_ letter: String) throws -> Side {
            guard let api = values["SYNCTHING_\(letter)_API"], let key = values["SYNCTHING_\(letter)_KEY"],
                  let folder = values["SYNCTHING_\(letter)_FOLDER"], let config = values["SYNCTHING_\(letter)_CONFIG"] else {
                throw PairError("pair.env lacks side \(letter): \(text)")
            }
            return Side(api: api, key: key, folder: URL(fileURLWithPath: folder), config: URL(fileURLWithPath: config))
        }
        return SyncthingPair(home: home, folderID: values["SYNCTHING_FOLDER_ID"] ?? "multidoc", a: try side("A"), b: try side("B"))
    }

    /// Stops exactly the two instances `start` started.
    func stop() {
        _ = try? Command.run(Self.script.path, ["stop", home.path], timeout: 60)
    }
}

struct PairError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs a program to completion.
enum Command {
    struct Result: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static func run(_ path: String, _ arguments: [String], timeout: TimeInterval) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outData = Box(), errData = Box()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { outData.set(out.fileHandleForReading.readDataToEndOfFile()); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData.set(err.fileHandleForReading.readDataToEndOfFile()); group.leave() }
        if group.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            throw PairError("\(path) \(arguments.joined(separator: " ")) did not finish in \(Int(timeout)) s")
        }
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: outData.get(), as: UTF8.self),
                      stderr: String(decoding: errData.get(), as: UTF8.self))
    }

    final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        func set(_ value: Data) { lock.withLock { data = value } }
        func get() -> Data { lock.withLock { data } }
    }
}

/// A `multidocd` run as users run it, its output in a log file.
final class Daemon: @unchecked Sendable {
    let process = Process()
    let logURL: URL

    init(_ arguments: [String], environment extra: [String: String] = [:], log: URL) throws {
        guard let executable = ProductRunner.path(of: "multidocd") else {
            throw PairError("multidocd is not built next to the tests (run swift build first)")
        }
        logURL = log
        process.executableURL = executable
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("MULTIDOC_") { environment[key] = nil }
        environment.merge(extra) { _, new in new }
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    func terminate() { kill(process.processIdentifier, SIGTERM) }

    /// The exit status, or nil if it still runs after `timeout` (then it is killed).
    func waitForExit(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                kill(process.processIdentifier, SIGKILL)
                return nil
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        process.waitUntilExit()
        return process.terminationStatus
    }
}

/// Polls `condition` every 25 ms until it holds or `timeout` passes; true if it held.
func eventually(timeout: Duration, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(25))
    }
    return try await condition()
}
