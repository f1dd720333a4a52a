import Model
import Testing

@Suite struct TextMergeTests {
    @Test func nobodyElseChangedIt() {
        #expect(TextMerge.merge(original: "a", mine: "a b", current: "a") == ("a b", .mine))
    }

    @Test func aPeersPingWhileITypeIsKept() {
        #expect(TextMerge.merge(original: "Doc", mine: "Doc my note", current: "Doc B pings") == ("Doc B pings my note", .mergedWithPeer))
        #expect(TextMerge.merge(original: "Doc end", mine: "Dec end", current: "Doc end B pings") == ("Dec end B pings", .mergedWithPeer))
    }

    @Test func anythingElseIsLastWriterWinsAndSaysSo() {
        #expect(TextMerge.merge(original: "one two", mine: "one 2", current: "1 two") == ("one 2", .replacedPeerEdit))
    }

    @Test func savingTheSameTextAsThePeerIsNotAConflict() {
        #expect(TextMerge.merge(original: "x", mine: "x y", current: "x y") == ("x y", .mine))
    }
}
