import CSQLiteConfig
import Foundation
import GRDB
import Model
import Text

/// The SQLite schema, its migrations, and the row-level reads and writes.
///
/// Version 1: `objects`, `attributes` (values only), `applied`, `meta`.
/// Version 2: per-attribute version stamps, `tombstones`, `outbox`; `ModelVersion.version` = 2.
/// Migration `v3`: `texts`, the replicated sequence of each text attribute (a blob of
/// `TextSequence.encoded`), and `history`, the saves that changed a text (JSON per entry);
/// the model is unchanged.
/// Migration `v4`: `records`, one row per object (its entity, and its attributes with their
/// stamps in one blob, ``recordBytes(_:stamps:)``), in place of `objects` and `attributes`: an
/// import wrote five B-tree entries per inserted object and now writes one.
/// Migration `v5`: `text_operations`, the operations applied to each text since its state in
/// `texts` was written, appended by each save (``appendTextOperations(_:to:in:)``) and folded
/// into `texts` at checkpoints (``compactTexts(_:in:)``); a record's text that its sequence
/// holds is not repeated in `records` (flag 2 of ``recordBytes(_:stamps:texts:)``).
enum SQLiteSchema {
    static let zeroDevice = "00000000-0000-0000-0000-000000000000"

    // MARK: Values

    static let encoder = JSONEncoder()
    static let decoder = JSONDecoder()

    /// A value as a one-element JSON array (`["text"]`, `[{"int":2}]`): the spelling of the
    /// `attributes.value` column of layouts v1–v3, which only the migrations read and write now
    /// (v2 sets the model version; v4 reads every value into `records`).
    ///
    /// Written by hand, read by hand for the forms written here (through `JSONEncoder` and
    /// `JSONDecoder` each value costs several microseconds; it keeps the v4 migration of a
    /// large store quick). Anything else (a value written by an earlier build, or by hand) is read
    /// by `JSONDecoder`.
    static func encode(_ value: AttributeValue) throws -> String {
        switch value {
        case .string(let string):
            var bytes: [UInt8] = [UInt8(ascii: "[")]
            bytes.reserveCapacity(string.utf8.count + 4)
            JSONQuote.append(string, to: &bytes)
            bytes.append(UInt8(ascii: "]"))
            return String(decoding: bytes, as: UTF8.self)
        case .null: return "[null]"
        case .int(let int): return "[{\"int\":\(int)}]"
        case .bool(let bool): return bool ? #"[{"bool":true}]"# : #"[{"bool":false}]"#
        case .double(let double) where double.isFinite: return "[{\"double\":\(double)}]"
        case .date(let date) where date.timeIntervalSince1970.isFinite: return "[{\"date\":\(date.timeIntervalSince1970)}]"
        case .double, .date:
            // Not a JSON number: JSONEncoder says why.
            return String(decoding: try encoder.encode([value]), as: UTF8.self)
        }
    }

    static func decode(_ text: String) throws -> AttributeValue {
        if let value = decodeWritten(text) { return value }
        guard let value = try decoder.decode([AttributeValue].self, from: Data(text.utf8)).first else {
            throw corrupt("empty attribute value")
        }
        return value
    }

    /// A value in a form ``encode(_:)`` writes (a string without escapes, a number that is one),
    /// or nil for `JSONDecoder` to read.
    static func decodeWritten(_ text: String) -> AttributeValue? {
        var text = text
        return text.withUTF8 { utf8 -> AttributeValue? in
            guard utf8.count >= 4, utf8.first == UInt8(ascii: "["), utf8.last == UInt8(ascii: "]") else { return nil }
            let inner = UnsafeBufferPointer(rebasing: utf8[1..<(utf8.count - 1)])
            if inner.elementsEqual("null".utf8) { return .null }
            if inner.first == UInt8(ascii: "\""), inner.count >= 2, inner.last == UInt8(ascii: "\"") {
                let content = UnsafeBufferPointer(rebasing: inner[1..<(inner.count - 1)])
                guard !content.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }),
                      let string = String(validating: content, as: UTF8.self) else { return nil }
                return .string(string)
            }
            if inner.elementsEqual(#"{"bool":true}"#.utf8) { return .bool(true) }
            if inner.elementsEqual(#"{"bool":false}"#.utf8) { return .bool(false) }
            // `{"int":N}`, `{"double":N}`, `{"date":N}`: the number between the key and the brace.
            func number(after key: String) -> String? {
                let length = key.utf8.count
                guard inner.count > length + 1, inner.starts(with: key.utf8), inner.last == UInt8(ascii: "}") else { return nil }
                return String(decoding: UnsafeBufferPointer(rebasing: inner[length..<(inner.count - 1)]), as: UTF8.self)
            }
            if let digits = number(after: #"{"int":"#) {
                guard digits.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }),
                      let value = Int64(digits) else { return nil }
                return .int(value)
            }
            if let text = number(after: #"{"double":"#) { return jsonNumber(text).map(AttributeValue.double) }
            if let text = number(after: #"{"date":"#) { return jsonNumber(text).map { .date(Date(timeIntervalSince1970: $0)) } }
            return nil
        }
    }

