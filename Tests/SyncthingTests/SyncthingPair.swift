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

/// Runs a program to completion with posix_spawn and waitpid: the pair script leaves two
/// background processes behind, and Foundation's `Process.waitUntilExit` was seen to hang on
/// such a script here.
enum Command {
    struct Result: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static func run(_ path: String, _ arguments: [String], timeout: TimeInterval) throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("command-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outPath = scratch.appendingPathComponent("out").path, errPath = scratch.appendingPathComponent("err").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environment = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environment.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environment)
        guard spawned == 0 else { throw PairError("cannot start \(path): \(String(cString: strerror(spawned)))") }

        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(timeout)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw PairError("\(path) \(arguments.joined(separator: " ")) did not finish in \(Int(timeout)) s")
            }
            usleep(20_000)
        }
        let exited = (status & 0x7f) == 0
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return Result(status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), stdout: read(outPath), stderr: read(errPath))
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
