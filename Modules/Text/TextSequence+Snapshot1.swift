/// One run of a compacted state: consecutive scalars of one agent with their origins.
struct SnapshotRun: Equatable {
    var agent: UInt32
    var counter: UInt64
    var originLeft: LocalID
    var originRight: LocalID
    var deleted: Bool
    var scalars: [Unicode.Scalar]
}

/// Snapshot format 1: every run with its scalars, tombstones' text included. Read for states
/// written before format 2 (stores and baselines of earlier builds); written only by tests.
extension TextSequence {

    /// The items in text order with adjacent runs that continue each other merged, agents as
    /// `Agent`s (for comparing states whose interning differs); tombstones have no scalars.
    func snapshotRuns() -> [TextInsertion] {
        compactedRuns().map { run in
            TextInsertion(
                id: TextID(agent: agents[Int(run.agent)], counter: run.counter), originLeft: textID(run.originLeft),
                originRight: textID(run.originRight), scalars: run.deleted ? [] : run.scalars)
        }
    }

    /// The items in text order, merged where one continues the previous one.
    func compactedRuns() -> [SnapshotRun] {
        var result: [SnapshotRun] = []
        for orderIndex in list.order.indices {
            for item in list.leaves[Int(list.order[orderIndex])].items {
                let scalars = list.content[item.slot..<(item.slot + Int(item.length))]
                if let last = result.last, last.agent == item.agent, !last.scalars.isEmpty,
                   last.counter &+ UInt64(last.scalars.count) == item.counter,
                   item.originLeft == LocalID(agent: item.agent, counter: item.counter &- 1),
                   last.originRight == item.originRight, last.deleted == item.deleted,
                   last.scalars.count + Int(item.length) <= TextOperation.maximumRunLength {
                    result[result.count - 1].scalars.append(contentsOf: scalars)
                } else {
                    result.append(SnapshotRun(
                        agent: item.agent, counter: item.counter, originLeft: item.originLeft,
                        originRight: item.originRight, deleted: item.deleted, scalars: Array(scalars)))
                }
            }
        }
        return result
    }

    /// The state in snapshot format 1 (tombstones with their text), as builds before format 2
    /// wrote it: for tests that check those bytes are still read.
    package var encodedFormat1: [UInt8] {
        var writer = ByteWriter()
        writer.bytes.append(contentsOf: Self.snapshotMagic)
        writer.byte(1)
        writer.varint(agents.count)
        for agent in agents { writer.agent(agent) }
        for counter in nextCounter { writer.varint(counter) }
        let runs = compactedRuns()
        writer.varint(runs.count)
        for run in runs {
            writer.varint(UInt64(run.agent))
            writer.varint(run.counter)
            let flags = (run.originLeft.isNone ? 0 : 1) | (run.originRight.isNone ? 0 : 2) | (run.deleted ? 4 : 0)
            writer.byte(UInt8(flags))
            for origin in [run.originLeft, run.originRight] where !origin.isNone {
                writer.varint(UInt64(origin.agent))
                writer.varint(origin.counter)
            }
            writer.scalars(run.scalars)
        }
        writer.varint(pending.count)
        for operation in pending { operation.write(to: &writer) }
        return writer.bytes
    }

    /// Reads a state in snapshot format 1; `reader` is past the magic and the version byte.
    init(decodingFormat1 reader: inout ByteReader) throws(TextDecodingError) {
        self.init()
        let agentCount = try reader.count(maximum: min(Self.maximumAgents, reader.remaining / 16))
        for _ in 0..<agentCount {
            let agent = try reader.agent()
            guard agentNumbers[agent] == nil else { throw .inconsistentState("agent \(agent) listed twice") }
            _ = intern(agent)
        }
        for index in 0..<agentCount { nextCounter[index] = try reader.varint() }

        // Each run takes at least 5 bytes.
        let runCount = try reader.count(maximum: reader.remaining / 5)
        var runsByAgent = [[SlotRun]](repeating: [], count: agentCount)
        var leaf = 0
        func agentIndex(_ reader: inout ByteReader) throws(TextDecodingError) -> UInt32 {
            let offset = reader.offset
            let value = try reader.varint()
            guard value < UInt64(agentCount) else { throw .inconsistentState("agent index \(value) at \(offset)") }
            return UInt32(value)
        }
        for _ in 0..<runCount {
            let agent = try agentIndex(&reader)
            let counter = try reader.varint()
            let flagsOffset = reader.offset
            let flags = try reader.byte()
            guard flags & ~7 == 0 else { throw .unknownTag(offset: flagsOffset, tag: flags) }
            var origins = [LocalID.none, LocalID.none]
            for side in 0..<2 where flags & (1 << side) != 0 {
                origins[side] = LocalID(agent: try agentIndex(&reader), counter: try reader.varint())
            }
            let scalars = try reader.scalars(maximum: min(TextOperation.maximumRunLength, Int(Int32.max) - list.content.count))
            guard !scalars.isEmpty else { throw .inconsistentState("an empty run") }
            let (end, overflow) = counter.addingReportingOverflow(UInt64(scalars.count))
            guard !overflow else { throw .inconsistentState("a run past the last counter") }
            if list.leaves[leaf].items.count >= ItemList.maximumLeafItems * 3 / 4 {
                leaf = list.leaves.count
                list.leaves.append(Leaf())
                list.order.append(Int32(leaf))
                list.orderOf.append(Int32(leaf))
            }
            let item = Item(
                agent: agent, length: UInt32(scalars.count), counter: counter, slot: list.content.count,
                originLeft: origins[0], originRight: origins[1], deleted: flags & 4 != 0)
            list.leaves[leaf].items.append(item)
            list.leaves[leaf].visible += item.visibleLength
            list.visibleCount += item.visibleLength
            runsByAgent[Int(agent)].append(SlotRun(start: counter, length: UInt64(scalars.count), slot: item.slot))
            list.content.append(contentsOf: scalars)
            list.leafOfSlot.append(contentsOf: repeatElement(Int32(leaf), count: scalars.count))
            noteCounters(agent: agent, end: end)
        }
        for agent in runsByAgent.indices {
            runsByAgent[agent].sort { $0.start < $1.start }
            for (previous, next) in zip(runsByAgent[agent], runsByAgent[agent].dropFirst()) where previous.end > next.start {
                throw .inconsistentState("id \(agents[agent])@\(next.start) appears twice")
            }
        }
        list.runs = runsByAgent
        for orderIndex in list.order.indices {
            for item in list.leaves[Int(list.order[orderIndex])].items {
                for origin in [item.originLeft, item.originRight] where !origin.isNone && !list.contains(origin) {
                    throw .inconsistentState("origin \(agents[Int(origin.agent)])@\(origin.counter) is missing")
                }
            }
        }
        let pendingCount = try reader.count(maximum: reader.remaining)
        for _ in 0..<pendingCount {
            let operation = try TextOperation.read(from: &reader)
            if case .insert(let insertion) = operation {
                noteCounters(agent: intern(insertion.id.agent), end: insertion.id.counter &+ UInt64(insertion.scalars.count))
            }
            pending.append(operation)
        }
        try reader.finish()
    }
}
