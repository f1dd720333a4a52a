import Foundation

/// Runs a built product of this package as a separate process, as users run it.
public enum ProductRunner {
    /// The folder holding the built products (`.build/<triple>/debug`), found from the running
    /// test bundle.
    public static func productsDirectory() -> URL? {
        var candidates: [URL] = [Bundle.main.bundleURL]
        if let argument = CommandLine.arguments.first { candidates.append(URL(fileURLWithPath: argument)) }
        for bundle in Bundle.allBundles { candidates.append(bundle.bundleURL) }
        for start in candidates {
            var url = start.standardizedFileURL
            for _ in 0..<6 {
                if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("multidoc").path) { return url }
                url = url.deletingLastPathComponent()
            }
        }
        return nil
    }

    /// The path of a product, or nil if it was not built.
    public static func path(of product: String) -> URL? {
        // An absolute path is a program of the system (/bin/bash), not a product.
        if product.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: product) ? URL(fileURLWithPath: product) : nil }
        guard let directory = productsDirectory() else { return nil }
        let url = directory.appendingPathComponent(product)
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }

    public struct Result: Sendable {
        public let status: Int32
        public let stdout: String
        public let stderr: String
    }

    /// Runs `product` with `arguments` and waits for it (at most `timeout`).
    ///
    /// `fileSizeLimit` (bytes, a multiple of 512) caps every file the process writes, as a full
    /// disk would: a write past it fails with `EFBIG` (SIGXFSZ is ignored), a real I/O error from
    /// the kernel, without root or a small file system.
    public static func run(
        _ product: String, _ arguments: [String], environment: [String: String] = [:],
        stdin: String? = nil, timeout: TimeInterval = 60, fileSizeLimit: Int? = nil, directory: URL? = nil
    ) throws -> Result {
        guard let executable = path(of: product) else {
            throw RunnerError(message: "\(product) is not built next to the tests (run swift build first)")
        }
        let process = Process()
        if let fileSizeLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "trap '' XFSZ; ulimit -f \(fileSizeLimit / 512) && exec \"$0\" \"$@\"", executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        if let directory { process.currentDirectoryURL = directory }
        var merged = ProcessInfo.processInfo.environment
        for key in merged.keys where key.hasPrefix("MULTIDOC_") { merged[key] = nil }
        merged.merge(environment) { _, new in new }
        process.environment = merged
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
        let outData = LockedData(), errData = LockedData()
        let group = DispatchGroup()
        // A thread of its own per pipe, not Dispatch's global queue: its few threads can all be
        // blocked in other tests' reads (a daemon's pipes stay open for minutes), and a read
        // queued behind them timed out a command that had long finished. Each keeps what it has
        // read so far.
        for (pipe, data) in [(out, outData), (err, errData)] {
            group.enter()
            let handle = pipe.fileHandleForReading
            Thread {
                while case let chunk = handle.availableData, !chunk.isEmpty { data.append(chunk) }
                group.leave()
            }.start()
        }
        // The process's end is what is waited for, not the pipes': a process another test
        // started at the same moment (a tmux server, a daemon) can inherit their write ends
        // and hold them open long after this one exited.
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            throw RunnerError(message: "\(product) \(arguments.joined(separator: " ")) did not finish in \(Int(timeout)) s")
        }
        // What it wrote is in the pipes: read to their end, or for as long as another holder
        // keeps them open, a moment.
        _ = group.wait(timeout: .now() + 2)
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: String(decoding: outData.get(), as: UTF8.self),
                      stderr: String(decoding: errData.get(), as: UTF8.self))
    }

    public struct RunnerError: Error, CustomStringConvertible {
        public let message: String
        public init(message: String) { self.message = message }
        public var description: String { message }
    }
}

private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ value: Data) { lock.lock(); data.append(value); lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}
