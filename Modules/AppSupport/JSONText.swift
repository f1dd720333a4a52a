import FileIO
import Foundation
import Model

/// Pretty-printed JSON written straight into bytes, in the exact form `JSONEncoder` gives with
/// `[.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]` and ISO 8601 dates: the form every
/// `--json` output of multidoc has.
///
/// Written by hand for the outputs with a row per document: `list --json` over 10,000
/// documents spent a sixth of its time in `JSONEncoder` (see Docs/DECISIONS.md). The caller
/// writes an object's keys in sorted order; ``JSONObject`` checks that in debug builds.
public struct JSONText: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init() {}

    /// An array of objects, each written by `element`.
    public mutating func array<Element>(_ elements: some Collection<Element>, _ element: (inout JSONObject, Element) -> Void) {
        guard !elements.isEmpty else {
            append("[\n\n]")
            return
        }
        // A master table's row is about 300 bytes: grown once, not a dozen times.
        bytes.reserveCapacity(bytes.count + elements.count * 320)
        append("[\n")
        var first = true
        // One object's buffer serves every row.
        var object = JSONObject(indent: 1)
        for value in elements {
            if !first { append(",\n") }
            first = false
            object.reset()
            element(&object, value)
            object.finish(into: &bytes)
        }
        append("\n]")
    }

    /// The text, as a String.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Writes the text and a newline to standard output (as `print(string)`, without making
    /// a String of megabytes first).
    public func printed() {
        // What `print` buffered goes first.
        fflush(nil)
        // A closed pipe or a full disk: nothing more can be told on it.
        _ = (bytes + [UInt8(ascii: "\n")]).withUnsafeBytes { AtomicFile.writeAll($0, to: STDOUT_FILENO) }
    }

    mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }
    mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }
}

/// One object of a ``JSONText``: keys written in sorted order, nil values left out (as
/// `JSONEncoder` leaves out nil optionals).
public struct JSONObject: Sendable {
    private var bytes: [UInt8]
    private let indent: Int
    private var lastKey: String?

    init(indent: Int) {
        self.indent = indent
        bytes = []
        bytes.reserveCapacity(512)
    }

    public mutating func string(_ key: String, _ value: String?) {
        guard let value else { return }
        self.key(key)
        JSONObject.quote(value, into: &bytes)
    }

    public mutating func int(_ key: String, _ value: Int?) {
        guard let value else { return }
        self.key(key)
        bytes.append(contentsOf: value.description.utf8)
    }

    public mutating func bool(_ key: String, _ value: Bool?) {
        guard let value else { return }
        self.key(key)
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// A date as ISO 8601 in UTC to the second, like `JSONEncoder.DateEncodingStrategy.iso8601`.
    public mutating func date(_ key: String, _ value: Date?) {
        guard let value else { return }
        self.key(key)
        bytes.append(UInt8(ascii: "\""))
        TimeText.appendISO8601(value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func key(_ key: String) {
        assert(lastKey.map { $0 < key } ?? true, "JSON keys must be written in sorted order")
        bytes.append(contentsOf: (lastKey == nil ? "{\n" : ",\n").utf8)
        lastKey = key
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * (indent + 1)))
        JSONObject.quote(key, into: &bytes)
        bytes.append(contentsOf: " : ".utf8)
    }

    /// Empties the object for the next row (keeping its buffer).
    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        lastKey = nil
    }

    func finish(into text: inout [UInt8]) {
        text.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
        text.append(contentsOf: bytes)
        text.append(contentsOf: (lastKey == nil ? "{\n\n" : "\n").utf8)
        text.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
        text.append(UInt8(ascii: "}"))
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as is.
    static func quote(_ text: String, into bytes: inout [UInt8]) { JSONQuote.append(text, to: &bytes) }
}
