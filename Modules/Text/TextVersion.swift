/// What a state contains: per agent, the ranges of counters it holds.
///
/// Agents type with consecutive counters, so this is usually one range per agent — its first
/// range's end is the agent's highest contiguous counter.
public struct TextVersion: Hashable, Sendable {
    /// Per agent, disjoint sorted counter ranges.
    public private(set) var ranges: [Agent: [Range<UInt64>]]

    public init(ranges: [Agent: [Range<UInt64>]] = [:]) { self.ranges = ranges }

    /// Whether the version holds `id`.
    public func contains(_ id: TextID) -> Bool {
        ranges[id.agent]?.contains { $0.contains(id.counter) } ?? false
    }

    /// One past the highest counter of `agent` such that every counter from 0 up is held.
    public func contiguousEnd(for agent: Agent) -> UInt64 {
        guard let first = ranges[agent]?.first, first.lowerBound == 0 else { return 0 }
        return first.upperBound
    }
}

extension TextSequence {
    /// The ids this state holds (pending operations not included).
    public var version: TextVersion {
        var ranges: [Agent: [Range<UInt64>]] = [:]
        for (number, runs) in list.runs.enumerated() where !runs.isEmpty {
            var merged: [Range<UInt64>] = []
            for run in runs {
                if let last = merged.last, last.upperBound == run.start {
                    merged[merged.count - 1] = last.lowerBound..<run.end
                } else {
                    merged.append(run.start..<run.end)
                }
            }
            ranges[agents[number]] = merged
        }
        return TextVersion(ranges: ranges)
    }

    /// Operations that bring a replica at `version` up to this state: the inserts it lacks, in
    /// the order this state applied them (so each finds its origins), then one delete naming
    /// every tombstone (deletes have no ids of their own, so all are sent; applying them again
    /// changes nothing). A deleted insert read from a snapshot carries
    /// ``TextSequence/deletedPlaceholder`` as its text: the delete after it hides it.
    public func operations(since version: TextVersion) -> [TextOperation] {
        var items: [Item] = []
        var tombstones: [TextIDRange] = []
        for orderIndex in list.order.indices {
            for item in list.leaves[Int(list.order[orderIndex])].items {
                items.append(item)
                if item.deleted {
                    tombstones.append(TextIDRange(
                        agent: agents[Int(item.agent)], counters: item.counter..<(item.counter &+ UInt64(item.length))))
                }
            }
        }
        items.sort { $0.slot < $1.slot }
        var result: [TextOperation] = []
        for item in items {
            let agent = agents[Int(item.agent)]
            let have = version.ranges[agent] ?? []
            var next = item.counter
            let end = item.counter &+ UInt64(item.length)
            var parts: [Range<UInt64>] = []
            for range in have where range.upperBound > next && range.lowerBound < end {
                if range.lowerBound > next { parts.append(next..<range.lowerBound) }
                next = range.upperBound
            }
            if next < end { parts.append(next..<end) }
            for part in parts {
                let offset = Int(part.lowerBound - item.counter)
                let left = offset == 0 ? item.originLeft : item.id(at: offset - 1)
                let start = item.slot + offset
                result.append(.insert(TextInsertion(
                    id: TextID(agent: agent, counter: part.lowerBound), originLeft: textID(left),
                    originRight: textID(item.originRight), scalars: list.content.scalars(start..<(start + part.count)))))
            }
        }
        if !tombstones.isEmpty {
            var start = 0
            while start < tombstones.count {
                let end = min(tombstones.count, start + TextOperation.maximumRangeCount)
                result.append(.delete(Array(tombstones[start..<end])))
                start = end
            }
        }
        return result
    }
}
