import Testing
import Text
import TestSupport

let alice = Agent.test(1)
let bob = Agent.test(2)
let carol = Agent.test(3)

/// Local edits, concurrent edits between a few replicas, delivery in any order.
@Suite struct TextSequenceTests {
    @Test func localEditsChangeTheText() throws {
        var text = TextSequence()
        try text.insert("hello world", at: 0, by: alice)
        try text.insert(",", at: 5, by: alice)
        #expect(text.text == "hello, world")
        try text.delete(0..<1, by: alice)
        try text.insert("H", at: 0, by: alice)
        #expect(text.text == "Hello, world")
        #expect(text.count == 12)
        try text.insert("é🙂", at: 12, by: alice)
        #expect(text.count == 14)
        #expect(text.text == "Hello, worldé🙂")
    }

    @Test func positionsOutOfRangeThrow() throws {
        var text = TextSequence()
        try text.insert("abc", at: 0, by: alice)
        #expect(throws: TextError.positionOutOfRange(position: 4, count: 3)) { try text.insert("x", at: 4, by: alice) }
        #expect(throws: TextError.self) { try text.insert("x", at: -1, by: alice) }
        #expect(throws: TextError.self) { try text.delete(2..<5, by: alice) }
        #expect(throws: TextError.emptyRun) { try text.insert("", at: 0, by: alice) }
        #expect(try text.delete(1..<1, by: alice).isEmpty)
        #expect(text.text == "abc")
    }

    @Test func typingMakesOneRunPerStretch() throws {
        var text = TextSequence()
        var operations: [TextOperation] = []
        for (index, character) in "typing on".unicodeScalars.enumerated() {
            operations.append(try text.insert(String(character), at: index, by: alice))
        }
        var remote = TextSequence()
        for operation in operations { try remote.apply(operation) }
        #expect(remote.text == "typing on")
        #expect(remote == text)
    }

    /// Every order of delivering `operations` to a replica that starts at `base`.
    func allOrders(of operations: [TextOperation], base: TextSequence) throws -> Set<String> {
        var results: Set<String> = []
        func permute(_ remaining: [TextOperation], _ state: TextSequence) throws {
            if remaining.isEmpty {
                results.insert(state.text)
                return
            }
            for index in remaining.indices {
                var next = state
                try next.apply(remaining[index])
                var rest = remaining
                rest.remove(at: index)
                try permute(rest, next)
            }
        }
        try permute(operations, base)
        return results
    }

    @Test func concurrentInsertsAtOnePlaceDoNotInterleave() throws {
        var base = TextSequence()
        let start = try base.insert("[]", at: 0, by: carol)
        var operations: [TextOperation] = []
        for (agent, word) in [(alice, "aaa"), (bob, "bbb"), (carol, "ccc")] {
            var replica = TextSequence()
            try replica.apply(start)
            // Typed one scalar at a time: runs of single-scalar operations.
            for (index, scalar) in word.unicodeScalars.enumerated() {
                operations.append(try replica.insert(String(scalar), at: 1 + index, by: agent))
            }
        }
        // 9! orders is too many; every order of the three agents' streams, each stream in order,
        // then the fully reversed order (everything pending first).
        var results: Set<String> = []
        for order in [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]] {
            var replica = base
            for agent in order { for operation in operations[(agent * 3)..<(agent * 3 + 3)] { try replica.apply(operation) } }
            results.insert(replica.text)
        }
        var reversed = base
        for operation in operations.reversed() { try reversed.apply(operation) }
        results.insert(reversed.text)
        #expect(results.count == 1)
        let merged = try #require(results.first)
        #expect(merged == "[aaabbbccc]" || merged == "[cccbbbaaa]" || merged.count == 11)
        for word in ["aaa", "bbb", "ccc"] { #expect(merged.contains(word), "\(merged) interleaves \(word)") }
    }

