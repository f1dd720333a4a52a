/// One run of a compacted state: items merged where one continues the previous (their slot
/// unused), with their scalars.
struct SnapshotRun {
    var item: Item
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
                id: TextID(agent: agents[Int(run.item.agent)], counter: run.item.counter), originLeft: textID(run.item.originLeft),
                originRight: textID(run.item.originRight), scalars: run.item.deleted ? [] : run.scalars)
        }
    }

    /// The items in text order, merged where one continues the previous one.
    func compactedRuns() -> [SnapshotRun] {
        var result: [SnapshotRun] = []
        for orderIndex in list.order.indices {
            for item in list.leaves[Int(list.order[orderIndex])].items {
                let scalars = list.content.scalars(item.slot..<(item.slot + Int(item.length)))
                if let last = result.last, last.item.isContinued(by: item) {
                    result[result.count - 1].item.length += item.length
                    result[result.count - 1].scalars.append(contentsOf: scalars)
                } else {
                    result.append(SnapshotRun(item: item, scalars: Array(scalars)))
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
        for compacted in runs {
            let run = compacted.item
            writer.varint(UInt64(run.agent))
            writer.varint(run.counter)
            let flags = (run.originLeft.isNone ? 0 : 1) | (run.originRight.isNone ? 0 : 2) | (run.deleted ? 4 : 0)
            writer.byte(UInt8(flags))
            for origin in [run.originLeft, run.originRight] where !origin.isNone {
                writer.varint(UInt64(origin.agent))
                writer.varint(origin.counter)
            }
            writer.scalars(compacted.scalars)
        }
        writer.varint(pending.count)
        for operation in pending { operation.write(to: &writer) }
        return writer.bytes
    }

    /// Reads a state in snapshot format 1; `reader` is past the magic and the version byte.
    init(decodingFormat1 reader: inout ByteReader) throws(TextDecodingError) {
        self.init()
        let agentCount = try readAgents(&reader, bytesEach: 16)
        // Each run takes at least 5 bytes.
        let runCount = try reader.count(maximum: reader.remaining / 5)
        var items: [Item] = []
        items.reserveCapacity(runCount)
        var content: [Unicode.Scalar] = []
        var origins: [LocalID] = []
        for _ in 0..<runCount {
            let agent = try Self.agentIndex(&reader, agentCount: agentCount)
            let counter = try reader.varint()
            let flagsOffset = reader.offset
            let flags = try reader.byte()
            guard flags & ~7 == 0 else { throw .unknownTag(offset: flagsOffset, tag: flags) }
            var sides = [LocalID.none, LocalID.none]
            for side in 0..<2 where flags & (1 << side) != 0 {
                sides[side] = LocalID(agent: try Self.agentIndex(&reader, agentCount: agentCount), counter: try reader.varint())
                origins.append(sides[side])
            }
            let scalars = try reader.scalars(maximum: min(TextOperation.maximumRunLength, Int(Int32.max) - content.count))
            guard !scalars.isEmpty else { throw .inconsistentState("an empty run") }
            guard !counter.addingReportingOverflow(UInt64(scalars.count)).overflow else { throw .inconsistentState("a run past the last counter") }
            items.append(Item(
                agent: agent, length: UInt32(scalars.count), counter: counter, slot: content.count,
                originLeft: sides[0], originRight: sides[1], deleted: flags & 4 != 0))
            content.append(contentsOf: scalars)
        }
        try items.withUnsafeBufferPointer { (decoded) throws(TextDecodingError) in
            try finishDecoding(items: decoded, content: SlotScalars(content), agentCount: agentCount, origins: origins, reader: &reader)
        }
    }
}
