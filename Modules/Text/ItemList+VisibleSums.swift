/// The visible scalars of the leaves in text order, summed by groups of ``groupSize`` places in
/// ``ItemList/order``: the leaf holding a visible position, and the visible scalars before a
/// leaf, are found by walking the groups and then one group's places, rather than every leaf
/// before it (a tenth of a trace end to end went to those walks).
///
/// A leaf's count changes by ``add(_:at:)`` (one group's sum). A split inserts a place into
/// the order (``insert(_:at:counts:)``): each later group gives its last place to the next,
/// one step a group. A tree of sums would find a leaf in fewer steps but must be made again
/// from the split on, and a remote import of typed text splits a leaf every 32 operations.
///
/// The counts themselves are the leaves' (`counts(place)`), passed in where a walk needs them.
struct VisibleSums: Equatable {
    static let groupSize = 64

    /// The sum of each group of places: `groups[g]` sums places `g * groupSize ..< (g + 1) * groupSize`.
    private(set) var groups: [Int]
    /// How many places it sums.
    private(set) var count: Int

    /// The sums of `counts`, one per place in text order.
    init(counts: some Collection<Int>) {
        groups = []
        groups.reserveCapacity(counts.count / Self.groupSize + 1)
        count = 0
        for value in counts {
            if count % Self.groupSize == 0 { groups.append(0) }
            groups[groups.count - 1] += value
            count += 1
        }
    }

    /// Adds `delta` to the count of `place`.
    @inline(__always)
    mutating func add(_ delta: Int, at place: Int) {
        groups[place / Self.groupSize] += delta
    }

    /// A place of count `value` inserted at `place`; `counts` gives every place's count in the
    /// order after the insertion.
    mutating func insert(_ value: Int, at place: Int, counts: (Int) -> Int) {
        count += 1
        if groups.count * Self.groupSize < count { groups.append(0) }
        var group = place / Self.groupSize
        groups[group] += value
        // Each later group's first place was the last of the group before.
        while (group + 1) * Self.groupSize < count {
            let moved = counts((group + 1) * Self.groupSize)
            groups[group] -= moved
            groups[group + 1] += moved
            group += 1
        }
    }

    /// The sum of the counts of the first `places` places.
    func sum(before places: Int, counts: (Int) -> Int) -> Int {
        let places = min(max(0, places), count)
        let whole = places / Self.groupSize
        var sum = 0
        for group in 0..<whole { sum += groups[group] }
        for place in (whole * Self.groupSize)..<places { sum += counts(place) }
        return sum
    }

    /// The most places from the start whose counts sum to at most `position`, and that sum:
    /// the place after them holds visible scalar `position` (when it is in the text).
    func places(upTo position: Int, counts: (Int) -> Int) -> (places: Int, sum: Int) {
        var sum = 0
        var group = 0
        while group < groups.count, sum + groups[group] <= position {
            sum += groups[group]
            group += 1
        }
        var place = min(group * Self.groupSize, count)
        while place < count {
            let value = counts(place)
            if sum + value > position { break }
            sum += value
            place += 1
        }
        return (place, sum)
    }
}
