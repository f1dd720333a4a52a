import Testing
import Text
import TestSupport

/// The format 2 reader's fast paths: many runs per agent out of counter order (the radix
/// sort), runs of every length, ASCII and not, visible and deleted (the text written sixteen
/// scalars at a time).
@Suite struct TextSequenceSnapshotDecodingTests {
    /// Random typing and deleting by two writers at random places: thousands of short runs per
    /// agent whose counters are not in text order.
    static func scattered(edits: Int, seed: UInt64, words: [String] = mixedWords) throws -> TextSequence {
        var random = SeededGenerator(seed: seed)
        var text = TextSequence()
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

    static let mixedWords = ["a", "bc", "déf", "ghij", "🙂", "klmnopqrstuvwxyz0123", "ü", "a long run of ascii text, longer than sixteen"]
    static let asciiWords = ["a", "bc", "def", "ghij", "klmnopqrstuvwxyz0123", "a long run of ascii text, longer than sixteen"]

    /// An ASCII text is held a byte a scalar, its deleted scalars (whose text a snapshot drops)
    /// included: it decodes equal and a quarter of the size a text that is not ASCII takes, edits
    /// and merges the same, grows to four bytes a scalar when a scalar that is not ASCII
    /// arrives, and loads a byte a scalar again once that scalar is deleted.
    @Test(arguments: [4, 5] as [UInt64])
    func anASCIITextIsHeldAByteAScalarUntilOneIsNot(seed: UInt64) throws {
        let state = try Self.scattered(edits: 1_500, seed: seed, words: Self.asciiWords)
        let decoded = try TextSequence(decoding: state.encoded)
        #expect(decoded == state)
        #expect(decoded.text == state.text)
        #expect(decoded.version == state.version)
        let narrow = decoded.estimatedByteSize

        // A peer that never saw the deleted text gets the decoded state's operations (deleted
        // scalars as the placeholder, deleted again) and ends with the same text.
        var fresh = TextSequence()
        for operation in decoded.operations(since: TextVersion()) { try fresh.apply(operation) }
        #expect(fresh.text == state.text)

        var a = state, b = decoded
        let wide = try b.insert("é🙂", at: b.count / 3, by: carol)
        let ascii = try a.insert("plain", at: a.count / 2, by: alice)
        try a.apply(wide)
        try b.apply(ascii)
        #expect(a.text == b.text)
        #expect(b.text.contains("é🙂"))
        #expect(b.estimatedByteSize - narrow >= 3 * decoded.count, "a wide store takes four bytes a slot")
        let reloaded = try TextSequence(decoding: b.encoded)
        #expect(reloaded == b)
        #expect(reloaded.text == a.text)

        var c = reloaded
        let at = try #require(c.text.unicodeScalars.firstIndex(of: "é"))
        let position = c.text.unicodeScalars.distance(from: c.text.unicodeScalars.startIndex, to: at)
        try c.delete(position..<(position + 2), by: bob)
        let narrowAgain = try TextSequence(decoding: c.encoded)
        #expect(narrowAgain.text == c.text)
        #expect(narrowAgain.estimatedByteSize <= reloaded.estimatedByteSize - 3 * c.count)
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

    /// Format 2 bytes by hand: one agent whose next counter is `next`, then `runs` and `text`.
    static func format2(next: UInt8, runs: [[UInt8]], text: String) -> [UInt8] {
        var bytes = Array("MDTX".utf8) + [2, 1] + [UInt8](repeating: 7, count: 16) + [next]
        var count = runs.count
        repeat {
            bytes.append(UInt8(count & 0x7F) | (count >= 0x80 ? 0x80 : 0))
            count >>= 7
        } while count > 0
        for run in runs { bytes += run }
        return bytes + [UInt8(text.utf8.count)] + Array(text.utf8) + [0]
    }

    /// Hundreds of runs of one agent that all claim counter 0 (the radix sort's span is zero
    /// bits): an id twice, said as such, not a crash.
    @Test func manyRunsAtOneCounterAreAnIdTwice() {
        // The first: deleted, counter 0, length 1; each next: deleted, the same agent, counter
        // back to 0 (zigzag -1), length 1.
        let bytes = Self.format2(next: 1, runs: [[0xA0, 0x00, 0x01]] + Array(repeating: [0x60, 0x01, 0x01], count: 299), text: "")
        let error = #expect(throws: TextDecodingError.self) { try TextSequence(decoding: bytes) }
        #expect(error?.description.contains("appears twice") == true, "\(String(describing: error))")
    }

    /// A run whose right origin is one of its own scalars: refused, as peers would refuse the
    /// operations made from it.
    @Test func aRunWithItsOwnScalarAsAnOriginIsRefused() throws {
        // Counter 0, a right origin of the same agent at delta 0 (its own first scalar), length 2.
        let bytes = Self.format2(next: 2, runs: [[0x90, 0x00, 0x00, 0x02]], text: "ab")
        let error = #expect(throws: TextDecodingError.self) { try TextSequence(decoding: bytes) }
        #expect(error?.description.contains("as an origin") == true, "\(String(describing: error))")
        // The same run without the origin reads.
        #expect(try TextSequence(decoding: Self.format2(next: 2, runs: [[0x80, 0x00, 0x02]], text: "ab")).text == "ab")
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
