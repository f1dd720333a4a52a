import Foundation
import Testing
import Text
import TestSupport

/// Snapshot format 2: tombstones keep ids, origins and lengths but not their text; format 1
/// (tombstones with text) is still read; hostile bytes give errors, never a crash.
@Suite struct TextSequenceSnapshotTests {
    /// Three writers editing concurrently, exchanging operations in rounds, with deletes that cut
    /// runs into visible and deleted pieces; each replica has everything at the end.
    static func concurrentReplicas(rounds: Int = 12, seed: UInt64 = 7) throws -> [TextSequence] {
        var random = SeededGenerator(seed: seed)
        let writers = [alice, bob, carol]
        var replicas = [TextSequence](repeating: TextSequence(), count: writers.count)
        var log: [TextOperation] = []
        for round in 0..<rounds {
            var made: [TextOperation] = []
            for (index, writer) in writers.enumerated() {
                for step in 0..<4 {
                    let count = replicas[index].count
                    if count > 8, (step + round) % 3 == 0 {
                        let start = Int.random(in: 0..<(count - 4), using: &random)
                        made += try replicas[index].delete(start..<(start + Int.random(in: 1...4, using: &random)), by: writer)
                    } else {
                        let position = Int.random(in: 0...count, using: &random)
                        let words = ["héllo ", "wörld ", "🙂 ", "ab", "x", "typing along "]
                        made.append(try replicas[index].insert(words[(step + round + index) % words.count], at: position, by: writer))
                    }
                }
            }
            log += made
            // Every other round, only some replicas hear of the others.
            for index in replicas.indices where round % 2 == 0 || index == 0 {
                for operation in log { try replicas[index].apply(operation) }
            }
        }
        for index in replicas.indices {
            for operation in log { try replicas[index].apply(operation) }
        }
        return replicas
    }

