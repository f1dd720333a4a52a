import Testing
import TestSupport
@testable import Text

/// The leaves' visible sums against a plain array of counts: sums before a place, the place
/// that holds a position, after adds and after places inserted anywhere (a leaf split).
@Suite struct VisibleSumsTests {
    static func placeHolding(_ position: Int, in counts: [Int]) -> (places: Int, sum: Int) {
        var sum = 0
        for (place, count) in counts.enumerated() {
            if sum + count > position { return (place, sum) }
            sum += count
        }
        return (counts.count, sum)
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func sumsFollowAddsAndInsertedPlaces(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var counts = (0..<Int.random(in: 1...5, using: &random)).map { _ in Int.random(in: 0...9, using: &random) }
        var sums = VisibleSums(counts: counts)
        // Enough places for many groups.
        for _ in 0..<3_000 {
            if Int.random(in: 0..<4, using: &random) == 0 {
                // A place inserted (a leaf split): the one before it gives some of its count.
                let place = Int.random(in: 0..<counts.count, using: &random)
                let moved = Int.random(in: 0...counts[place], using: &random)
                counts[place] -= moved
                sums.add(-moved, at: place)
                counts.insert(moved, at: place + 1)
                sums.insert(moved, at: place + 1) { counts[$0] }
            } else {
                let place = Int.random(in: 0..<counts.count, using: &random)
                let delta = Int.random(in: -counts[place]...9, using: &random)
                counts[place] += delta
                sums.add(delta, at: place)
            }
            #expect(sums.count == counts.count)
            #expect(sums == VisibleSums(counts: counts), "kept up to date, the sums are those made from the counts")
            let total = counts.reduce(0, +)
            for _ in 0..<8 {
                let place = Int.random(in: 0...counts.count, using: &random)
                #expect(sums.sum(before: place, counts: { counts[$0] }) == counts[..<place].reduce(0, +))
                let position = Int.random(in: 0...(total + 2), using: &random)
                let found = sums.places(upTo: position, counts: { counts[$0] })
                #expect(found == Self.placeHolding(position, in: counts), "position \(position) of \(counts)")
            }
        }
    }
}
