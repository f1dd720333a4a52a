import Foundation
import Model

/// Prints a value as pretty JSON with sorted keys and ISO 8601 dates (`--json`).
public func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    let data = try encoder.encode(value)
    print(String(decoding: data, as: UTF8.self))
}

/// Columns padded to their widest cell (counted in characters), two spaces apart, trailing
/// blanks trimmed; written in one piece (the master table can have 10,000 rows).
public func printTable(_ rows: [[String]]) {
    guard let header = rows.first else { return }
    var widths = header.map(\.count)
    for row in rows { for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) } }
    var out = ""
    for row in rows {
        var line = ""
        for (index, cell) in row.enumerated() {
            if index > 0 { line += "  " }
            line += cell
            if index < widths.count, index < row.count - 1 { line += String(repeating: " ", count: max(0, widths[index] - cell.count)) }
        }
        while line.last == " " { line.removeLast() }
        out += line
        out += "\n"
    }
    print(out, terminator: "")
}

/// A date as the CLI's tables show it: local time, or `-` for none.
public func formatDate(_ date: Date?) -> String {
    date.map(TimeText.local) ?? "-"
}

/// Milliseconds with two decimals and the unit (`12.34 ms`).
public func ms(_ value: Double) -> String { String(format: "%.2f ms", value) }

/// A duration in milliseconds.
public func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

/// Writes `line` and a newline to standard error.
public func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Parses a document name typed by the user.
/// - Throws: ``AppError`` with status ``ExitStatus/invalidName``, carrying the cause.
public func documentName(_ raw: String) throws -> DocumentName {
    do { return try DocumentName(typed: raw) } catch { throw AppError(.invalidName, error.description, cause: error) }
}
