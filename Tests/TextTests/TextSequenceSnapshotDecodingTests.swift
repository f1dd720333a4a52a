import Testing
import Text
import TestSupport

/// The format 2 reader's fast paths: many runs per agent out of counter order (the radix
/// sort), runs of every length, ASCII and not, visible and deleted (the text written sixteen
/// scalars at a time).
@Suite struct TextSequenceSnapshotDecodingTests {
    /// Random typing and deleting by two writers at random places: thousands of short runs per
    /// agent whose counters are not in text order.
    static func scattered(edits: Int, seed: UInt64) throws -> TextSequence {
        var random = SeededGenerator(seed: seed)
        var text = TextSequence()
        let words = ["a", "bc", "déf", "ghij", "🙂", "klmnopqrstuvwxyz0123", "ü", "a long run of ascii text, longer than sixteen"]
        for step in 0..<edits {
            let writer = step % 5 == 0 ? bob : alice
            let count = text.count
            if count > 20, Int.random(in: 0..<3, using: &random) == 0 {
                let start = Int.random(in: 0..<(count - 1), using: &random)
                let length = Int.random(in: 1...min(40, count - start), using: &random)
                try text.delete(start..<(start + length), by: writer)
            } else {
                let word = words[Int.random(in: 0..<words.count, using: &random)]
                try text.insert(word, at: Int.random(in: 0...count, using: &random), by: writer)
            }
        }
        return text
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func manyScatteredRunsRoundTrip(seed: UInt64) throws {
        let state = try Self.scattered(edits: 1_500, seed: seed)
        #expect(state.runCount > 600)
        let decoded = try TextSequence(decoding: state.encoded)
        #expect(decoded == state)
        #expect(decoded.text == state.text)
        #expect(decoded.version == state.version)
        for agent in [alice, bob] { #expect(decoded.nextCounter(for: agent) == state.nextCounter(for: agent)) }
        // The decoded state edits and merges like the original.
        var a = state, b = decoded
        let position = state.count / 2
        let fromA = try a.insert("ζ mid", at: position, by: carol)
        let fromB = try b.delete(0..<min(7, b.count), by: bob)
        for operation in fromB { try a.apply(operation) }
        try b.apply(fromA)
        #expect(a.text == b.text)
        #expect(try TextSequence(decoding: b.encoded) == b)
    }

    @Test func everyTruncationOfAScatteredStateIsAnError() throws {
        let bytes = try Self.scattered(edits: 300, seed: 9).encoded
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 400)) {
            #expect(throws: TextDecodingError.self) { try TextSequence(decoding: Array(bytes[0..<length])) }
        }
    }

    @Test func corruptedBytesNeverCrash() throws {
        let bytes = try Self.scattered(edits: 300, seed: 11).encoded
        var random = SeededGenerator(seed: 5)
        for _ in 0..<2_000 {
            var corrupted = bytes
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                corrupted[Int.random(in: 5..<corrupted.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            if let state = try? TextSequence(decoding: corrupted) { _ = state.text }
        }
    }
}
