import Testing
import TestSupport
@testable import Text

/// Many changes spliced through the gap buffer give the text a plain array edit gives, change
/// by change: near each other (typing), far apart, growing past the gap it started with, ASCII
/// and not; and a change that does not fit the text is refused with nothing changed.
@Suite struct GapBufferTests {
    private static let alphabets: [[Unicode.Scalar]] = [
        Array("abcdefgh ".unicodeScalars),
        Array("aé🎉\u{301}z ".unicodeScalars),
    ]

    /// Random changes, each within the text as the ones before left it: mostly next to the
    /// last one, as typing makes them, sometimes anywhere.
    private static func changes(from start: [Unicode.Scalar], alphabet: [Unicode.Scalar], count: Int, using random: inout SeededGenerator) -> [TextChange] {
        var text = start
        var place = 0
        var made: [TextChange] = []
        for _ in 0..<count {
            if Int.random(in: 0..<8, using: &random) == 0 { place = Int.random(in: 0...text.count, using: &random) }
            place = min(max(0, place + Int.random(in: -2...2, using: &random)), text.count)
            let removing = Int.random(in: 0...min(3, text.count - place), using: &random)
            let inserting = (0..<Int.random(in: 0...(removing == 0 ? 40 : 3), using: &random)).map { _ in
                alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
            }
            let removed = Array(text[place..<(place + removing)])
            text.replaceSubrange(place..<(place + removing), with: inserting)
            made.append(TextChange(position: place, removed: removed, inserted: inserting))
            place += inserting.count
        }
        return made
    }

    private static func string(_ scalars: [Unicode.Scalar]) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }

    @Test(arguments: 0..<2)
    func manyChangesMakeWhatAPlainArrayEditMakes(alphabetIndex: Int) {
        var random = SeededGenerator(seed: 0x6A9_B0FF + UInt64(alphabetIndex))
        let alphabet = Self.alphabets[alphabetIndex]
        for round in 0..<60 {
            let start = (0..<Int.random(in: 0...200, using: &random)).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &random)] }
            let changes = Self.changes(from: start, alphabet: alphabet, count: Int.random(in: 2...80, using: &random), using: &random)
            var expected = start
            for change in changes {
                expected.replaceSubrange(change.position..<(change.position + change.removed.count), with: change.inserted)
            }
            let spliced = TextChange.applying(changes, to: Self.string(start), count: start.count)
            #expect(spliced == Self.string(expected), "round \(round)")
        }
    }

    /// A gap smaller than what is inserted widens; the parts around it stay in order.
    @Test func theGapWidensWhenInsertionsOutgrowIt() {
        var buffer = GapBuffer(Array("0123456789".utf8), gap: 0, at: 5, filler: 0)
        var expected = Array("0123456789".utf8)
        for step in 0..<50 {
            let position = (step * 7) % (expected.count + 1)
            let inserted = Array(String(repeating: "x", count: step % 37).utf8)
            let replaced = buffer.replace(at: position, removing: [UInt8](), by: ==, inserting: inserted)
            #expect(replaced)
            expected.insert(contentsOf: inserted, at: position)
        }
        #expect(buffer.count == expected.count)
        #expect(buffer.withParts { Array($0) + Array($1) } == expected)
    }

    @Test func aChangeThatDoesNotFitLeavesTheBufferAsItWas() {
        var buffer = GapBuffer(Array("abcdef".utf8), gap: 4, at: 2, filler: 0)
        let refused = [
            buffer.replace(at: 5, removing: Array("fg".utf8), by: ==, inserting: [UInt8]()),
            buffer.replace(at: 1, removing: Array("xc".utf8), by: ==, inserting: Array("q".utf8)),
            buffer.replace(at: -1, removing: [UInt8](), by: ==, inserting: Array("q".utf8)),
            buffer.replace(at: Int.max, removing: Array("ab".utf8), by: ==, inserting: [UInt8]()),
        ]
        #expect(refused == [false, false, false, false])
        #expect(buffer.withParts { Array($0) + Array($1) } == Array("abcdef".utf8))
        let appended = buffer.replace(at: 6, removing: [UInt8](), by: ==, inserting: Array("!".utf8))
        #expect(appended)
        #expect(buffer.withParts { Array($0) + Array($1) } == Array("abcdef!".utf8))
    }
}
