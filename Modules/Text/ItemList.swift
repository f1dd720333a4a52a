/// An id with its agent interned to a small number of one state.
struct LocalID: Equatable {
    var agent: UInt32
    var counter: UInt64

    /// "No origin": the start or the end of the text.
    static let none = LocalID(agent: .max, counter: 0)
    var isNone: Bool { agent == .max }
}

/// A run of scalars inserted together: consecutive counters of one agent, each placed right
/// after the previous one, all with the same right origin, all visible or all deleted.
///
/// An item's content lives in `ItemList.content` at `slot ..< slot + length`. Splitting an item
/// keeps both halves' slots, so the id → slot mapping never changes.
struct Item {
    var agent: UInt32
    var length: UInt32
    var counter: UInt64
    var slot: Int
    /// The first scalar's left origin; later scalars' left origin is the scalar before them.
    var originLeft: LocalID
    var originRight: LocalID
    var deleted: Bool

    var visibleLength: Int { deleted ? 0 : Int(length) }

    func contains(slot other: Int) -> Bool { other >= slot && other - slot < Int(length) }

    /// The id of the scalar `offset` into the run.
    func id(at offset: Int) -> LocalID { LocalID(agent: agent, counter: counter &+ UInt64(offset)) }

    /// Whether `id` is one of the run's own scalars.
    func contains(_ id: LocalID) -> Bool { id.agent == agent && id.counter >= counter && id.counter - counter < UInt64(length) }

    /// Whether `next`, right after this item in text order, continues it as one snapshot run:
    /// the same agent's next counters placed right after it, with its right origin and its
    /// deletion, within the longest run an operation may hold.
    func isContinued(by next: Item) -> Bool {
        agent == next.agent && counter &+ UInt64(length) == next.counter && next.originLeft == id(at: Int(length) - 1)
            && originRight == next.originRight && deleted == next.deleted
            && Int(length) + Int(next.length) <= TextOperation.maximumRunLength
    }
}

/// A leaf of the item list: up to `ItemList.maximumLeafItems` items in text order, with the
/// number of visible scalars they hold, so finding a position skips whole leaves.
struct Leaf {
    var items: [Item] = []
    var visible = 0
}

/// Where an item is: the leaf's place in text order and the item's index in the leaf.
struct Cursor {
    var order: Int
    var index: Int
}

/// A place in text order that compares: before the start < any scalar < after the end.
struct Place: Comparable {
    var order: Int
    var index: Int
    var offset: Int

    static let beforeStart = Place(order: -1, index: 0, offset: 0)
    static let afterEnd = Place(order: .max, index: 0, offset: 0)

    static func < (lhs: Place, rhs: Place) -> Bool {
        (lhs.order, lhs.index, lhs.offset) < (rhs.order, rhs.index, rhs.offset)
    }
}

/// A range of one agent's counters stored at consecutive slots.
struct SlotRun {
    var start: UInt64
    var length: UInt64
    var slot: Int
    var end: UInt64 { start &+ length }
}

/// Every item of a text, tombstones included, in text order, as a two-level list of leaves,
/// plus the indexes that find an id's item without going stale when items or leaves split:
/// id → slot (per agent, sorted runs) and slot → leaf.
///
/// Leaves keep stable numbers (`leaves`); `order` lists them in text order and `orderOf` says
/// where each one is in it. Leaves split when they grow past `maximumLeafItems`; items never
/// go away, so leaves never empty except the first one of an empty text.
struct ItemList {
    static let maximumLeafItems = 64

    var leaves: [Leaf] = [Leaf()]
    var order: [Int32] = [0]
    var orderOf: [Int32] = [0]
    /// Each leaf's `visible`, by its place in `order`, summed by groups of places (a
    /// position's leaf found without walking every leaf before it).
    var visibleSums = VisibleSums(counts: [0])
    /// Every inserted scalar, by slot.
    var content = SlotScalars()
    /// The leaf holding each slot.
    var leafOfSlot = SlotLeaves()
    /// Per interned agent, its runs of counters sorted by start.
    var runs: [[SlotRun]] = []
    var visibleCount = 0
    /// While a caller records (``TextSequence/recordingChanges(_:)``), what changed in the
    /// visible text, in order; nil otherwise.
    var recorded: [TextChange]?

    /// The number of visible scalars before the item at `cursor`.
    func visiblePosition(of cursor: Cursor) -> Int {
        var position = visibleSums.sum(before: cursor.order, counts: visible(at:))
        guard cursor.order < order.count else { return position }
        let items = leaves[Int(order[cursor.order])].items
        for index in 0..<min(cursor.index, items.count) { position += items[index].visibleLength }
        return position
    }

