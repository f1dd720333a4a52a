/// The visible scalars of each leaf in text order, summed as a Fenwick tree over the places in
/// ``ItemList/order``: the leaf holding a visible position, and the visible scalars before a
/// leaf, are found in log time rather than by walking every leaf before it (a quarter of a
/// long text's save went to those walks).
///
/// A leaf's count changes by ``add(_:at:)``; a split, which inserts a place into the order,
/// makes the entries from its place on again (``rebuild(from:count:counts:)``), as it
/// renumbers the places after it anyway.
struct VisibleSums: Equatable {
    /// 1-based: `tree[i]` sums the counts of the places `i - lowbit(i) ..< i`.
    private var tree: [Int]

    /// The sums of `counts`, one per place in text order.
    init(counts: some Collection<Int>) {
        tree = [0]
        tree.reserveCapacity(counts.count + 1)
        tree.append(contentsOf: counts)
        let count = tree.count - 1
        var index = 1
        while index <= count {
            let parent = index + (index & -index)
            if parent <= count { tree[parent] += tree[index] }
            index += 1
        }
    }

    /// Makes the sums right again for `count` places after the counts from place `place` on
    /// changed (a place inserted or removed there): the entries that sum only earlier places
    /// are kept, so a split near the end of the text costs what is after it.
    mutating func rebuild(from place: Int, count: Int, counts: (Int) -> Int) {
        let place = min(max(0, place), self.count, count)
        tree.removeSubrange((place + 1)...)
        tree.reserveCapacity(count + 1)
        for later in place..<count { tree.append(counts(later)) }
        // The kept entries whose parents are remade: those that sum the first `place` places.
        var index = place
        while index > 0 {
            let parent = index + (index & -index)
            if parent <= count { tree[parent] += tree[index] }
            index -= index & -index
        }
        index = place + 1
        while index <= count {
            let parent = index + (index & -index)
            if parent <= count { tree[parent] += tree[index] }
            index += 1
        }
    }

    /// How many places it sums.
    var count: Int { tree.count - 1 }

    /// Adds `delta` to the count of `place`.
    mutating func add(_ delta: Int, at place: Int) {
        var index = place + 1
        while index < tree.count {
            tree[index] += delta
            index += index & -index
        }
    }

    /// The sum of the counts of the first `places` places.
    func sum(before places: Int) -> Int {
        var index = min(places, count)
        var sum = 0
        while index > 0 {
            sum += tree[index]
            index -= index & -index
        }
        return sum
    }

    /// The most places from the start whose counts sum to at most `position`, and that sum:
    /// the place after them holds visible scalar `position` (when it is in the text).
    func places(upTo position: Int) -> (places: Int, sum: Int) {
        var places = 0, sum = 0
        var step = 1
        while step * 2 <= count { step *= 2 }
        while step > 0 {
            let next = places + step
            if next <= count, sum + tree[next] <= position {
                places = next
                sum += tree[next]
            }
            step /= 2
        }
        return (places, sum)
    }
}
