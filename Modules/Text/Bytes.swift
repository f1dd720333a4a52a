/// Why bytes could not be read as a text operation or a text state.
public enum TextDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bytes end in the middle of a value.
    case truncated(offset: Int)
    /// A varint longer than 10 bytes or past `UInt64.max`.
    case malformedVarint(offset: Int)
    /// A count or length above what a reader accepts.
    case tooLarge(offset: Int, value: UInt64)
    /// Text that is not valid UTF-8, or not as many scalars as announced.
    case invalidText(offset: Int)
    /// An unknown operation tag.
    case unknownTag(offset: Int, tag: UInt8)
    /// Not a text state (wrong magic) or a format version this reader does not know.
    case notATextState
    /// Bytes left over after the value.
    case trailingBytes(offset: Int)
    /// A well-formed encoding of an operation that is not valid.
    case invalidOperation(TextError)
    /// A state whose parts contradict each other (ids twice, origins missing, bad indexes).
    case inconsistentState(String)

    public var description: String {
        switch self {
        case .truncated(let offset): "the bytes end early (at \(offset))"
        case .malformedVarint(let offset): "malformed number at \(offset)"
        case .tooLarge(let offset, let value): "value \(value) at \(offset) is too large"
        case .invalidText(let offset): "invalid UTF-8 text at \(offset)"
        case .unknownTag(let offset, let tag): "unknown operation tag \(tag) at \(offset)"
        case .notATextState: "not a text state this version reads"
        case .trailingBytes(let offset): "unexpected bytes after the end (at \(offset))"
        case .invalidOperation(let error): "invalid operation: \(error)"
        case .inconsistentState(let reason): "inconsistent text state: \(reason)"
        }
    }
}

/// Appends LEB128 varints, agents and UTF-8 text to a byte array.
package struct ByteWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func byte(_ value: UInt8) { bytes.append(value) }

    package mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    package mutating func varint(_ value: Int) { varint(UInt64(clamping: value)) }

    /// An agent's 16 bytes, high half first, each big-endian (``Agent/bytes``), with no array
    /// made for them.
    package mutating func agent(_ agent: Agent) {
        withUnsafeBytes(of: (agent.high.bigEndian, agent.low.bigEndian)) { bytes.append(contentsOf: $0) }
    }

    package mutating func raw(_ more: some Collection<UInt8>) { bytes.append(contentsOf: more) }

    /// A UTF-8 string: its byte length, then the bytes.
    package mutating func string(_ string: String) {
        varint(string.utf8.count)
        bytes.append(contentsOf: string.utf8)
    }

    /// The scalar count, the UTF-8 length, then the UTF-8 bytes.
    package mutating func scalars(_ scalars: some Collection<Unicode.Scalar>) {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(scalars.count)
        for scalar in scalars { UTF8.encode(scalar) { utf8.append($0) } }
        varint(scalars.count)
        varint(utf8.count)
        bytes.append(contentsOf: utf8)
    }
}

/// Reads what `ByteWriter` writes, checking every bound: hostile bytes give a
/// `TextDecodingError`, never a trap.
package struct ByteReader {
    package let bytes: [UInt8]
    package var offset = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var remaining: Int { bytes.count - offset }

    package mutating func byte() throws(TextDecodingError) -> UInt8 {
        guard offset < bytes.count else { throw .truncated(offset: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inline(__always)
    package mutating func varint() throws(TextDecodingError) -> UInt64 {
        // Most varints are one or two bytes.
        if offset + 1 < bytes.count {
            let first = bytes[offset]
            if first < 0x80 {
                offset += 1
                return UInt64(first)
            }
            let second = bytes[offset + 1]
            if second < 0x80 {
                offset += 2
                return UInt64(first & 0x7F) | UInt64(second) << 7
            }
        }
        return try longVarint()
    }

    private mutating func longVarint() throws(TextDecodingError) -> UInt64 {
        let start = offset
        var value: UInt64 = 0
        for shift in stride(from: UInt64(0), to: 70, by: 7) {
            let byte = try byte()
            // The tenth byte holds only the top bit of a UInt64.
            guard shift < 63 || byte <= 1 else { throw .malformedVarint(offset: start) }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
        }
        throw .malformedVarint(offset: start)
    }

    /// A varint that must be at most `maximum`.
    @inline(__always)
    package mutating func count(maximum: Int) throws(TextDecodingError) -> Int {
        let start = offset
        let value = try varint()
        guard value <= UInt64(maximum) else { throw .tooLarge(offset: start, value: value) }
        return Int(value)
    }

    package mutating func agent() throws(TextDecodingError) -> Agent {
        guard remaining >= 16 else { throw .truncated(offset: offset) }
        defer { offset += 16 }
        return Agent(bytes: bytes[offset..<(offset + 16)]) ?? Agent(high: 0, low: 0)
    }

    package mutating func scalars(maximum: Int) throws(TextDecodingError) -> [Unicode.Scalar] {
        let scalarCount = try count(maximum: maximum)
        let byteStart = offset
        let byteCount = try count(maximum: min(remaining, scalarCount * 4))
        guard byteCount <= remaining else { throw .truncated(offset: offset) }
        // ASCII (most runs): a scalar a byte, without the string and the generic scalar view
        // below (a third of checking a one-character save's log).
        if byteCount == scalarCount {
            let start = offset
            let ascii = bytes.withUnsafeBufferPointer { buffer -> [Unicode.Scalar]? in
                let run = UnsafeBufferPointer(rebasing: buffer[start..<(start + byteCount)])
                guard run.isASCII else { return nil }
                return run.map { Unicode.Scalar($0) }
            }
            if let ascii {
                offset += byteCount
                return ascii
            }
        }
        let utf8 = bytes[offset..<(offset + byteCount)]
        guard let string = String(validating: utf8, as: UTF8.self) else { throw .invalidText(offset: offset) }
        let scalars = Array(string.unicodeScalars)
        guard scalars.count == scalarCount else { throw .invalidText(offset: byteStart) }
        offset += byteCount
        return scalars
    }

    /// The next `count` bytes as they are.
    package mutating func raw(count: Int) throws(TextDecodingError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else { throw .truncated(offset: offset) }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    /// A string written by `ByteWriter.string(_:)`, at most `maximum` bytes of valid UTF-8.
    package mutating func string(maximum: Int) throws(TextDecodingError) -> String {
        let length = try count(maximum: maximum)
        let start = offset
        let utf8 = try raw(count: length)
        // ASCII (names, ids, most values) decodes as it is; `String(validating:)` looked up
        // generic metadata on every call, a quarter of reading a large baseline.
        let string = utf8.withUnsafeBufferPointer { buffer -> String? in
            buffer.isASCII ? String(decoding: buffer, as: UTF8.self) : String(validating: buffer, as: UTF8.self)
        }
        guard let string else { throw .invalidText(offset: start) }
        return string
    }

    package func finish() throws(TextDecodingError) {
        guard offset == bytes.count else { throw .trailingBytes(offset: offset) }
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether every byte is ASCII, eight at a time: the usual text, whose UTF-8 is its scalars.
    package var isASCII: Bool {
        guard let base = baseAddress else { return true }
        var any: UInt64 = 0
        var index = 0
        while count - index >= 8 {
            any |= UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            index += 8
        }
        while index < count {
            any |= UInt64(base[index])
            index += 1
        }
        return any & 0x8080_8080_8080_8080 == 0
    }
}
