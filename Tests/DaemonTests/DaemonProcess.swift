#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation

/// A `multidocd` started as users start it, its stdout and stderr in a log file.
final class DaemonProcess: @unchecked Sendable {
    let process = Process()
    let logURL: URL
    let arguments: [String]

    /// The built `multidocd`, found by walking up from the test bundle to the products folder.
    static func executable() throws -> URL {
        var starts: [URL] = [Bundle.main.bundleURL]
        if let argument = CommandLine.arguments.first { starts.append(URL(fileURLWithPath: argument)) }
        starts += Bundle.allBundles.map(\.bundleURL)
        for start in starts {
            var url = start.standardizedFileURL
            for _ in 0..<8 {
                let candidate = url.appendingPathComponent("multidocd")
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                url = url.deletingLastPathComponent()
            }
        }
        throw DaemonTestError(
            "multidocd is not built next to the tests (looked above \(starts.map(\.path))); "
                + "run `swift build --product multidocd` with the same --scratch-path first")
    }

    init(_ arguments: [String], log: URL) throws {
        self.arguments = arguments
        logURL = log
        process.executableURL = try Self.executable()
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

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    var pid: Int32 { process.processIdentifier }

    /// Everything it wrote so far.
    var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// The log once it has stopped growing for two seconds (at most `timeout`): a crashed
    /// daemon's backtrace is written by a helper process after the crash, line by line, and a
    /// failure should show it whole.
    func settledLog(timeout: Duration = .seconds(120)) async -> String {
        let deadline = ContinuousClock.now + timeout
        var last = log, stillSince = ContinuousClock.now
        while ContinuousClock.now < deadline, ContinuousClock.now - stillSince < .seconds(2) {
            try? await Task.sleep(for: .milliseconds(200))
            let now = log
            if now != last { last = now; stillSince = ContinuousClock.now }
        }
        return last
    }

    /// Waits for the exit; its status, or nil if it still runs after `timeout` (then it is killed).
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
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }
}

struct DaemonTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The daemon's status file as JSON, or nil if absent or unreadable.
func readStatus(_ url: URL) -> [String: Any]? {
    // Read as `multidoc status` reads it: the daemon rewrites it in place of its spare.
    guard let data = try? AtomicFile.readRewritten(url) else { return nil }
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
}
