import AppSupport
import Foundation
import Testing

/// `list --json` writes its rows by hand; scripts parse it, and it must stay exactly what
/// `JSONEncoder` (sorted, pretty, slashes unescaped) would print.
@Suite struct JSONTextTests {
    struct Row: Encodable {
        var count: Int
        var name: String
        var note: String?
        var seen: Date?
        var yes: Bool
    }

    static func encoder(_ rows: [Row]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(rows), as: UTF8.self)
    }

    static func handWritten(_ rows: [Row]) -> String {
        var text = JSONText()
        text.array(rows) { object, row in
            object.int("count", row.count)
            object.string("name", row.name)
            object.string("note", row.note)
            object.date("seen", row.seen)
            object.bool("yes", row.yes)
        }
        return text.string
    }

    @Test func rowsAreWhatJSONEncoderPrints() throws {
        let rows = [
            Row(count: 0, name: "plain", note: nil, seen: Date(timeIntervalSince1970: 1_795_000_000.75), yes: true),
            Row(count: -12, name: "quote \" back \\ slash / tab \t nl \n cr \r bell \u{07} nul \u{00} del \u{7F}", note: "ünïcødé 📄 \u{2028}",
                seen: nil, yes: false),
            Row(count: Int.max, name: "", note: "", seen: Date(timeIntervalSince1970: -86_400.5), yes: true),
            Row(count: 3, name: "y2k", note: nil, seen: Date(timeIntervalSince1970: 946_684_799), yes: false),
        ]
        #expect(Self.handWritten(rows) == (try Self.encoder(rows)))
    }

    @Test func emptyListIsWhatJSONEncoderPrints() throws {
        #expect(Self.handWritten([]) == (try Self.encoder([])))
    }
}