    @Test func roundTripKeepsIdsOriginsAndTombstonesButNotTheirText() throws {
        let replicas = try Self.concurrentReplicas()
        #expect(replicas.allSatisfy { $0.text == replicas[0].text })
        let state = replicas[0]
        let bytes = state.encoded
        #expect(bytes[4] == 2)
        let decoded = try TextSequence(decoding: bytes)
        #expect(decoded == state)
        #expect(decoded.text == state.text)
        #expect(decoded.version == state.version)
        #expect(decoded.runCount <= state.runCount)
        for agent in [alice, bob, carol] { #expect(decoded.nextCounter(for: agent) == state.nextCounter(for: agent)) }
        #expect(try TextSequence(decoding: decoded.encoded) == state)
        #expect(bytes.count < state.encodedFormat1.count)
    }

    @Test func deletedTextIsNotKept() throws {
        var text = TextSequence()
        try text.insert(String(repeating: "a long paragraph, later deleted. ", count: 2_000), at: 0, by: alice)
        try text.insert("kept", at: 0, by: bob)
        try text.delete(4..<text.count, by: carol)
        let bytes = text.encoded
        #expect(bytes.count < 120)
        let decoded = try TextSequence(decoding: bytes)
        #expect(decoded.text == "kept")
        #expect(decoded == text)
        // An edit next to the tombstones places alike on both.
        var a = text, b = decoded
        let operation = try a.insert("!", at: 4, by: alice)
        try b.apply(operation)
        #expect(a == b)
        #expect(b.text == "kept!")
    }

    @Test func mergeAfterDecodeEqualsMergeOfTheOriginals() throws {
        var shared = TextSequence()
        try shared.insert("the common start of a text", at: 0, by: alice)
        var a = shared, b = shared
        var fromA: [TextOperation] = [], fromB: [TextOperation] = []
        fromA.append(try a.insert("quick ", at: 4, by: alice))
        fromA += try a.delete(11..<17, by: alice)
        fromA.append(try a.insert("!", at: a.count, by: alice))
        fromB += try b.delete(0..<4, by: bob)
        fromB.append(try b.insert("the very ", at: 0, by: bob))
        fromB.append(try b.insert("?", at: 15, by: bob))
        for format in [1, 2] {
            let aDecoded = try TextSequence(decoding: format == 1 ? a.encodedFormat1 : a.encoded)
            let bDecoded = try TextSequence(decoding: format == 1 ? b.encodedFormat1 : b.encoded)
            var original = a, restored = aDecoded
            for operation in fromB {
                try original.apply(operation)
                try restored.apply(operation)
            }
            #expect(restored == original)
            // The other way: b, from bytes, takes what a (from bytes) has that it lacks.
            var other = b, otherRestored = bDecoded
            for operation in aDecoded.operations(since: bDecoded.version) { try otherRestored.apply(operation) }
            for operation in fromA { try other.apply(operation) }
            #expect(otherRestored.text == other.text)
            #expect(otherRestored == other)
            #expect(otherRestored.text == original.text)
        }
    }

    @Test func concurrentWritersMergeAlikeFromSnapshots() throws {
        let replicas = try Self.concurrentReplicas(rounds: 6, seed: 11)
        let later = try Self.concurrentReplicas(rounds: 10, seed: 11)
        // A snapshot of an earlier state catches up with the later one's operations.
        var restored = try TextSequence(decoding: replicas[1].encoded)
        for operation in later[2].operations(since: restored.version) { try restored.apply(operation) }
        var original = replicas[1]
        for operation in later[2].operations(since: original.version) { try original.apply(operation) }
        #expect(restored == original)
        #expect(restored.text == later[2].text)
    }

    @Test func formatOneBytesStillDecode() throws {
        let state = try Self.concurrentReplicas()[1]
        let old = state.encodedFormat1
        #expect(old[4] == 1)
        let decoded = try TextSequence(decoding: old)
        #expect(decoded == state)
        #expect(try TextSequence(decoding: decoded.encoded) == state)
        // Written by hand as builds before format 2 wrote it: "hi" by agent 1, "h" deleted.
        let agent = [UInt8](repeating: 1, count: 16)
        let fixture: [UInt8] = Array("MDTX".utf8) + [1, 1] + agent + [2, 2]
            + [0, 0, 4, 1, 1, 0x68] + [0, 1, 1, 0, 0, 1, 1, 0x69] + [0]
        let read = try TextSequence(decoding: fixture)
        #expect(read.text == "i")
        #expect(read.nextCounter(for: .test(1)) == 2)
        #expect(read.version.contains(TextID(agent: .test(1), counter: 0)))
    }

    @Test func truncatedAndGarbageBytesAreErrors() throws {
        let state = try Self.concurrentReplicas(rounds: 4)
        let bytes = state[0].encoded
        for length in 0..<bytes.count {
            #expect(throws: TextDecodingError.self) { try TextSequence(decoding: Array(bytes[0..<length])) }
        }
        #expect(throws: TextDecodingError.self) { try TextSequence(decoding: bytes + [0]) }
        var random = SeededGenerator(seed: 37)
        var decodedSome = 0
        for round in 0..<20_000 {
            var mutated = bytes
            if round % 5 == 0 {
                mutated = Array("MDTX".utf8) + [2] + (0..<Int.random(in: 0..<48, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            } else {
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    mutated[Int.random(in: 5..<mutated.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            if var decoded = try? TextSequence(decoding: mutated) {
                decodedSome += 1
                _ = try? decoded.insert("x", at: min(3, decoded.count), by: alice)
                _ = try? decoded.delete(0..<min(2, decoded.count), by: bob)
                _ = decoded.text
                _ = decoded.encoded
            }
        }
        #expect(decodedSome > 0)
    }

    @Test func hugeDeletedRunsAreRefusedBeforeAllocation() {
        // Five deleted runs of 2^24 scalars each: 11 bytes a run claiming more than the cap.
        let agent = [UInt8](repeating: 1, count: 16)
        var bytes: [UInt8] = Array("MDTX".utf8) + [2, 1] + agent + [0, 5]
        for _ in 0..<5 { bytes += [0x20 | 0x80 | (bytes.count > 24 ? 0x40 : 0)] + (bytes.count > 24 ? [] : [0]) + [0x80, 0x80, 0x80, 0x08] }
        bytes += [0, 0]
        #expect(throws: TextDecodingError.self) { try TextSequence(decoding: bytes) }
        // A run whose counters pass UInt64.max, and a text shorter than its runs say.
        let overflow: [UInt8] = Array("MDTX".utf8) + [2, 1] + agent + [0, 1, 0x20, 0, 3, 0x7F, 0, 0]
        #expect(throws: TextDecodingError.self) { try TextSequence(decoding: overflow) }
        let shortText: [UInt8] = Array("MDTX".utf8) + [2, 1] + agent + [3, 1, 0x80, 0, 3, 2, 0x61, 0x62, 0]
        #expect(throws: TextDecodingError.self) { try TextSequence(decoding: shortText) }
        let good: [UInt8] = Array("MDTX".utf8) + [2, 1] + agent + [3, 1, 0x80, 0, 3, 3, 0x61, 0x62, 0x63, 0]
        #expect((try? TextSequence(decoding: good))?.text == "abc")
    }

    @Test func traceSnapshotsRoundTrip() throws {
        guard let trace = try Traces.load("sequential/sveltecomponent.json.gz") else {
            print("skipped: ../shared/traces/sequential/sveltecomponent.json.gz is not there")
            return
        }
        var text = TextSequence()
        if !trace.startContent.isEmpty { try text.insert(trace.startContent, at: 0, by: alice) }
        for transaction in trace.transactions {
            for patch in transaction.patches { _ = try EditingTrace.apply(patch, to: &text, by: alice) }
        }
        let bytes = text.encoded
        let decoded = try TextSequence(decoding: bytes)
        #expect(decoded.text == trace.endContent)
        #expect(decoded == text)
        #expect(bytes.count * 2 < text.encodedFormat1.count)
    }
}
