import Testing
import Text
import TestSupport

/// Replicas editing at random and exchanging operations in random orders, with duplicates.
@Suite struct TextSequenceFuzzTests {
    static let alphabet = Array("abcdefgh é🙂\n".unicodeScalars)

    /// One random local edit on `replica`; the operations it made.
    static func randomEdit(_ replica: inout TextSequence, by agent: Agent, using random: inout SeededGenerator) throws -> [TextOperation] {
        let count = replica.count
        if count > 0, Int.random(in: 0..<3, using: &random) == 0 {
            let start = Int.random(in: 0..<count, using: &random)
            let end = min(count, start + Int.random(in: 1...4, using: &random))
            return try replica.delete(start..<end, by: agent)
        }
        if Int.random(in: 0..<8, using: &random) == 0 {
            var target = Array(replica.text.unicodeScalars)
            let at = Int.random(in: 0...target.count, using: &random)
            target.insert(alphabet[Int.random(in: 0..<alphabet.count, using: &random)], at: at)
            var view = String.UnicodeScalarView()
            view.append(contentsOf: target)
            return try replica.edits(to: String(view), by: agent)
        }
        var word = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 1...3, using: &random) { word.append(alphabet[Int.random(in: 0..<alphabet.count, using: &random)]) }
        return [try replica.insert(String(word), at: Int.random(in: 0...count, using: &random), by: agent)]
    }

    /// `rounds` random edits, each by a random replica, added to `log`; after about one in
    /// `hearingOneIn`, a random replica hears a random sample of the log, its first `repeating`
    /// operations twice, shuffled.
    static func editAndHear(
        _ replicas: inout [TextSequence], by agents: [Agent], rounds: Int, hearingOneIn: Int, repeating: Int,
        log: inout [TextOperation], using random: inout SeededGenerator
    ) throws {
        for _ in 0..<rounds {
            let who = Int.random(in: 0..<agents.count, using: &random)
            log += try randomEdit(&replicas[who], by: agents[who], using: &random)
            if Int.random(in: 0..<hearingOneIn, using: &random) == 0 {
                let listener = Int.random(in: 0..<agents.count, using: &random)
                var heard = log.filter { _ in Bool.random(using: &random) }
                heard += heard.prefix(repeating)
                heard.shuffle(using: &random)
                for operation in heard { try replicas[listener].apply(operation) }
            }
        }
    }

    @Test(arguments: Array(1...24) as [UInt64])
    func replicasConvergeWhateverTheDeliveryOrder(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let agents = (1...3).map { Agent.test(UInt8($0)) }
        var replicas = [TextSequence](repeating: TextSequence(), count: agents.count)
        var log: [TextOperation] = []
        try Self.editAndHear(&replicas, by: agents, rounds: 150, hearingOneIn: 4, repeating: 3, log: &log, using: &random)
        for index in replicas.indices {
            var all = log + log.prefix(5)
            all.shuffle(using: &random)
            for operation in all { try replicas[index].apply(operation) }
            #expect(replicas[index].pendingCount == 0)
        }
        var replay = TextSequence()
        for operation in log { try replay.apply(operation) }
        for replica in replicas {
            #expect(replica.text == replay.text)
            #expect(replica == replay)
        }
        // The snapshot of a converged state reads back equal.
        let decoded = try TextSequence(decoding: replay.encoded)
        #expect(decoded == replay)
        #expect(decoded.text == replay.text)
    }

    /// A long text pasted in one run (many pages of the slot → leaf map, each whole) and
    /// read back from its snapshot, then edited everywhere by three replicas: splits and new
    /// leaves turn pages mixed, and every replica still finds every id.
    @Test(arguments: [5, 6, 7] as [UInt64])
    func aLongPastedTextEditedEverywhereConverges(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let agents = (1...3).map { Agent.test(UInt8($0)) }
        var pasted = TextSequence()
        let line = "The quick brown fox jumps over the lazy dog; é🙂\n"
        let paste = try pasted.insert(String(repeating: line, count: 60), at: 0, by: .test(9))
        var replicas = [pasted, try TextSequence(decoding: pasted.encoded), try TextSequence(decoding: pasted.encoded)]
        var log: [TextOperation] = [paste]
        try Self.editAndHear(&replicas, by: agents, rounds: 400, hearingOneIn: 6, repeating: 0, log: &log, using: &random)
        var replay = TextSequence()
        for operation in log { try replay.apply(operation) }
        #expect(replay.runCount > 2 * 64, "enough runs for leaves to split")
        for index in replicas.indices {
            var all = log
            all.shuffle(using: &random)
            for operation in all { try replicas[index].apply(operation) }
            #expect(replicas[index].pendingCount == 0)
            #expect(replicas[index].text == replay.text)
            #expect(replicas[index] == replay)
        }
        let decoded = try TextSequence(decoding: replay.encoded)
        #expect(decoded == replay)
        // The decoded state finds ids in every page: deleting everything names every run.
        var emptied = replay
        let deletions = try emptied.delete(0..<emptied.count, by: .test(4))
        var other = decoded
        for operation in deletions { try other.apply(operation) }
        #expect(other.text.isEmpty)
        #expect(other.pendingCount == 0)
    }

    @Test func concurrentTypingAtOnePlaceKeepsEachRunWhole() throws {
        var random = SeededGenerator(seed: 99)
        for _ in 0..<30 {
            var base = TextSequence()
            let start = try base.insert("<>", at: 0, by: .test(9))
            var operations: [[TextOperation]] = []
            let words = ["aaaa", "bbbb", "cccc"]
            for (index, word) in words.enumerated() {
                var replica = TextSequence()
                try replica.apply(start)
                var typed: [TextOperation] = []
                for (offset, scalar) in word.unicodeScalars.enumerated() {
                    typed.append(try replica.insert(String(scalar), at: 1 + offset, by: .test(UInt8(index + 1))))
                }
                operations.append(typed)
            }
            var all = operations.flatMap { $0 }
            all.shuffle(using: &random)
            var replica = base
            for operation in all { try replica.apply(operation) }
            for word in words { #expect(replica.text.contains(word), "\(replica.text)") }
        }
    }
}