    @Test func twoAgentsTypingAtOnePlaceConvergeInEveryOrder() throws {
        var base = TextSequence()
        let start = try base.insert("xy", at: 0, by: alice)
        var left = TextSequence()
        var right = TextSequence()
        try left.apply(start)
        try right.apply(start)
        let fromAlice = [try left.insert("AB", at: 1, by: alice), try left.insert("C", at: 3, by: alice)]
        let fromBob = [try right.insert("12", at: 1, by: bob), try right.insert("3", at: 3, by: bob)]
        let results = try allOrders(of: fromAlice + fromBob, base: base)
        #expect(results.count == 1)
        let merged = try #require(results.first)
        #expect(merged == "xABC123y" || merged == "x123ABCy")
    }

    @Test func editsInDifferentPlacesBothSurvive() throws {
        var alices = TextSequence()
        let start = try alices.insert("one two three", at: 0, by: alice)
        var bobs = TextSequence()
        try bobs.apply(start)
        let a = try alices.insert("ONE ", at: 0, by: alice)
        let b = try bobs.delete(4..<8, by: bob).first
        let c = try bobs.insert("!", at: 9, by: bob)
        try alices.apply(try #require(b))
        try alices.apply(c)
        try bobs.apply(a)
        #expect(alices.text == "ONE one three!")
        #expect(alices == bobs)
    }

    @Test func insertInsideAConcurrentlyDeletedRangeSurvives() throws {
        var alices = TextSequence()
        let start = try alices.insert("abcdef", at: 0, by: alice)
        var bobs = TextSequence()
        try bobs.apply(start)
        let deletion = try #require(try alices.delete(1..<5, by: alice).first)
        let insertion = try bobs.insert("XY", at: 3, by: bob)
        try alices.apply(insertion)
        try bobs.apply(deletion)
        #expect(alices.text == "aXYf")
        #expect(bobs.text == "aXYf")
        #expect(alices == bobs)
    }

    @Test func operationsWaitForWhatTheyReferTo() throws {
        var source = TextSequence()
        let first = try source.insert("abc", at: 0, by: alice)
        let second = try source.insert("X", at: 2, by: bob)
        let third = try #require(try source.delete(0..<1, by: alice).first)
        var replica = TextSequence()
        #expect(try replica.apply(third) == .pending)
        #expect(try replica.apply(second) == .pending)
        #expect(try replica.apply(second) == .pending)
        #expect(replica.pendingCount == 2)
        #expect(try replica.apply(first) == .applied)
        #expect(replica.pendingCount == 0)
        #expect(replica.text == "bXc")
        #expect(try replica.apply(first) == .alreadyApplied)
        #expect(try replica.apply(third) == .alreadyApplied)
        #expect(replica == source)
    }

    @Test func aReplicaThatReadsItsOldOperationsBackNeverReusesIDs() throws {
        var old = TextSequence()
        let operation = try old.insert("abc", at: 0, by: alice)
        var fresh = TextSequence()
        try fresh.apply(operation)
        #expect(fresh.nextCounter(for: alice) == 3)
        guard case .insert(let insertion) = try fresh.insert("d", at: 3, by: alice) else {
            Issue.record("not an insert")
            return
        }
        #expect(insertion.id.counter == 3)
        // Pending operations count too.
        var waiting = TextSequence()
        let later = try old.insert("z", at: 1, by: alice)
        try waiting.apply(later)
        #expect(waiting.nextCounter(for: alice) == 4)
    }

    @Test func malformedOperationsAreRefused() throws {
        var text = TextSequence()
        let empty = TextOperation.insert(TextInsertion(id: TextID(agent: alice, counter: 0), originLeft: nil, originRight: nil, scalars: []))
        #expect(throws: TextError.emptyRun) { try text.apply(empty) }
        let overflow = TextOperation.insert(TextInsertion(
            id: TextID(agent: alice, counter: .max), originLeft: nil, originRight: nil, scalars: ["a", "b"]))
        #expect(throws: TextError.counterOverflow(TextID(agent: alice, counter: .max))) { try text.apply(overflow) }
        let selfReference = TextOperation.insert(TextInsertion(
            id: TextID(agent: alice, counter: 5), originLeft: TextID(agent: alice, counter: 6), originRight: nil, scalars: ["a", "b"]))
        #expect(throws: TextError.selfReference(TextID(agent: alice, counter: 5))) { try text.apply(selfReference) }
        #expect(throws: TextError.emptyRun) { try text.apply(.delete([])) }
        #expect(throws: TextError.emptyRun) { try text.apply(.delete([TextIDRange(agent: alice, counters: 3..<3)])) }
        #expect(text.pendingCount == 0)
        // The highest counter is fine for a run of one; after it the agent has no counters left.
        let last = TextOperation.insert(TextInsertion(
            id: TextID(agent: alice, counter: .max - 1), originLeft: nil, originRight: nil, scalars: ["z"]))
        try text.apply(last)
        #expect(throws: TextError.countersExhausted(alice)) { try text.insert("q", at: 0, by: alice) }
        #expect(text.text == "z")
    }

    @Test func editsToANewTextAreSmall() throws {
        var text = TextSequence()
        try text.insert("The quick brown fox", at: 0, by: alice)
        let operations = try text.edits(to: "The quick red fox jumps", by: bob)
        #expect(text.text == "The quick red fox jumps")
        #expect(operations.count <= 4)
        #expect(try text.edits(to: "The quick red fox jumps", by: bob).isEmpty)

        var random = SeededGenerator(seed: 7)
        let alphabet = Array("ab c\né🙂".unicodeScalars)
        for _ in 0..<200 {
            var target = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0..<30, using: &random) { target.append(alphabet[Int.random(in: 0..<alphabet.count, using: &random)]) }
            var replica = TextSequence()
            let operations = try text.edits(to: String(target), by: alice)
            #expect(text.text == String(target))
            for operation in operations { try replica.apply(operation) }
            _ = replica
        }
    }

