import Foundation
import Text


extension Agent {
    /// A test agent whose bytes are all `byte`: agent(1) < agent(2) < agent(3).
    static func test(_ byte: UInt8) -> Agent {
        Agent(bytes: [UInt8](repeating: byte, count: 16)) ?? Agent(high: 0, low: 0)
    }
}

/// An editing trace of /work/shared/traces (github.com/josephg/editing-traces).
struct Trace {
    struct Transaction {
        var parents: [Int]
        var agent: Int
        var patches: [(position: Int, deleteCount: Int, insert: String)]
    }
    var startContent: String
    var endContent: String
    var transactions: [Transaction]

    /// `../shared/traces` next to the package root, or nil when it is not there.
    static var folder: URL? {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/traces")
        return FileManager.default.fileExists(atPath: folder.path) ? folder : nil
    }

    /// Reads a gzipped trace with `/usr/bin/gzip -dc`.
    static func load(_ relativePath: String) throws -> Trace? {
        guard let folder, FileManager.default.fileExists(atPath: "/usr/bin/gzip") else { return nil }
        let file = folder.appendingPathComponent(relativePath)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gzip")
        process.arguments = ["-dc", file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let json = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let txns = json["txns"] as? [[String: Any]]
        else { return nil }
        let transactions = txns.map { txn in
            Transaction(
                parents: (txn["parents"] as? [Int]) ?? [],
                agent: (txn["agent"] as? Int) ?? 0,
                patches: ((txn["patches"] as? [[Any]]) ?? []).map { patch in
                    ((patch[0] as? Int) ?? 0, (patch[1] as? Int) ?? 0, (patch[2] as? String) ?? "")
                })
        }
        return Trace(
            startContent: (json["startContent"] as? String) ?? "", endContent: (json["endContent"] as? String) ?? "",
            transactions: transactions)
    }
}
