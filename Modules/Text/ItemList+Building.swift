/// Building an item list in one pass from items in text order whose slots are consecutive (a
/// decoded snapshot): leaves filled as the items arrive, the id → slot runs sorted by a radix
/// sort rather than a comparison sort, slot → leaf filled a leaf at a time.
struct ItemListBuilder {
    /// Leaves are filled three quarters full, so the first edits do not split them.
    static let perLeaf = ItemList.maximumLeafItems * 3 / 4

    private(set) var leaves: [Leaf] = []
    private var current: [Item] = []
    private var currentVisible = 0
    private var visibleCount = 0
    /// Every agent's runs in the order they were met, with their agents; merged into one
    /// another while an agent's run continues its last one.
    private var runs: [SlotRun] = []
    private var runAgents: [UInt32] = []
    /// Per agent: the index in `runs` of its last run (-1 for none), its number of runs, and
    /// whether its runs came sorted by start.
    private var lastRun: [Int]
    private var runCounts: [Int]
    private var sorted: [Bool]

    init(agentCount: Int, itemCount: Int) {
        leaves.reserveCapacity(itemCount / Self.perLeaf + 1)
        current.reserveCapacity(Self.perLeaf)
        runs.reserveCapacity(itemCount)
        if agentCount > 1 { runAgents.reserveCapacity(itemCount) }
        lastRun = [Int](repeating: -1, count: agentCount)
        runCounts = [Int](repeating: 0, count: agentCount)
        sorted = [Bool](repeating: true, count: agentCount)
    }

    /// Appends the next item in text order; its slot follows the previous item's last one and
    /// its agent is below `agentCount`.
    @inline(__always)
    mutating func append(_ item: Item) {
        current.append(item)
        currentVisible += item.visibleLength
        if current.count == Self.perLeaf { closeLeaf() }
        let agent = Int(item.agent)
        let lastIndex = lastRun[agent]
        if lastIndex >= 0 {
            let last = runs[lastIndex]
            if item.counter == last.end, item.slot == last.slot + Int(last.length) {
                runs[lastIndex].length += UInt64(item.length)
                return
            }
            if item.counter < last.end { sorted[agent] = false }
        }
        lastRun[agent] = runs.count
        runCounts[agent] += 1
        runs.append(SlotRun(start: item.counter, length: UInt64(item.length), slot: item.slot))
        if lastRun.count > 1 { runAgents.append(item.agent) }
    }

    /// Ends the last leaf: call before reading `leaves` for the whole list.
    mutating func closeLeaf() {
        guard !current.isEmpty else { return }
        leaves.append(Leaf(items: current, visible: currentVisible))
        visibleCount += currentVisible
        current.removeAll(keepingCapacity: true)
        currentVisible = 0
    }

    /// The list of the items appended, holding `content` (one scalar per slot, as many as the
    /// items hold). Throws when an
    /// agent's runs overlap (an id twice).
    mutating func finish(content: [Unicode.Scalar], agentName: (Int) -> String) throws(TextDecodingError) -> ItemList {
        closeLeaf()
        if leaves.isEmpty { leaves.append(Leaf()) }
        var byAgent: [[SlotRun]]
        if lastRun.count == 1 {
            byAgent = [runs]
        } else {
            byAgent = runCounts.map { count in
                var list: [SlotRun] = []
                list.reserveCapacity(count)
                return list
            }
            for (run, agent) in zip(runs, runAgents) { byAgent[Int(agent)].append(run) }
        }
        for agent in byAgent.indices where !sorted[agent] {
            Self.sortByStart(&byAgent[agent])
            for (previous, next) in zip(byAgent[agent], byAgent[agent].dropFirst()) where previous.end > next.start {
                throw .inconsistentState("id \(agentName(agent))@\(next.start) appears twice")
            }
        }
        var list = ItemList()
        list.content = content
        list.leafOfSlot = Self.leafOfSlot(leaves, count: content.count)
        list.leaves = leaves
        list.order = Array(0..<Int32(leaves.count))
        list.orderOf = list.order
        list.runs = byAgent
        list.visibleCount = visibleCount
        return list
    }