    mutating func recordInsertion(at position: Int, _ scalars: some Collection<Unicode.Scalar>) {
        guard recorded != nil else { return }
        let change = TextChange(position: position, removed: [], inserted: Array(scalars))
        recorded?.append(change)
    }

    // MARK: - Ids

    /// The slot of an id, or nil when the id is not in the text.
    func slot(of id: LocalID) -> Int? {
        guard Int(id.agent) < runs.count else { return nil }
        let list = runs[Int(id.agent)]
        if let last = list.last, id.counter >= last.start {
            return id.counter < last.end ? last.slot + Int(id.counter - last.start) : nil
        }
        var low = 0
        var high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid].start <= id.counter { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return nil }
        let run = list[low - 1]
        return id.counter < run.end ? run.slot + Int(id.counter - run.start) : nil
    }

    func contains(_ id: LocalID) -> Bool { slot(of: id) != nil }

    /// The parts of `counters` of `agent` that are not in the text.
    func missing(agent: UInt32, counters: Range<UInt64>) -> [Range<UInt64>] {
        guard Int(agent) < runs.count else { return [counters] }
        let list = runs[Int(agent)]
        var result: [Range<UInt64>] = []
        var next = counters.lowerBound
        // The first run that ends after the range starts.
        var low = 0
        var high = list.count
        while low < high {
            let mid = (low + high) / 2
            if list[mid].end <= next { low = mid + 1 } else { high = mid }
        }
        for run in list[low...] where run.end > next {
            if run.start >= counters.upperBound { break }
            if run.start > next { result.append(next..<run.start) }
            next = max(next, run.end)
            if next >= counters.upperBound { break }
        }
        if next < counters.upperBound { result.append(next..<counters.upperBound) }
        return result
    }

    /// Records that `agent`'s counters `start ..< start + length` live at `slot ...`.
    mutating func recordRun(agent: UInt32, start: UInt64, length: UInt64, slot: Int) {
        while runs.count <= Int(agent) { runs.append([]) }
        let new = SlotRun(start: start, length: length, slot: slot)
        if let last = runs[Int(agent)].last, start >= last.end {
            if start == last.end, slot == last.slot + Int(last.length) {
                runs[Int(agent)][runs[Int(agent)].count - 1].length += length
            } else {
                runs[Int(agent)].append(new)
            }
            return
        }
        let index = runs[Int(agent)].firstIndex { $0.start > start } ?? runs[Int(agent)].count
        runs[Int(agent)].insert(new, at: index)
    }

    /// The item holding `id` and the id's offset in it.
    func locate(_ id: LocalID) -> (cursor: Cursor, offset: Int)? {
        guard let slot = slot(of: id) else { return nil }
        let leaf = Int(leafOfSlot[slot])
        let items = leaves[leaf].items
        for index in items.indices where items[index].contains(slot: slot) {
            return (Cursor(order: Int(orderOf[leaf]), index: index), slot - items[index].slot)
        }
        return nil
    }

    /// Where `id` is in text order; ids not in the text sort after the end.
    func place(of id: LocalID) -> Place {
        guard !id.isNone, let (cursor, offset) = locate(id) else { return .afterEnd }
        return Place(order: cursor.order, index: cursor.index, offset: offset)
    }

    // MARK: - Walking

    func item(at cursor: Cursor) -> Item { leaves[Int(order[cursor.order])].items[cursor.index] }

    /// Moves a cursor at the end of a leaf to the start of the next non-empty leaf; returns false
    /// at the end of the text.
    func normalize(_ cursor: inout Cursor) -> Bool {
        while cursor.index >= leaves[Int(order[cursor.order])].items.count {
            guard cursor.order + 1 < order.count else { return false }
            cursor = Cursor(order: cursor.order + 1, index: 0)
        }
        return true
    }

    /// The visible scalar at `position` (< `visibleCount`): its item and offset in the item.
    func findVisible(_ position: Int) -> (cursor: Cursor, offset: Int) {
        // The first leaf whose scalars reach past `position` (the last leaf past the end).
        let (before, sum) = visibleSums.places(upTo: position, counts: visible(at:))
        let orderIndex = min(before, order.count - 1)
        var remaining = position - (orderIndex == before ? sum : sum - visible(at: orderIndex))
        let items = leaves[Int(order[orderIndex])].items
        for index in items.indices {
            let visible = items[index].visibleLength
            if remaining < visible { return (Cursor(order: orderIndex, index: index), remaining) }
            remaining -= visible
        }
        return (Cursor(order: orderIndex, index: items.count), 0)
    }

    // MARK: - Changing

    /// Splits the item at `cursor` so that its first `offset` scalars stay and the rest becomes
    /// the next item. The leaf may grow past its limit; `rebalance` fixes that.
    mutating func split(at cursor: Cursor, offset: Int) {
        let leaf = Int(order[cursor.order])
        var first = leaves[leaf].items[cursor.index]
        guard offset > 0, offset < Int(first.length) else { return }
        var second = first
        second.length = first.length - UInt32(offset)
        second.counter = first.counter &+ UInt64(offset)
        second.slot = first.slot + offset
        second.originLeft = first.id(at: offset - 1)
        first.length = UInt32(offset)
        leaves[leaf].items[cursor.index] = first
        leaves[leaf].items.insert(second, at: cursor.index + 1)
    }

    /// Inserts a new item at `cursor` (an item boundary) and appends its content.
    mutating func insert(_ item: Item, scalars: some Collection<Unicode.Scalar>, at cursor: Cursor) {
        if recorded != nil { recordInsertion(at: visiblePosition(of: cursor), scalars) }
        let leaf = Int(order[cursor.order])
        leaves[leaf].items.insert(item, at: cursor.index)
        addVisible(item.visibleLength, to: leaf, at: cursor.order)
        content.append(contentsOf: scalars)
        leafOfSlot.append(scalars.count, in: Int32(leaf))
        recordRun(agent: item.agent, start: item.counter, length: UInt64(item.length), slot: item.slot)
        rebalance(leaf: leaf)
    }

    /// Marks the item at `cursor` deleted.
    mutating func markDeleted(at cursor: Cursor) {
        let leaf = Int(order[cursor.order])
        let length = leaves[leaf].items[cursor.index].visibleLength
        if recorded != nil, length > 0 {
            let item = leaves[leaf].items[cursor.index]
            let change = TextChange(position: visiblePosition(of: cursor), removed: content.scalars(item.slot..<(item.slot + length)), inserted: [])
            recorded?.append(change)
        }
        leaves[leaf].items[cursor.index].deleted = true
        addVisible(-length, to: leaf, at: cursor.order)
    }

    /// Splits `leaf` while it holds more than `maximumLeafItems` items, moving its tail to new
    /// leaves right after it in text order.
    mutating func rebalance(leaf: Int) {
        while leaves[leaf].items.count > Self.maximumLeafItems {
            let keep = Self.maximumLeafItems / 2
            let moved = Array(leaves[leaf].items[keep...])
            leaves[leaf].items.removeSubrange(keep...)
            let visible = moved.reduce(0) { $0 + $1.visibleLength }
            leaves[leaf].visible -= visible
            visibleSums.add(-visible, at: Int(orderOf[leaf]))
            // Fill the new leaf from the end of `leaf`'s overflow, so one pass is enough for
            // the usual case of one item too many.
            let newLeaf = leaves.count
            leaves.append(Leaf(items: moved, visible: visible))
            let position = Int(orderOf[leaf]) + 1
            order.insert(Int32(newLeaf), at: position)
            orderOf.append(Int32(position))
            for index in (position + 1)..<order.count { orderOf[Int(order[index])] = Int32(index) }
            // The leaves and order captured alone: a method of `self` would capture the sums
            // too, and the insert would then copy them.
            visibleSums.insert(visible, at: position) { [leaves, order] in leaves[Int(order[$0])].visible }
            for item in moved { leafOfSlot.set(item.slot..<(item.slot + Int(item.length)), to: Int32(newLeaf)) }
            if leaves[newLeaf].items.count > Self.maximumLeafItems { rebalance(leaf: newLeaf) }
        }
    }

    /// Adds `delta` visible scalars to `leaf`, at `place` in text order (and to the text's).
    @inline(__always)
    mutating func addVisible(_ delta: Int, to leaf: Int, at place: Int) {
        leaves[leaf].visible += delta
        visibleCount += delta
        visibleSums.add(delta, at: place)
    }

    /// The sums made again from every leaf's `visible`, in text order.
    mutating func rebuildVisibleSums() {
        let leaves = leaves
        visibleSums = VisibleSums(counts: order.lazy.map { leaves[Int($0)].visible })
    }

    /// The visible scalars of the leaf at `place` in text order.
    func visible(at place: Int) -> Int { leaves[Int(order[place])].visible }
}
