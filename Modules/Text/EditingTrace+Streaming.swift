import Foundation

extension EditingTrace {
    /// Reads a trace from `next`, which hands over the file's bytes a chunk at a time (empty at
    /// the end): the JSON is parsed as it arrives, so memory holds the trace and one chunk, not
    /// the file and a tree of Foundation objects for it. Fields other than `startContent`,
    /// `endContent` and the transactions' `parents`, `agent` and `patches` are skipped.
    init(streaming next: @escaping () throws -> Data, path: String) throws(EditingTraceError) {
        var reader = TraceJSONReader(next: next, path: path)
        var start = "", end = ""
        var transactions: [Transaction] = []
        var sawTransactions = false
        try reader.object { key, reader throws(EditingTraceError) in
            switch key {
            case "startContent": start = try reader.string()
            case "endContent": end = try reader.string()
            case "txns":
                sawTransactions = true
                try reader.array { reader throws(EditingTraceError) in
                    transactions.append(try Self.transaction(&reader, index: transactions.count))
                }
            default: try reader.skipValue()
            }
        }
        try reader.end()
        guard sawTransactions else { throw EditingTraceError("not an editing trace (no txns)", path) }
        startContent = start
        endContent = end
        self.transactions = transactions
    }

    private static func transaction(_ reader: inout TraceJSONReader, index: Int) throws(EditingTraceError) -> Transaction {
        var parents: [Int]?
        var agent = 0
        var patches: [Patch] = []
        try reader.object { key, reader throws(EditingTraceError) in
            switch key {
            case "parents":
                var list: [Int] = []
                try reader.array { reader throws(EditingTraceError) in list.append(try reader.integer(maximum: index)) }
                parents = list
            case "agent": agent = try reader.integer(maximum: maximumAgents)
            case "patches":
                try reader.array { reader throws(EditingTraceError) in
                    var fields = 0
                    var position = 0, deleteCount = 0, insert: [Unicode.Scalar] = []
                    try reader.array { reader throws(EditingTraceError) in
                        switch fields {
                        case 0: position = try reader.integer(maximum: maximumPosition)
                        case 1: deleteCount = try reader.integer(maximum: maximumPosition)
                        case 2: insert = Array(try reader.string().unicodeScalars)
                        default: throw reader.error("transaction \(index) holds a patch that is not [position, deleteCount, text]")
                        }
                        fields += 1
                    }
                    guard fields == 3 else { throw reader.error("transaction \(index) holds a patch that is not [position, deleteCount, text]") }
                    patches.append(Patch(position: position, deleteCount: deleteCount, insert: insert))
                }
            default: try reader.skipValue()
            }
        }
        let resolved = parents ?? (index > 0 ? [index - 1] : [])
        guard resolved.allSatisfy({ $0 >= 0 && $0 < index }), agent < maximumAgents else {
            throw reader.error("transaction \(index) names a parent that is not before it, or an agent out of range")
        }
        return Transaction(parents: resolved, agent: agent, patches: patches)
    }
}

/// A pull parser over JSON arriving in chunks: just what a trace needs (objects, arrays,
/// strings, non-negative integers) and a way to skip any other value.
struct TraceJSONReader {
    private let next: () throws -> Data
    private let path: String
    private var buffer: [UInt8] = []
    private var offset = 0
    private var finished = false
    /// How deep skipped values may nest.
    private static let maximumDepth = 512

    init(next: @escaping () throws -> Data, path: String) {
        self.next = next
        self.path = path
    }

    func error(_ detail: String) -> EditingTraceError { EditingTraceError(detail, path) }

    /// The next byte, refilling the buffer as needed; nil at the end of the input.
    private mutating func peek() throws(EditingTraceError) -> UInt8? {
        while offset == buffer.count {
            guard !finished else { return nil }
            let chunk: Data
            do {
                chunk = try next()
            } catch {
                throw self.error("cannot read it: \(error)")
            }
            if chunk.isEmpty { finished = true }
            buffer = [UInt8](chunk)
            offset = 0
        }
        return buffer[offset]
    }

    private mutating func byte() throws(EditingTraceError) -> UInt8 {
        guard let byte = try peek() else { throw error("not an editing trace (the JSON ends early)") }
        offset += 1
        return byte
    }

    private mutating func skipSpace() throws(EditingTraceError) {
        while let byte = try peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { offset += 1 }
    }

    private mutating func expect(_ expected: UInt8) throws(EditingTraceError) {
        try skipSpace()
        guard try byte() == expected else { throw error("not an editing trace (expected '\(Character(Unicode.Scalar(expected)))')") }
    }

    /// Only white space is left.
    mutating func end() throws(EditingTraceError) {
        try skipSpace()
        guard try peek() == nil else { throw error("not an editing trace (bytes after the JSON)") }
    }

