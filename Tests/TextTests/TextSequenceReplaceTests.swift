import Testing
import TestSupport
import Text

/// An edit saved at its position (`replace`) makes the operations a peer gets from
/// `operations(replacing:)` and leaves the text those operations leave: over tombstones and
/// other agents' runs, with ids far past the agent's last ones.
@Suite struct TextSequenceReplaceTests {
    private let me = Agent(high: 0xA, low: 1)
    private let peer = Agent(high: 0xB, low: 2)

    /// A text both agents typed into and deleted from, so runs, splits and tombstones mix.
    private func mixedText(using random: inout SeededGenerator) throws -> TextSequence {
        var text = TextSequence()
        for step in 0..<120 {
            let agent = step % 3 == 0 ? peer : me
            if text.count > 4, Int.random(in: 0..<4, using: &random) == 0 {
                let start = Int.random(in: 0..<(text.count - 2), using: &random)
                try text.delete(start..<(start + Int.random(in: 1...2, using: &random)), by: agent)
            } else {
                let word = String(repeating: "abcdefg".randomElement(using: &random) ?? "a", count: Int.random(in: 1...5, using: &random))
                try text.insert(word, at: Int.random(in: 0...text.count, using: &random), by: agent)
            }
        }
        return text
    }

    @Test func replacingMakesTheOperationsAPeerAppliesAndTheSameText() throws {
        var random = SeededGenerator(seed: 0x5EA_7ED)
        for round in 0..<40 {
            let start = try mixedText(using: &random)
            let lower = Int.random(in: 0...start.count, using: &random)
            let range = lower..<Int.random(in: lower...min(start.count, lower + 9), using: &random)
            let length = Int.random(in: 0...(round % 5 == 0 ? 40 : 6), using: &random)
            let scalars = (0..<length).map { _ in "xyzé🎉".unicodeScalars.randomElement(using: &random) ?? "x" }
            let counter = start.nextCounter(for: me) + UInt64.random(in: 0...0xFFFF_FFFF, using: &random)

            let made = try start.operations(replacing: range, with: scalars, by: me, from: counter)
            var viaOperations = start
            let changesViaOperations = try viaOperations.recordingChanges { (text: inout TextSequence) throws(TextError) in
                for operation in made { try text.apply(operation) }
            }
            var replaced = start
            var operations: [TextOperation] = []
            let changes = try replaced.recordingChanges { (text: inout TextSequence) throws(TextError) in
                operations = try text.replace(range, with: scalars, by: me, from: counter)
            }

            #expect(operations == made, "round \(round)")
            #expect(replaced == viaOperations, "round \(round)")
            #expect(replaced.encoded == viaOperations.encoded, "round \(round)")
            #expect(changes == changesViaOperations, "round \(round)")
            #expect(replaced.nextCounter(for: me) == viaOperations.nextCounter(for: me), "round \(round)")
            // A peer that had the start applies them and reads the same text.
            var atPeer = start
            for operation in operations { try atPeer.apply(operation) }
            #expect(atPeer.text == replaced.text, "round \(round)")
        }
    }

    /// A delete from a text only the peer typed, with an operation of a third agent waiting
    /// for an id the text does not have: the same state as the operations' apply.
    @Test func aDeleteAloneAndAWaitingOperationLeaveTheStateApplyLeaves() throws {
        var start = TextSequence()
        try start.insert("peer's words", at: 0, by: peer)
        let waiting = TextOperation.insert(TextInsertion(
            id: TextID(agent: Agent(high: 0xC, low: 3), counter: 5), originLeft: TextID(agent: Agent(high: 0xD, low: 4), counter: 0),
            originRight: nil, scalars: ["w"]))
        #expect(try start.apply(waiting) == .pending)
        for (range, scalars) in [(2..<6, [Unicode.Scalar]()), (0..<0, Array("hi ".unicodeScalars))] {
            let counter = start.nextCounter(for: me) + 1_000
            var viaOperations = start
            for operation in try start.operations(replacing: range, with: scalars, by: me, from: counter) { try viaOperations.apply(operation) }
            var replaced = start
            _ = try replaced.replace(range, with: scalars, by: me, from: counter)
            #expect(replaced == viaOperations)
            #expect(replaced.encoded == viaOperations.encoded)
        }
    }

    @Test func idsTheAgentUsedOrPastTheLastCounterAreRefused() throws {
        var text = TextSequence()
        try text.insert("hello", at: 0, by: me)
        let next = text.nextCounter(for: me)
        #expect(throws: TextError.countersExhausted(me)) { try text.replace(0..<0, with: ["x"], by: me, from: next - 1) }
        #expect(throws: TextError.countersExhausted(me)) { try text.replace(0..<0, with: ["x", "y"], by: me, from: UInt64.max) }
        #expect(throws: TextError.positionOutOfRange(position: 6, count: 5)) { try text.replace(2..<6, with: [], by: me, from: next) }
        #expect(text.text == "hello")
    }
}
