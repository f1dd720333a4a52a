import Foundation
import Text


extension Agent {
    /// A test agent whose bytes are all `byte`: agent(1) < agent(2) < agent(3).
    static func test(_ byte: UInt8) -> Agent {
        Agent(bytes: [UInt8](repeating: byte, count: 16)) ?? Agent(high: 0, low: 0)
    }
}

/// The editing traces of ../shared/traces (next to the package root), or nil when absent.
enum Traces {
    static var folder: URL? {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/traces")
        return FileManager.default.fileExists(atPath: folder.path) ? folder : nil
    }

    /// The trace at `relativePath`, or nil when the traces (or gzip) are not there.
    static func load(_ relativePath: String) throws -> EditingTrace? {
        guard let folder, FileManager.default.fileExists(atPath: "/usr/bin/gzip") else { return nil }
        let file = folder.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        return try EditingTrace.load(file)
    }
}