    /// An object: `body` reads the value of each key.
    mutating func object(_ body: (String, inout TraceJSONReader) throws(EditingTraceError) -> Void) throws(EditingTraceError) {
        try expect(UInt8(ascii: "{"))
        try skipSpace()
        if try peek() == UInt8(ascii: "}") {
            offset += 1
            return
        }
        while true {
            let key = try string()
            try expect(UInt8(ascii: ":"))
            try body(key, &self)
            try skipSpace()
            let separator = try byte()
            if separator == UInt8(ascii: "}") { return }
            guard separator == UInt8(ascii: ",") else { throw error("not an editing trace (an object is not closed)") }
        }
    }

    /// An array: `body` reads each element.
    mutating func array(_ body: (inout TraceJSONReader) throws(EditingTraceError) -> Void) throws(EditingTraceError) {
        try expect(UInt8(ascii: "["))
        try skipSpace()
        if try peek() == UInt8(ascii: "]") {
            offset += 1
            return
        }
        while true {
            try body(&self)
            try skipSpace()
            let separator = try byte()
            if separator == UInt8(ascii: "]") { return }
            guard separator == UInt8(ascii: ",") else { throw error("not an editing trace (an array is not closed)") }
        }
    }

    /// A non-negative integer no larger than `maximum`.
    mutating func integer(maximum: Int) throws(EditingTraceError) -> Int {
        try skipSpace()
        var value = 0, digits = 0
        while let byte = try peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            offset += 1
            digits += 1
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow, times <= maximum &- Int(byte &- UInt8(ascii: "0")) else { throw error("a number past \(maximum) where a position, count or index belongs") }
            value = times + Int(byte &- UInt8(ascii: "0"))
        }
        guard digits > 0 else { throw error("not an editing trace (a number is missing)") }
        return value
    }

    /// A string, its escapes decoded (a lone surrogate becomes U+FFFD).
    mutating func string() throws(EditingTraceError) -> String {
        try expect(UInt8(ascii: "\""))
        var bytes: [UInt8] = []
        var pendingHigh: UInt32?
        while true {
            let byte = try self.byte()
            if byte == UInt8(ascii: "\"") { break }
            guard byte == UInt8(ascii: "\\") else {
                if let high = pendingHigh { Self.append(high, to: &bytes); pendingHigh = nil }
                bytes.append(byte)
                continue
            }
            let escape = try self.byte()
            if escape == UInt8(ascii: "u") {
                var unit: UInt32 = 0
                for _ in 0..<4 {
                    let digit = try self.byte()
                    guard let value = Self.hex(digit) else { throw error("not an editing trace (a bad \\u escape)") }
                    unit = unit << 4 | value
                }
                if (0xD800...0xDBFF).contains(unit) {
                    if let high = pendingHigh { Self.append(high, to: &bytes) }
                    pendingHigh = unit
                } else if (0xDC00...0xDFFF).contains(unit), let high = pendingHigh {
                    Self.append(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00), to: &bytes)
                    pendingHigh = nil
                } else {
                    if let high = pendingHigh { Self.append(high, to: &bytes); pendingHigh = nil }
                    Self.append(unit, to: &bytes)
                }
                continue
            }
            if let high = pendingHigh { Self.append(high, to: &bytes); pendingHigh = nil }
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escape)
            case UInt8(ascii: "b"): bytes.append(0x08)
            case UInt8(ascii: "f"): bytes.append(0x0C)
            case UInt8(ascii: "n"): bytes.append(0x0A)
            case UInt8(ascii: "r"): bytes.append(0x0D)
            case UInt8(ascii: "t"): bytes.append(0x09)
            default: throw error("not an editing trace (a bad escape in a string)")
            }
        }
        if let high = pendingHigh { Self.append(high, to: &bytes) }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hex(_ digit: UInt8) -> UInt32? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(digit - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(digit - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(digit - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// A scalar's UTF-8 (a surrogate, which has none, as U+FFFD).
    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        let scalar = Unicode.Scalar(value) ?? "\u{FFFD}"
        bytes.append(contentsOf: String(scalar).utf8)
    }

    /// Skips one value of any kind.
    mutating func skipValue() throws(EditingTraceError) {
        var depth = 0
        repeat {
            try skipSpace()
            let byte = try peek()
            switch byte {
            case UInt8(ascii: "\"")?: _ = try string()
            case UInt8(ascii: "{")?, UInt8(ascii: "[")?:
                offset += 1
                depth += 1
                guard depth <= Self.maximumDepth else { throw error("not an editing trace (nested too deep)") }
            case UInt8(ascii: "}")?, UInt8(ascii: "]")?:
                offset += 1
                depth -= 1
            case UInt8(ascii: ",")?, UInt8(ascii: ":")?: offset += 1
            case nil: throw error("not an editing trace (the JSON ends early)")
            default:
                // A number or a literal: up to the next delimiter.
                while let next = try peek(), ![UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x0A, 0x0D, 0x09].contains(next) {
                    offset += 1
                }
            }
            // Inside a skipped container, a key's or element's separators keep it going.
        } while depth > 0
    }
}