    /// The leaf of every slot: leaves hold consecutive slots in order.
    private static func leafOfSlot(_ leaves: [Leaf], count: Int) -> [Int32] {
        [Int32](unsafeUninitializedCapacity: count) { buffer, initialized in
            var slot = 0
            for (number, leaf) in leaves.enumerated() {
                guard let last = leaf.items.last else { continue }
                let end = min(count, last.slot + Int(last.length))
                guard end > slot else { continue }
                buffer[slot..<end].initialize(repeating: Int32(truncatingIfNeeded: number))
                slot = end
            }
            // Slots are consecutive from 0, so this only runs for inconsistent input; it keeps
            // the array fully initialised either way.
            if slot < count { buffer[slot..<count].initialize(repeating: 0) }
            initialized = count
        }
    }

    /// Sorts runs by start: a least-significant-digit radix sort over the starts' span, in at
    /// most four passes of up to 11 bits; a comparison sort beyond that or for few runs.
    static func sortByStart(_ runs: inout [SlotRun]) {
        guard runs.count > 1 else { return }
        var low = UInt64.max
        var high: UInt64 = 0
        for run in runs {
            low = min(low, run.start)
            high = max(high, run.start)
        }
        let bits = UInt64.bitWidth - (high - low).leadingZeroBitCount
        let passes = (bits + 10) / 11
        guard runs.count >= 256, passes <= 4 else {
            runs.sort { $0.start < $1.start }
            return
        }
        let digitBits = (bits + passes - 1) / passes
        let mask = (UInt64(1) << UInt64(digitBits)) - 1
        var other = runs
        var counts = [Int](repeating: 0, count: 1 << digitBits)
        var inOther = false
        runs.withUnsafeMutableBufferPointer { first in
            other.withUnsafeMutableBufferPointer { second in
                counts.withUnsafeMutableBufferPointer { counts in
                    for pass in 0..<passes {
                        let shift = UInt64(pass * digitBits)
                        let source = inOther ? second : first
                        let target = inOther ? first : second
                        counts.update(repeating: 0)
                        for run in source { counts[Int(truncatingIfNeeded: ((run.start - low) >> shift) & mask)] += 1 }
                        var sum = 0
                        for digit in counts.indices {
                            let count = counts[digit]
                            counts[digit] = sum
                            sum += count
                        }
                        for run in source {
                            let digit = Int(truncatingIfNeeded: ((run.start - low) >> shift) & mask)
                            target[counts[digit]] = run
                            counts[digit] += 1
                        }
                        inOther.toggle()
                    }
                }
            }
        }
        if inOther { runs = other }
    }
}

extension ItemList {
    /// The first id of `ids` that is not in the text, if any, checked against each agent's
    /// covered counter ranges (usually one range per agent, so no search).
    func firstMissing(of ids: [LocalID]) -> LocalID? {
        var covered: [[Range<UInt64>]] = []
        covered.reserveCapacity(runs.count)
        for list in runs {
            var ranges: [Range<UInt64>] = []
            for run in list {
                if let last = ranges.last, last.upperBound == run.start {
                    ranges[ranges.count - 1] = last.lowerBound..<max(last.upperBound, run.end)
                } else {
                    ranges.append(run.start..<max(run.start, run.end))
                }
            }
            covered.append(ranges)
        }
        for id in ids {
            guard Int(id.agent) < covered.count else { return id }
            let ranges = covered[Int(id.agent)]
            if ranges.count == 1 {
                if !ranges[0].contains(id.counter) { return id }
                continue
            }
            var low = 0
            var high = ranges.count
            while low < high {
                let mid = (low + high) / 2
                if ranges[mid].lowerBound <= id.counter { low = mid + 1 } else { high = mid }
            }
            guard low > 0, ranges[low - 1].contains(id.counter) else { return id }
        }
        return nil
    }
}
