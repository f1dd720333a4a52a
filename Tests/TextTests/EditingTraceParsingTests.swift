import Foundation
import Testing
import Text

/// The trace reader parses JSON as it arrives: what it makes of escapes, fields it does not
/// use, and files that are not traces.
@Suite struct EditingTraceParsingTests {
    @Test func escapesAndSurrogatePairsBecomeTheirScalars() throws {
        let json = #"""
            {"kind": "concurrent", "startContent": "a\"b\\c\n", "endContent": "\u00e9\ud83d\ude00/",
             "numAgents": 2, "extra": {"nested": [1, 2.5e3, -4, true, null, {"x": "y"}]},
             "txns": [{"parents": [], "agent": 0, "time": "2020-01-01", "patches": [[0, 0, "\u00e9\ud83d\ude00\/"]]},
                      {"parents": [0], "agent": 1, "numChildren": 0, "patches": []}]}
            """#
        let trace = try EditingTrace(json: Data(json.utf8))
        #expect(trace.startContent == "a\"b\\c\n")
        #expect(trace.endContent == "é😀/")
        #expect(trace.transactions.count == 2)
        #expect(trace.transactions[0].patches.first?.insert == Array("é😀/".unicodeScalars))
        #expect(trace.transactions[1].parents == [0])
        #expect(trace.transactions[1].agent == 1)
    }

    @Test func sequentialTransactionsFollowTheOneBefore() throws {
        let json = #"{"txns": [{"patches": [[0, 0, "ab"]]}, {"patches": [[1, 1, ""], [0, 0, "c"]]}]}"#
        let trace = try EditingTrace(json: Data(json.utf8))
        #expect(trace.transactions.map(\.parents) == [[], [0]])
        #expect(trace.transactions[1].patches.map(\.deleteCount) == [1, 0])
    }

    @Test(arguments: [
        ("", "ends early"),
        ("{\"startContent\": \"x\"}", "no txns"),
        ("{\"txns\": [{\"patches\": [[0, 0]]}]}", "not [position, deleteCount, text]"),
        ("{\"txns\": [{\"patches\": [[-1, 0, \"a\"]]}]}", "number is missing"),
        ("{\"txns\": [{\"parents\": [3], \"patches\": []}]}", "past"),
        ("{\"txns\": []} trailing", "bytes after the JSON"),
        ("{\"txns\": [{\"patches\": [[99999999999999999999, 0, \"a\"]]}]}", "past"),
    ])
    func whatIsNotATraceIsRefusedWithItsReason(json: String, reason: String) {
        let error = #expect(throws: EditingTraceError.self) { try EditingTrace(json: Data(json.utf8), path: "t.json") }
        #expect(error?.description.contains(reason) == true, "\(error?.description ?? "")")
        #expect(error?.path == "t.json")
    }
}
