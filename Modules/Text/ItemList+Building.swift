/// Building an item list from items in text order whose slots are consecutive from 0 (a
/// decoded snapshot): leaves copied from the items a chunk at a time, the id → slot runs found
/// in one pass and sorted by a radix sort rather than a comparison sort, slot → leaf filled a
/// leaf at a time.
enum ItemListBuilder {
    /// Leaves are filled three quarters full, so the first edits do not split them.
    static let perLeaf = ItemList.maximumLeafItems * 3 / 4

    /// The list of `items`, holding `content` (one scalar per slot, as many as the items hold);
    /// every item's agent is below `agentCount`. Throws when an agent's runs overlap (an id
    /// twice).
    static func list(
        of items: UnsafeBufferPointer<Item>, content: SlotScalars, agentCount: Int, agentName: (Int) -> String
    ) throws(TextDecodingError) -> ItemList {
        var leaves: [Leaf] = []
        leaves.reserveCapacity(items.count / perLeaf + 1)
        var visibleCount = 0
        var start = 0
        while start < items.count {
            let chunk = UnsafeBufferPointer(rebasing: items[start..<min(items.count, start + perLeaf)])
            var visible = 0
            for item in chunk { visible += item.visibleLength }
            leaves.append(Leaf(items: Array(chunk), visible: visible))
            visibleCount += visible
            start += perLeaf
        }
        if leaves.isEmpty { leaves.append(Leaf()) }
        var list = ItemList()
        list.runs = try runs(of: items, agentCount: agentCount, agentName: agentName)
        list.content = content
        list.leafOfSlot = leafOfSlot(leaves, count: content.count)
        list.leaves = leaves
        list.order = Array(0..<Int32(leaves.count))
        list.orderOf = list.order
        list.visibleCount = visibleCount
        list.rebuildVisibleSums()
        return list
    }

    /// Each agent's runs of counters at consecutive slots, sorted by start.
    private static func runs(
        of items: UnsafeBufferPointer<Item>, agentCount: Int, agentName: (Int) -> String
    ) throws(TextDecodingError) -> [[SlotRun]] {
        // Every agent's runs in the order they are met, each merged with the next item when
        // that continues it; per agent, the index of its last run, its number of runs, and
        // whether they came sorted by start.
        var lastRun = [Int](repeating: -1, count: agentCount)
        var runCounts = [Int](repeating: 0, count: agentCount)
        var sorted = [Bool](repeating: true, count: agentCount)
        var runAgents = [UInt32](repeating: 0, count: agentCount > 1 ? items.count : 0)
        let runs = [SlotRun](unsafeUninitializedCapacity: items.count) { runs, runCount in
            lastRun.withUnsafeMutableBufferPointer { lastRun in
                runCounts.withUnsafeMutableBufferPointer { runCounts in
                    sorted.withUnsafeMutableBufferPointer { sorted in
                        runAgents.withUnsafeMutableBufferPointer { runAgents in
                            var count = 0
                            for item in items {
                                let agent = Int(item.agent)
                                let lastIndex = lastRun[agent]
                                if lastIndex >= 0 {
                                    let last = runs[lastIndex]
                                    if item.counter == last.end, item.slot == last.slot + Int(last.length) {
                                        runs[lastIndex].length += UInt64(item.length)
                                        continue
                                    }
                                    if item.counter < last.end { sorted[agent] = false }
                                }
                                lastRun[agent] = count
                                runCounts[agent] += 1
                                runs.initializeElement(at: count, to: SlotRun(start: item.counter, length: UInt64(item.length), slot: item.slot))
                                if agentCount > 1 { runAgents[count] = item.agent }
                                count += 1
                            }
                            runCount = count
                        }
                    }
                }
            }
        }
        var byAgent: [[SlotRun]]
        if agentCount == 1 {
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
            sortByStart(&byAgent[agent])
            for (previous, next) in zip(byAgent[agent], byAgent[agent].dropFirst()) where previous.end > next.start {
                throw .inconsistentState("id \(agentName(agent))@\(next.start) appears twice")
            }
        }
        return byAgent
    }

    /// The leaf of every slot: leaves hold consecutive slots in order.
    private static func leafOfSlot(_ leaves: [Leaf], count: Int) -> SlotLeaves {
        var leafOfSlot = SlotLeaves()
        for (number, leaf) in leaves.enumerated() {
            guard let last = leaf.items.last else { continue }
            let end = min(count, last.slot + Int(last.length))
            guard end > leafOfSlot.count else { continue }
            leafOfSlot.append(end - leafOfSlot.count, in: Int32(truncatingIfNeeded: number))
        }
        // Slots are consecutive from 0, so this only runs for inconsistent input; it keeps
        // every slot in a leaf either way.
        if leafOfSlot.count < count { leafOfSlot.append(count - leafOfSlot.count, in: 0) }
        return leafOfSlot
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
        // All starts equal (no bits to sort by): a comparison sort, which finds the overlap.
        guard runs.count >= 256, passes >= 1, passes <= 4 else {
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
