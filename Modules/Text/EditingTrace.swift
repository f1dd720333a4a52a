import Foundation

/// A real editing history in the format of github.com/josephg/editing-traces (CC BY 4.0):
/// `{startContent, endContent, txns: [{parents, agent, patches: [[pos, delCount, insert]]}]}`,
/// positions in Unicode scalars. Sequential traces have one agent and each transaction follows
/// the one before; concurrent ones name each transaction's parents. Read by the tests and by
/// `multidoc-text-bench`, so both replay the same thing. Parsed as it is read
/// (`EditingTrace+Streaming`); every field is checked before it is used.
public struct EditingTrace: Sendable {
    public struct Patch: Sendable {
        public var position: Int
        public var deleteCount: Int
        public var insert: [Unicode.Scalar]
    }

    public struct Transaction: Sendable {
        /// Earlier transactions this one was made after (indices below its own).
        public var parents: [Int]
        public var agent: Int
        public var patches: [Patch]
    }

    public var startContent: String
    public var endContent: String
    public var transactions: [Transaction]

    /// The most agents a trace may name, and the largest position or delete it may hold.
    static let maximumAgents = 4096
    static let maximumPosition = 1 << 40

    /// Reads a trace file, `.gz` files through `/usr/bin/gzip -dc`, parsing the JSON as it is
    /// read (``init(streaming:path:)``): memory holds the trace, not the file.
    public static func load(_ url: URL) throws(EditingTraceError) -> EditingTrace {
        let input: FileHandle
        var process: Process?
        do {
            if url.pathExtension == "gz" {
                let gzip = Process()
                gzip.executableURL = URL(fileURLWithPath: "/usr/bin/gzip")
                gzip.arguments = ["-dc", url.path]
                let pipe = Pipe()
                gzip.standardOutput = pipe
                try gzip.run()
                process = gzip
                input = pipe.fileHandleForReading
            } else {
                input = try FileHandle(forReadingFrom: url)
            }
        } catch {
            throw EditingTraceError("cannot read it: \(error.localizedDescription)", url.path)
        }
        defer {
            try? input.close()
            if let process, process.isRunning { process.terminate() }
            process?.waitUntilExit()
        }
        let trace = try EditingTrace(streaming: { try input.read(upToCount: 1 << 16) ?? Data() }, path: url.path)
        if let process {
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw EditingTraceError("gzip could not read it", url.path) }
        }
        return trace
    }

    /// Parses a trace's JSON; `path` names it in errors.
    public init(json data: Data, path: String = "trace") throws(EditingTraceError) {
        var handed = false
        try self.init(streaming: {
            defer { handed = true }
            return handed ? Data() : data
        }, path: path)
    }

    /// Applies one patch to `text` as a local edit by `agent`; returns its operations.
    public static func apply(_ patch: Patch, to text: inout TextSequence, by agent: Agent) throws(TextError) -> [TextOperation] {
        var operations: [TextOperation] = []
        if patch.deleteCount > 0 { operations += try text.delete(patch.position..<(patch.position + patch.deleteCount), by: agent) }
        if !patch.insert.isEmpty { operations.append(try text.insert(patch.insert, at: patch.position, by: agent)) }
        return operations
    }

    /// Replays the trace with one replica per agent: each transaction's patches apply on its
    /// agent's replica after exactly its ancestors (their operations delivered first); at the
    /// end every replica gets everything. Returns each replica's text and each transaction's
    /// operations.
    public func replayConcurrently() throws(TextError) -> (texts: [String], operations: [[TextOperation]]) {
        let agentCount = (transactions.map(\.agent).max() ?? 0) + 1
        var replicas = [TextSequence](repeating: TextSequence(), count: agentCount)
        var has = [[Bool]](repeating: [Bool](repeating: false, count: transactions.count), count: agentCount)
        var operations = [[TextOperation]](repeating: [], count: transactions.count)
        let agents = (0..<agentCount).map { Agent(high: 0, low: UInt64($0) + 1) }

        func deliver(ancestorsOf parents: [Int], to replica: Int) throws(TextError) {
            var missing: [Int] = []
            var stack = parents
            while let next = stack.popLast() {
                guard !has[replica][next] else { continue }
                has[replica][next] = true
                missing.append(next)
                stack += transactions[next].parents
            }
            for transaction in missing.sorted() {
                for operation in operations[transaction] { _ = try replicas[replica].apply(operation) }
            }
        }

        for (index, transaction) in transactions.enumerated() {
            let agent = transaction.agent
            try deliver(ancestorsOf: transaction.parents, to: agent)
            for patch in transaction.patches {
                operations[index] += try Self.apply(patch, to: &replicas[agent], by: agents[agent])
            }
            has[agent][index] = true
        }
        for replica in replicas.indices { try deliver(ancestorsOf: Array(transactions.indices), to: replica) }
        return (replicas.map(\.text), operations)
    }
}

/// A trace that cannot be read or does not hold what the format says.
public struct EditingTraceError: Error, Sendable, CustomStringConvertible {
    public let detail: String
    public let path: String

    init(_ detail: String, _ path: String) {
        self.detail = detail
        self.path = path
    }

    public var description: String { "\(path): \(detail)" }
}