    @Test func editsBetweenHugeUnrelatedTextsDegradeToAReplacement() throws {
        var text = TextSequence()
        var random = SeededGenerator(seed: 11)
        let first = String((0..<50_000).map { _ in Character(Unicode.Scalar(UInt8.random(in: 97...122, using: &random))) })
        let second = String((0..<50_000).map { _ in Character(Unicode.Scalar(UInt8.random(in: 97...122, using: &random))) })
        try text.insert(first, at: 0, by: alice)
        let clock = ContinuousClock()
        let start = clock.now
        let operations = try text.edits(to: second, by: alice)
        #expect(clock.now - start < .seconds(5))
        #expect(text.text == second)
        #expect(operations.count <= 3)
    }

    @Test func versionAndOperationsSinceBringAReplicaUpToDate() throws {
        var source = TextSequence()
        let first = try source.insert("hello", at: 0, by: alice)
        var replica = TextSequence()
        try replica.apply(first)
        try source.insert(" world", at: 5, by: bob)
        try source.delete(0..<1, by: alice)
        try source.insert("J", at: 0, by: alice)
        #expect(source.version.contiguousEnd(for: alice) == 6)
        for operation in source.operations(since: replica.version) { try replica.apply(operation) }
        #expect(replica.text == "Jello world")
        #expect(replica == source)
        #expect(replica.pendingCount == 0)
    }
}

/// Folding a burst of operations into runs.
@Suite struct TextSequenceCoalescingTests {
    @Test func typingFoldsIntoOneInsertAndBackspacesIntoOneDelete() throws {
        var text = TextSequence()
        var operations: [TextOperation] = []
        for (index, scalar) in "hello".unicodeScalars.enumerated() {
            operations.append(try text.insert(String(scalar), at: index, by: alice))
        }
        for position in stride(from: 4, through: 2, by: -1) {
            operations += try text.delete(position..<(position + 1), by: alice)
        }
        let folded = TextOperation.coalesced(operations)
        #expect(folded.count == 2)
        var replica = TextSequence()
        for operation in folded { try replica.apply(operation) }
        #expect(replica.text == "he")
        #expect(replica == text)
    }

    @Test func insertsElsewhereStaySeparate() throws {
        var text = TextSequence()
        let first = try text.insert("ab", at: 0, by: alice)
        let second = try text.insert("c", at: 0, by: alice)
        #expect(TextOperation.coalesced([first, second]).count == 2)
    }
}