    /// A finite JSON number (digits, sign, point, exponent), as `JSONDecoder` reads it.
    private static func jsonNumber(_ text: String) -> Double? {
        guard let first = text.utf8.first, first == UInt8(ascii: "-") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")),
              text.utf8.allSatisfy({ ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e")
                  || $0 == UInt8(ascii: "E") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }),
              let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// The stamp in a row's `stamp_wall`, `stamp_counter` and `stamp_device` columns; nil when
    /// the device is not a UUID (such a stamp is dropped, as it always was).
    static func stamp(_ row: Row, table: String) throws -> Stamp? {
        guard let device = DeviceID(try text(row, "stamp_device", table: table)) else { return nil }
        let wall = try integer(row, "stamp_wall", table: table)
        let counter = try integer(row, "stamp_counter", table: table)
        return Stamp(wall: UInt64(max(0, wall)), counter: UInt32(clamping: counter), device: device)
    }

    // MARK: Columns

    // GRDB's `row["column"] as T` traps when the value cannot be converted to `T`, and SQLite
    // stores any type in any column, so a database that is valid but was damaged or edited by
    // hand (text in an INTEGER column) would crash the process. Every column is read as a
    // `DatabaseValue` and converted here; a value of the wrong type makes the store corrupt.

    static func text(_ row: Row, _ column: String, table: String) throws -> String {
        let value: DatabaseValue = row[column]
        guard let text = String.fromDatabaseValue(value) else { throw illTyped(value, table: table, column: column, expected: "text") }
        return text
    }

    static func integer(_ row: Row, _ column: String, table: String) throws -> Int64 {
        let value: DatabaseValue = row[column]
        guard let integer = Int64.fromDatabaseValue(value) else { throw illTyped(value, table: table, column: column, expected: "an integer") }
        return integer
    }

    static func blob(_ row: Row, _ column: String, table: String) throws -> Data {
        let value: DatabaseValue = row[column]
        guard let data = Data.fromDatabaseValue(value) else { throw illTyped(value, table: table, column: column, expected: "a blob") }
        return data
    }

    /// A corruption error naming the table, the column and what was found there; the store maps
    /// it to ``StoreError/Kind/corrupt`` with the file's path.
    static func illTyped(_ value: DatabaseValue, table: String, column: String, expected: String) -> DatabaseError {
        let found: String
        switch value.storage {
        case .null: found = "NULL"
        case .int64(let integer): found = "the integer \(integer)"
        case .double(let double): found = "the real number \(double)"
        case .string(let string): found = "the text \"\(string.prefix(40))\""
        case .blob(let data): found = "a \(data.count)-byte blob"
        }
        return corrupt("\(table).\(column) holds \(found) where \(expected) belongs")
    }

    static func corrupt(_ message: String) -> DatabaseError {
        DatabaseError(resultCode: .SQLITE_CORRUPT, message: message)
    }

    // MARK: Generation

    /// The store's generation (prepared once per connection: every read and write asks).
    static func generation(_ db: Database) throws -> Int64 {
        guard let row = try Row.fetchOne(try db.cachedStatement(sql: "SELECT value FROM meta WHERE key = 'generation'")) else { return 0 }
        return Int64(try text(row, "value", table: "meta")) ?? 0
    }

    /// Records the generation after `current` (read in the same transaction) and returns it.
    static func bumpGeneration(from current: Int64, _ db: Database) throws -> Int64 {
        let next = current &+ 1
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('generation', ?)").execute(arguments: ["\(next)"])
        return next
    }
}
