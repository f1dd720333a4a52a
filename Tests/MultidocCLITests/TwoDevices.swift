import Foundation
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

    func json(_ result: ProductRunner.Result) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }
}
