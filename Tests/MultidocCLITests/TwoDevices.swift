import Foundation
import Testing
import TestSupport

/// A suite whose tests run the CLI as separate processes on two device roots (A and B) and one
/// container, all in one temporary folder.
protocol TwoDevices {
    var folder: TemporaryDirectory { get }
}

extension TwoDevices {
    var rootA: String { folder.appending("A").path }
    var rootB: String { folder.appending("B").path }
    var container: String { folder.appending("container").path }

    /// A temporary folder with the container and both roots made.
    static func makeFolder(_ name: String) throws -> TemporaryDirectory {
        let folder = try TemporaryDirectory(name)
        for path in ["container", "A", "B"] {
            try FileManager.default.createDirectory(at: folder.appending(path), withIntermediateDirectories: true)
        }
        return folder
    }

    /// `multidoc` with `arguments`; with `root`, on that root and the container; `clockOffset`:
    /// the device's clock that many seconds off (`MULTIDOC_CLOCK_OFFSET`).
    /// `timeout`: longer for commands on texts of many megabytes (a debug build on a loaded machine).
    func multidoc(
        _ arguments: [String], root: String? = nil, stdin: String? = nil, clockOffset: Int? = nil, timeout: TimeInterval = 60
    ) throws -> ProductRunner.Result {
        var all = arguments
        if let root { all += ["--root", root, "--container", container] }
        let environment = clockOffset.map { ["MULTIDOC_CLOCK_OFFSET": String($0)] } ?? [:]
        return try ProductRunner.run("multidoc", all, environment: environment, stdin: stdin, timeout: timeout)
    }

    /// `multidoc edit DOCUMENT` on `root` with `text` handed over by `$EDITOR` (a copy of a
    /// file): a text too long for one argument, as a user pastes it.
    func paste(_ text: String, into document: String, root: String, timeout: TimeInterval = 120) throws -> ProductRunner.Result {
        let file = folder.appending("pasted-\(document).txt")
        try Data(text.utf8).write(to: file)
        return try ProductRunner.run(
            "multidoc", ["edit", document, "--root", root, "--container", container], environment: ["EDITOR": "cp '\(file.path)'"], timeout: timeout)
    }

    /// `multidoc` with `arguments` on `root`, SIGKILLed if it still runs `milliseconds` after it
    /// started. True when it exited 0 (the command was acknowledged), false when killed or failed.
    func multidocKilled(after milliseconds: Int, _ arguments: [String], root: String) async throws -> Bool {
        let process = Process()
        process.executableURL = try #require(ProductRunner.path(of: "multidoc"))
        process.arguments = arguments + ["--root", root, "--container", container]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationReason == .exit && process.terminationStatus == 0
    }

    func json(_ result: ProductRunner.Result) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }
}
