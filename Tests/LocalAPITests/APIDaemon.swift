#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport

/// A `multidocd` with its local API on a free port, started as a user starts it, and curl to
/// talk to it (the tests speak HTTP as any other program would).
final class APIDaemon: @unchecked Sendable {
    let process = Process()
    let root: URL
    let log: URL
    private(set) var address = ""
    private(set) var token = ""

    /// Sets the root up with `multidoc init` (which writes its token), then starts the daemon.
    init(_ name: String, in folder: TemporaryDirectory, container: URL) throws {
        root = folder.appending(name)
        log = folder.appending("\(name).log")
        let setUp = try ProductRunner.run(
            "multidoc", ["init", "--no-input", "--root", root.path, "--container", container.path, "--device-name", name])
        guard setUp.status == 0 else { throw APITestError("multidoc init on \(name) failed: \(setUp.stderr)") }
        guard let executable = ProductRunner.path(of: "multidocd") else { throw APITestError("multidocd is not built next to the tests") }
        process.executableURL = executable
        process.arguments = ["--root", root.path, "--local-api", "0", "--log-level", "debug", "--log-file", "-"]
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

    deinit { stop() }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
    }

    var logText: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Waits for the daemon's "local API listening" line and reads its address and the token.
    func waitUntilListening() async throws {
        let found = await eventually(timeout: .seconds(30)) { self.logText.contains("local API listening") }
        guard found, let match = logText.firstMatch(of: /address=(http:\/\/127\.0\.0\.1:\d+)/) else {
            throw APITestError("the local API did not start; log:\n\(logText)")
        }
        address = String(match.1)
        token = try String(contentsOf: root.appendingPathComponent("api-token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// One request with curl: the status and the body.
    func request(
        _ method: String, _ path: String, json: String? = nil, token: String?? = .none, bodyFile: URL? = nil
    ) throws -> (status: Int, body: String) {
        var arguments = ["-s", "-X", method, "-w", "\n%{http_code}", address + path]
        if let token = token ?? self.token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        if let json { arguments += ["-H", "Content-Type: application/json", "--data-binary", json] }
        if let bodyFile { arguments += ["-H", "Content-Type: application/json", "--data-binary", "@" + bodyFile.path] }
        let result = try ProductRunner.run("/usr/bin/curl", arguments, timeout: 30)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        guard let last = lines.last, let status = Int(last) else { throw APITestError("curl said: \(result.stdout) \(result.stderr)") }
        return (status, lines.dropLast().joined(separator: "\n"))
    }

    /// The change feed, read by `curl -N` into a file as it arrives.
    func feed(into file: URL) throws -> Process {
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-sN", "-H", "Authorization: Bearer \(token)", address + "/api/events", "-o", file.path]
        curl.standardInput = FileHandle.nullDevice
        try curl.run()
        return curl
    }
}

struct APITestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
