import Testing
import Text

@Suite struct TextMergeTests {
    @Test func nobodyElseChangedIt() {
        #expect(TextMerge.merge(original: "a", mine: "a b", current: "a") == ("a b", .mine))
    }

    @Test func aPeersPingWhileITypeIsKept() {
        #expect(TextMerge.merge(original: "Doc", mine: "Doc my note", current: "Doc B pings") == ("Doc B pings my note", .keptBoth))
        #expect(TextMerge.merge(original: "Doc end", mine: "Dec end", current: "Doc end B pings") == ("Dec end B pings", .mergedWithPeer))
    }

    @Test func editsOfDifferentPartsAreBothKept() {
        #expect(TextMerge.merge(original: "one two three", mine: "one 2 three", current: "1 two three") == ("1 2 three", .mergedWithPeer))
        #expect(TextMerge.merge(original: "The quick brown fox", mine: "The quick red fox", current: "A quick brown fox") == ("A quick red fox", .mergedWithPeer))
    }

    @Test func editsOfTheSamePartKeepBothVersionsTheirsFirst() {
        #expect(TextMerge.merge(original: "say hello", mine: "say bonjour", current: "say hola") == ("say holabonjour", .keptBoth))
    }

    @Test func savingTheSameTextAsThePeerIsNotAConflict() {
        #expect(TextMerge.merge(original: "x", mine: "x y", current: "x y") == ("x y", .mine))
        #expect(TextMerge.merge(original: "x z", mine: "x y z!", current: "x y z") == ("x y z!", .mergedWithPeer))
    }

    @Test func onlyThePeerChangedIt() {
        #expect(TextMerge.merge(original: "a", mine: "a", current: "b") == ("b", .mergedWithPeer))
    }
}
