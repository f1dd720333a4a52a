import Testing
import Text

/// Real editing traces (../shared/traces from the package root); skipped when absent.
@Suite struct TextSequenceTraceTests {
    @Test func sequentialTraceEndsAtItsContent() throws {
        guard let trace = try Trace.load("sequential/sveltecomponent.json.gz") else {
            print("skipped: ../shared/traces/sequential/sveltecomponent.json.gz is not there")
            return
        }
        var text = TextSequence()
        var operations: [TextOperation] = []
        if !trace.startContent.isEmpty { operations.append(try text.insert(trace.startContent, at: 0, by: alice)) }
        for transaction in trace.transactions {
            for patch in transaction.patches {
                if patch.deleteCount > 0, let deletion = try text.delete(patch.position..<(patch.position + patch.deleteCount), by: alice) {
                    operations.append(deletion)
                }
                if !patch.insert.isEmpty { operations.append(try text.insert(patch.insert, at: patch.position, by: alice)) }
            }
        }
        #expect(text.text == trace.endContent)
        var replica = TextSequence()
        for operation in operations { try replica.apply(operation) }
        #expect(replica.text == trace.endContent)
        let decoded = try TextSequence(decoding: text.encoded)
        #expect(decoded.text == trace.endContent)
    }

    @Test func concurrentTraceConvergesOnEveryReplica() throws {
        guard let trace = try Trace.load("concurrent/friendsforever.json.gz") else {
            print("skipped: ../shared/traces/concurrent/friendsforever.json.gz is not there")
            return
        }
        let result = try ConcurrentReplay.run(trace)
        for text in result.texts { #expect(text == trace.endContent) }
        #expect(result.texts.count >= 2)
    }
}

/// Replays a concurrent trace: one replica per agent; a transaction's patches apply on its
/// agent's replica after exactly its ancestors (their operations are delivered first).
enum ConcurrentReplay {
    static func run(_ trace: Trace) throws -> (texts: [String], operations: [[TextOperation]]) {
        let agentCount = (trace.transactions.map(\.agent).max() ?? 0) + 1
        var replicas = [TextSequence](repeating: TextSequence(), count: agentCount)
        var has = [[Bool]](repeating: [Bool](repeating: false, count: trace.transactions.count), count: agentCount)
        var operations = [[TextOperation]](repeating: [], count: trace.transactions.count)
        let agents = (0..<agentCount).map { Agent(high: 0, low: UInt64($0) + 1) }

        func deliver(ancestorsOf parents: [Int], to replica: Int) throws {
            var missing: [Int] = []
            var stack = parents
            while let next = stack.popLast() {
                guard !has[replica][next] else { continue }
                has[replica][next] = true
                missing.append(next)
                stack += trace.transactions[next].parents
            }
            for transaction in missing.sorted() {
                for operation in operations[transaction] { try replicas[replica].apply(operation) }
            }
        }

        for (index, transaction) in trace.transactions.enumerated() {
            let agent = transaction.agent
            try deliver(ancestorsOf: transaction.parents, to: agent)
            for patch in transaction.patches {
                if patch.deleteCount > 0,
                   let deletion = try replicas[agent].delete(patch.position..<(patch.position + patch.deleteCount), by: agents[agent]) {
                    operations[index].append(deletion)
                }
                if !patch.insert.isEmpty {
                    operations[index].append(try replicas[agent].insert(patch.insert, at: patch.position, by: agents[agent]))
                }
            }
            has[agent][index] = true
        }
        for replica in replicas.indices {
            try deliver(ancestorsOf: Array(trace.transactions.indices), to: replica)
        }
        return (replicas.map(\.text), operations)
    }
}
