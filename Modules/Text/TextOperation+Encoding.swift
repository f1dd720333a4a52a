extension TextOperation {
    private static let insertTag: UInt8 = 1
    private static let deleteTag: UInt8 = 2

    /// The operation as bytes: a tag, then LEB128 varints, 16-byte agents and UTF-8 text.
    public var encoded: [UInt8] {
        var writer = ByteWriter()
        write(to: &writer)
        return writer.bytes
    }

    /// Reads an operation written by `encoded`.
    ///
    /// - Throws: `TextDecodingError` for truncated, oversized, malformed or trailing bytes,
    ///   and `.invalidOperation` for an operation `validate()` refuses.
    public init(decoding bytes: [UInt8]) throws(TextDecodingError) {
        var reader = ByteReader(bytes)
        self = try Self.read(from: &reader)
        try reader.finish()
    }

    package func write(to writer: inout ByteWriter) {
        switch self {
        case .insert(let insertion):
            writer.byte(Self.insertTag)
            writer.agent(insertion.id.agent)
            writer.varint(insertion.id.counter)
            writer.byte((insertion.originLeft == nil ? 0 : 1) | (insertion.originRight == nil ? 0 : 2))
            for origin in [insertion.originLeft, insertion.originRight] {
                if let origin {
                    writer.agent(origin.agent)
                    writer.varint(origin.counter)
                }
            }
            writer.scalars(insertion.scalars)
        case .delete(let ranges):
            writer.byte(Self.deleteTag)
            writer.varint(ranges.count)
            for range in ranges {
                writer.agent(range.agent)
                writer.varint(range.counters.lowerBound)
                writer.varint(UInt64(range.counters.count))
            }
        }
    }

    package static func read(from reader: inout ByteReader) throws(TextDecodingError) -> TextOperation {
        let tagOffset = reader.offset
        let operation: TextOperation
        switch try reader.byte() {
        case insertTag:
            let id = TextID(agent: try reader.agent(), counter: try reader.varint())
            let flagsOffset = reader.offset
            let flags = try reader.byte()
            guard flags & ~3 == 0 else { throw .unknownTag(offset: flagsOffset, tag: flags) }
            let left = flags & 1 == 0 ? nil : TextID(agent: try reader.agent(), counter: try reader.varint())
            let right = flags & 2 == 0 ? nil : TextID(agent: try reader.agent(), counter: try reader.varint())
            let scalars = try reader.scalars(maximum: maximumRunLength)
            operation = .insert(TextInsertion(id: id, originLeft: left, originRight: right, scalars: scalars))
        case deleteTag:
            // Each range takes at least 18 bytes: no more ranges than the bytes can hold.
            let count = try reader.count(maximum: min(maximumRangeCount, reader.remaining / 18))
            var ranges: [TextIDRange] = []
            ranges.reserveCapacity(count)
            for _ in 0..<count {
                let agent = try reader.agent()
                let start = try reader.varint()
                let lengthOffset = reader.offset
                let length = try reader.varint()
                let (end, overflow) = start.addingReportingOverflow(length)
                guard !overflow else { throw .tooLarge(offset: lengthOffset, value: length) }
                ranges.append(TextIDRange(agent: agent, counters: start..<end))
            }
            operation = .delete(ranges)
        case let tag:
            throw .unknownTag(offset: tagOffset, tag: tag)
        }
        do {
            try operation.validate()
        } catch {
            throw .invalidOperation(error)
        }
        return operation
    }
}
