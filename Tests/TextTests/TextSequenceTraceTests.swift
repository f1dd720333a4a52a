import Foundation
import Testing
import Text

/// Real editing traces (../shared/traces from the package root); skipped when absent.
@Suite struct TextSequenceTraceTests {
    @Test func sequentialTraceEndsAtItsContent() throws {
        guard let trace = try Traces.load("sequential/sveltecomponent.json.gz") else {
            print("skipped: ../shared/traces/sequential/sveltecomponent.json.gz is not there")
            return
        }
        var text = TextSequence()
        var operations: [TextOperation] = []
        if !trace.startContent.isEmpty { operations.append(try text.insert(trace.startContent, at: 0, by: alice)) }
        for transaction in trace.transactions {
            for patch in transaction.patches { operations += try EditingTrace.apply(patch, to: &text, by: alice) }
        }
        #expect(text.text == trace.endContent)
        var replica = TextSequence()
        for operation in operations { try replica.apply(operation) }
        #expect(replica.text == trace.endContent)
        let decoded = try TextSequence(decoding: text.encoded)
        #expect(decoded.text == trace.endContent)
    }

    @Test func concurrentTraceConvergesOnEveryReplica() throws {
        guard let trace = try Traces.load("concurrent/friendsforever.json.gz") else {
            print("skipped: ../shared/traces/concurrent/friendsforever.json.gz is not there")
            return
        }
        let result = try trace.replayConcurrently()
        for text in result.texts { #expect(text == trace.endContent) }
        #expect(result.texts.count >= 2)
    }

    /// A trace that is not what the format says is an error naming the problem, never a trap
    /// (a patch of two fields was read at an index that was not there).
    @Test func aMalformedTraceIsAnError() throws {
        let cases = [
            #"{"txns": [{"patches": [[0, 1]]}]}"#,
            #"{"txns": [{"patches": [[-1, 0, "x"]]}]}"#,
            #"{"txns": [{"parents": [0], "patches": []}]}"#,
            #"{"txns": [{"agent": -2, "patches": []}]}"#,
            #"[1, 2, 3]"#,
        ]
        for json in cases {
            #expect(throws: EditingTraceError.self, "\(json)") { try EditingTrace(json: Data(json.utf8)) }
        }
        let good = try EditingTrace(json: Data(#"{"endContent": "ab", "txns": [{"patches": [[0, 0, "ab"]]}]}"#.utf8))
        var text = TextSequence()
        for patch in good.transactions.flatMap(\.patches) { _ = try EditingTrace.apply(patch, to: &text, by: alice) }
        #expect(text.text == good.endContent)
    }
}
