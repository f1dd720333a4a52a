#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport

// The parts of DaysOfUseTests: processes run (and killed) as a user's would be, the devices and
// what the test knows they were told to do, and damage done to the container.

// MARK: - Processes

/// How a process of the day ended.
enum Ending: Equatable, CustomStringConvertible {
    case exited(Int32)
    /// SIGKILLed by the test.
    case killed
    /// Ended by a signal the test did not send (or SIGTERM when the test did not send it).
    case signalled(Int32)
    /// Still running at the deadline (then killed).
    case hung

    var description: String {
        switch self {
        case .exited(let code): "exit \(code)"
        case .killed: "killed by the test"
        case .signalled(let signal): "signal \(signal)"
        case .hung: "hung"
        }
    }
}

/// One finished `multidoc` run.
struct Run {
    var ending: Ending
    var stdout: String
    var stderr: String
    var duration: Duration

    var ok: Bool { ending == .exited(0) }

    func json() -> Any? { try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) }
}

/// The exit codes Docs/CLI.md documents (0 and the table).
let documentedExitCodes: Set<Int32> = [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 64]

/// Starts products with their output in files (no pipe to fill), the test's `MULTIDOC_*`
/// variables dropped.
struct Launcher {
    let scratch: URL

    func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("MULTIDOC_") || key == "EDITOR" || key == "VISUAL" { environment[key] = nil }
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// Runs `product`; with `killAfter`, SIGKILLs it if it still runs then.
    func run(_ product: String, _ arguments: [String], environment extra: [String: String] = [:],
             killAfter: Duration? = nil, timeout: Duration = .seconds(90)) async throws -> Run {
        guard let executable = ProductRunner.path(of: product) else {
            throw ProductRunner.RunnerError(message: "\(product) is not built next to the tests (run swift build first)")
        }
        let name = UUID().uuidString.prefix(8)
        let out = scratch.appendingPathComponent("out-\(name)"), err = scratch.appendingPathComponent("err-\(name)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment(extra)
        let outHandle = try FileHandle(forWritingTo: out), errHandle = try FileHandle(forWritingTo: err)
        process.standardOutput = outHandle
        process.standardError = errHandle
        process.standardInput = FileHandle.nullDevice
        let started = ContinuousClock.now
        try process.run()
        try outHandle.close()
        try errHandle.close()
        let killAt = killAfter.map { started + $0 }
        let deadline = started + timeout
        var sentKill = false, hung = false
        while process.isRunning {
            let now = ContinuousClock.now
            if let killAt, now >= killAt, !sentKill {
                kill(process.processIdentifier, SIGKILL)
                sentKill = true
            } else if now >= deadline, !sentKill {
                kill(process.processIdentifier, SIGKILL)
                sentKill = true
                hung = true
            }
            try? await Task.sleep(for: .milliseconds(sentKill ? 5 : 2))
        }
        process.waitUntilExit()
        let duration = ContinuousClock.now - started
        let ending: Ending
        if process.terminationReason == .uncaughtSignal {
            let signal = process.terminationStatus
            ending = hung ? .hung : (signal == SIGKILL && sentKill ? .killed : .signalled(signal))
        } else {
            ending = .exited(process.terminationStatus)
        }
        return Run(ending: ending,
                   stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
                   stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "",
                   duration: duration)
    }
}

/// A `multidocd` of a device, its output in a log file.
final class Daemon {
    let process = Process()
    let log: URL

    init(arguments: [String], environment: [String: String], log: URL) throws {
        guard let executable = ProductRunner.path(of: "multidocd") else {
            throw ProductRunner.RunnerError(message: "multidocd is not built next to the tests")
        }
        self.log = log
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()
    }

    deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }

    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Sends `signal` (none: only looks) and waits for the end; how it ended.
    func stop(_ signal: Int32?, timeout: Duration = .seconds(30)) async -> Ending {
        if let signal { kill(process.processIdentifier, signal) }
        let deadline = ContinuousClock.now + timeout
        var hung = false
        while process.isRunning {
            if ContinuousClock.now >= deadline {
                kill(process.processIdentifier, SIGKILL)
                hung = true
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        process.waitUntilExit()
        if hung { return .hung }
        if process.terminationReason == .uncaughtSignal {
            return process.terminationStatus == SIGKILL && signal == SIGKILL ? .killed : .signalled(process.terminationStatus)
        }
        return .exited(process.terminationStatus)
    }
}

// MARK: - What the test knows

/// One device: a root on the shared container, and what is done to it now.
final class DayDevice {
    let name: String
    let root: URL
    /// The container's path as this device's processes are given it: a symbolic link to the
    /// container, to another folder, or to nothing (unmounted).
    let mount: URL
    let store: String
    /// The device's UUID (lower case, as the container's names spell it).
    var id = ""
    /// Partitioned: the folder its mount shows instead of the container (missing: none).
    var partition: URL?
    /// Its clock this many seconds off.
    var clockOffset: Int?
    var daemon: Daemon?
    var daemonStarts = 0
    var markers = 0

    init(name: String, root: URL, mount: URL, store: String) {
        self.name = name
        self.root = root
        self.mount = mount
        self.store = store
    }

    var environment: [String: String] { clockOffset.map { ["MULTIDOC_CLOCK_OFFSET": String($0)] } ?? [:] }
}

/// A document the test made (or restored) and knows the UUID of.
final class DayDocument {
    let uuid: String
    /// Every name it was given by an acknowledged command (the current one is any of them,
    /// last writer wins).
    var names: [String]
    /// An `rm` was run on it (acknowledged or killed): it may be gone.
    var removeAttempted = false
    /// Devices whose `rm` of it was acknowledged (they hold it in their trash).
    var removedBy: [String] = []
    /// The damaged log, info or tombstone that may keep its contents (or its end) from peers.
    var damagedBefore: Int?
    var infoDamaged = false
    var tombstoneDamaged = false

    init(uuid: String, name: String) {
        self.uuid = uuid
        names = [name]
    }
}

/// A unique word an edit put in a text.
struct Marker {
    let text: String
    let device: String
    let document: String
    let step: Int
    /// Put at the end (`--append`): a device's appends keep the order it made them in.
    let appended: Bool
    /// The command exited 0.
    var acknowledged: Bool
}

// MARK: - Damage

/// Ways the test damages a container file, as a disk, a replication engine or a person might.
enum Damage: String, CaseIterable {
    case flipBits = "bits flipped"
    case cutShort = "cut short"
    case junkAppended = "junk appended"
    case wrongType = "a JSON field of the wrong type"

    /// Damages `url` in place; what was done, or nil if the file could not be read.
    static func apply(_ damage: Damage, to url: URL, using random: inout SeededGenerator) -> String? {
        guard var data = try? Data(contentsOf: url) else { return nil }
        var done = damage
        switch damage {
        case .wrongType:
            if var object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any], let key = object.keys.sorted().randomElement(using: &random) {
                // A string where something else was, a number where a string was.
                object[key] = object[key] is String ? 12_345 : "wrong type"
                guard let encoded = try? JSONSerialization.data(withJSONObject: object) else { return nil }
                data = encoded
                break
            }
            done = .flipBits
            fallthrough
        case .flipBits:
            guard !data.isEmpty else { data = Data([0xFF]); break }
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0..<data.count, using: &random)
                data[index] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &random)
            }
        case .cutShort:
            data = data.prefix(data.isEmpty ? 0 : Int.random(in: 0..<data.count, using: &random))
        case .junkAppended:
            data.append(contentsOf: (0..<Int.random(in: 1...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        }
        guard (try? data.write(to: url)) != nil else { return nil }
        return done.rawValue
    }
}

// MARK: - Small helpers

extension Duration {
    var milliseconds: Double { Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15 }
}

/// Files below `folder` (recursively), skipping dot names as the container's readers do.
func regularFiles(under folder: URL) -> [URL] {
    guard let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles]) else { return [] }
    var files: [URL] = []
    for case let url as URL in enumerator where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
        files.append(url)
    }
    return files.sorted { $0.path < $1.path }
}

/// How many times `needle` occurs in `text`.
func occurrences(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }
