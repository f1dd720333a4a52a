import Testing
import Text

/// What a save's changes make of the visible text kept beside a sequence: the same text the
/// sequence shows, one change or many, ASCII or not.
@Suite struct TextChangeTests {
    private func scalars(_ text: String) -> [Unicode.Scalar] { Array(text.unicodeScalars) }

    @Test(arguments: ["hello world", "héllo wörld 🎉"])
    func changesInOrderMakeTheTextTheSequenceShows(start: String) throws {
        var sequence = TextSequence()
        let agent = Agent(high: 1, low: 2)
        _ = try sequence.insert(start, at: 0, by: agent)
        let changes = try sequence.recordingChanges { (text: inout TextSequence) throws(TextError) in
            _ = try text.insert("X", at: 0, by: agent)
            _ = try text.delete(3..<5, by: agent)
            _ = try text.insert("ünï", at: 4, by: agent)
            _ = try text.insert("!", at: text.count, by: agent)
        }
        let count = start.unicodeScalars.count
        #expect(TextChange.applying(changes, to: start, count: count) == sequence.text)
        #expect(TextChange.applying(Array(changes.prefix(1)), to: start, count: count) == "X" + start)
        #expect(TextChange.applying([], to: start, count: count) == start)
    }

    @Test func aChangeThatDoesNotFitTheTextIsRefused() {
        let past = TextChange(position: 5, removed: scalars("abc"), inserted: [])
        let wrong = TextChange(position: 0, removed: scalars("zz"), inserted: scalars("y"))
        let fine = TextChange(position: 0, removed: [], inserted: scalars("q"))
        #expect(TextChange.applying([past], to: "abcdef", count: 6) == nil)
        #expect(TextChange.applying([fine, wrong], to: "abcdef", count: 6) == nil)
        #expect(TextChange.applying([fine, past], to: "abcdéf", count: 6) == nil)
    }

    /// One change spliced anywhere, inside a grapheme cluster too (between a letter and its
    /// combining accent, or the parts of a flag), gives the scalars a plain array edit gives.
    @Test func oneChangeSplicesAtAnyScalar() {
        let texts = ["e\u{301}x", "🇫🇷🇩🇪", "ab\u{301}\u{302}c", "plain ascii text"]
        let insertions = [scalars(""), scalars("Z"), scalars("\u{301}"), scalars("ü🎉")]
        for text in texts {
            let all = scalars(text)
            for position in 0...all.count {
                for length in 0...min(2, all.count - position) {
                    for inserted in insertions {
                        let removed = Array(all[position..<(position + length)])
                        let change = TextChange(position: position, removed: removed, inserted: inserted)
                        var expected = all
                        expected.replaceSubrange(position..<(position + length), with: inserted)
                        let spliced = TextChange.applying([change], to: text, count: all.count)
                        #expect(spliced.map(scalars) == expected, "\(text) at \(position), \(length) removed")
                    }
                }
            }
        }
    }
}
