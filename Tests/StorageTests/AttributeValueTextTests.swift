import Foundation
import Model
@testable import Storage
import Testing

/// A SQLite store keeps each attribute value as one-element JSON (`["text"]`, `[{"int":2}]`),
/// written and read by hand for speed: what it writes must read back exactly, by itself and by
/// `JSONDecoder`, and what earlier builds wrote with `JSONEncoder` must still read.
@Suite struct AttributeValueTextTests {
    static let values: [AttributeValue] = [
        .null, .bool(true), .bool(false), .int(0), .int(-1), .int(Int64.max), .int(Int64.min),
        .double(2.5), .double(-0.0), .double(1e300), .double(5e-324), .double(100), .double(0.1),
        .date(Date(timeIntervalSince1970: 1_795_000_000.125)), .date(Date(timeIntervalSince1970: -1.5)),
        .string(""), .string("plain"), .string("quote \" back \\ slash / tab \t nl \n nul \u{0} del \u{7F}"),
        .string("ünïcødé 📄 \u{2028}"), .string("[{\"int\":1}]"),
    ]

    @Test func whatIsWrittenReadsBackByHandAndByJSONDecoder() throws {
        for value in Self.values {
            let text = try SQLiteSchema.encode(value)
            #expect(try SQLiteSchema.decode(text) == value, "\(text)")
            #expect(try JSONDecoder().decode([AttributeValue].self, from: Data(text.utf8)) == [value], "\(text)")
        }
    }

    @Test func whatJSONEncoderWroteStillReads() throws {
        for value in Self.values {
            let text = String(decoding: try JSONEncoder().encode([value]), as: UTF8.self)
            #expect(try SQLiteSchema.decode(text) == value, "\(text)")
        }
        // Spellings no build writes but JSON allows.
        #expect(try SQLiteSchema.decode(#"[ {"int" : 7} ]"#) == .int(7))
        #expect(try SQLiteSchema.decode(#"["\u0041"]"#) == .string("A"))
    }

    @Test func whatIsNotAValueIsRefused() {
        for text in ["", "[]", "[", #"[{"int":"7"}]"#, #"[{"int":99999999999999999999}]"#, #"["unterminated]"#,
                     #"[{"double":nan}]"#, #"[{"bool":maybe}]"#, #"[{"colour":1}]"#] {
            #expect(throws: (any Error).self, "\(text)") { try SQLiteSchema.decode(text) }
        }
        // Not a JSON number: refused when written, as JSONEncoder refused it.
        #expect(throws: (any Error).self) { try SQLiteSchema.encode(.double(.nan)) }
        #expect(throws: (any Error).self) { try SQLiteSchema.encode(.double(.infinity)) }
    }
}
