import Testing
import Text
import TestSupport

/// Operations and states to bytes and back; hostile bytes give errors, not crashes.
@Suite struct TextSequenceEncodingTests {
    /// An agent is written as its 16 bytes, high half first, each half big-endian: the bytes
    /// every reader of the container format takes it back from.
    @Test func anAgentIsWrittenAsItsSixteenBytes() throws {
        let agent = Agent(high: 0x0102_0304_0506_0708, low: 0x090A_0B0C_0D0E_0F10)
        var writer = ByteWriter()
        writer.agent(agent)
        #expect(writer.bytes == Array(1...16))
        #expect(writer.bytes == agent.bytes)
        var reader = ByteReader(writer.bytes)
        #expect(try reader.agent() == agent)
    }

    static func sampleOperations() throws -> (TextSequence, [TextOperation]) {
        var text = TextSequence()
        var operations: [TextOperation] = []
        operations.append(try text.insert("héllo 🙂 wörld", at: 0, by: alice))
        operations.append(try text.insert("X", at: 3, by: bob))
        operations.append(try text.insert("end", at: text.count, by: carol))
        operations += try text.delete(2..<7, by: alice)
        let big = TextOperation.insert(TextInsertion(
            id: TextID(agent: bob, counter: .max - 10), originLeft: nil, originRight: TextID(agent: alice, counter: 0), scalars: ["q"]))
        operations.append(big)
        return (text, operations)
    }

    @Test func operationsRoundTrip() throws {
        for operation in try Self.sampleOperations().1 {
            #expect(try TextOperation(decoding: operation.encoded) == operation)
        }
    }

    /// A text longer than the longest run (typed in one go, so its ids are consecutive) replaced
    /// by a small one: the delete is a few ranges of ids, a few dozen bytes, and every operation
    /// the writer makes is one every reader accepts (issue 35: one range of 2·10⁷ ids was made,
    /// and every reader refused it).
    @Test func aDeleteOfMoreThanTheLongestRunIsAFewSmallRangesEveryReaderAccepts() throws {
        var text = TextSequence()
        let long = TextOperation.maximumRunLength + 1000
        let inserts = try text.edits(to: String(repeating: "x", count: long), by: alice)
        #expect(inserts.count == 2)
        let edits = try text.edits(to: "small again", by: alice)
        #expect(text.text == "small again")
        var deleteBytes = 0
        for operation in edits {
            try operation.validate()
            #expect(try TextOperation(decoding: operation.encoded) == operation)
            if case .delete(let ranges) = operation {
                #expect(ranges.allSatisfy { $0.counters.count <= TextOperation.maximumRunLength })
                deleteBytes += operation.encoded.count
            }
        }
        #expect(deleteBytes > 0 && deleteBytes < 100, "\(deleteBytes) bytes")
        // A replica that had the long text ends with the small one.
        var replica = TextSequence()
        for operation in inserts + edits { try replica.apply(operation) }
        #expect(replica.text == "small again")
    }

    @Test func statesRoundTrip() throws {
        var (text, operations) = try Self.sampleOperations()
        // A pending operation travels with the state.
        try text.apply(.insert(TextInsertion(
            id: TextID(agent: carol, counter: 50), originLeft: TextID(agent: carol, counter: 49), originRight: nil, scalars: ["w"])))
        let decoded = try TextSequence(decoding: text.encoded)
        #expect(decoded == text)
        #expect(decoded.text == text.text)
        #expect(decoded.pendingCount == 1)
        #expect(decoded.nextCounter(for: carol) == text.nextCounter(for: carol))
        var edited = decoded
        try edited.insert("more", at: 1, by: alice)
        var replica = TextSequence()
        for operation in operations { try replica.apply(operation) }
        #expect(TextSequence().encoded.count < 16)
        #expect(try TextSequence(decoding: TextSequence().encoded) == TextSequence())
    }

    @Test func typingCompactsToFewRuns() throws {
        var text = TextSequence()
        for (index, scalar) in String(repeating: "typing along ", count: 100).unicodeScalars.enumerated() {
            try text.insert(String(scalar), at: index, by: alice)
        }
        #expect(text.encoded.count < 1_400)
    }

    @Test func truncatedBytesAreErrors() throws {
        let (text, operations) = try Self.sampleOperations()
        for operation in operations {
            let bytes = operation.encoded
            for length in 0..<bytes.count {
                #expect(throws: TextDecodingError.self) { try TextOperation(decoding: Array(bytes[0..<length])) }
            }
            #expect(throws: TextDecodingError.self) { try TextOperation(decoding: bytes + [0]) }
        }
        let bytes = text.encoded
        for length in 0..<bytes.count {
            #expect(throws: TextDecodingError.self) { try TextSequence(decoding: Array(bytes[0..<length])) }
        }
    }

    @Test func randomAndMutatedBytesNeverCrash() throws {
        var random = SeededGenerator(seed: 2024)
        let (text, operations) = try Self.sampleOperations()
        let samples = operations.map(\.encoded) + [text.encoded]
        var decodedSome = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0..<64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                if round % 4 == 0 { bytes = [UInt8(round % 3)] + bytes }
            } else {
                bytes = samples[Int.random(in: 0..<samples.count, using: &random)]
                for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            if let operation = try? TextOperation(decoding: bytes) {
                decodedSome += 1
                var state = text
                _ = try? state.apply(operation)
            }
            if let state = try? TextSequence(decoding: bytes) {
                decodedSome += 1
                var copy = state
                _ = try? copy.insert("x", at: 0, by: alice)
                _ = copy.text
            }
        }
        #expect(decodedSome > 0)
    }

    @Test func hugeClaimedLengthsAreRefusedQuickly() {
        // An insert claiming 2^40 scalars, and a state claiming 2^60 agents.
        var insert: [UInt8] = [1] + [UInt8](repeating: 7, count: 16) + [0, 0]
        insert += [0x80, 0x80, 0x80, 0x80, 0x80, 0x20]
        #expect(throws: TextDecodingError.self) { try TextOperation(decoding: insert) }
        let state: [UInt8] = Array("MDTX".utf8) + [1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]
        #expect(throws: TextDecodingError.self) { try TextSequence(decoding: state) }
        let overlong: [UInt8] = [2] + [UInt8](repeating: 0xFF, count: 11)
        #expect(throws: TextDecodingError.self) { try TextOperation(decoding: overlong) }
    }
}
