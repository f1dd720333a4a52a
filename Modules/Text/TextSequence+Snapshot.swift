/// Snapshot format 2: the state as bytes, the text of deleted scalars left out.
///
/// ```
/// "MDTX" 2
/// agent count, agents (16 bytes each), each agent's next counter (varints)
/// run count, runs in text order, each:
///   header byte: bits 0-1 left origin (0 none, 1 the previous run's last id, 2 agent and
///                counter, 3 counter of this run's agent); bits 2-4 right origin (0 none,
///                1 the next run's first id, 2 the previous run's right origin, 3 agent and
///                counter, 4 counter of this run's agent); bit 5 deleted; bit 6 the previous
///                run's agent; bit 7 the counter follows the last run of its agent read so far
///   [agent index] [counter: zigzag delta from the end of its agent's last run]
///   [origins' counters: zigzag deltas from the run's counter]
///   length in scalars
/// visible text: UTF-8 byte count, the visible runs' scalars in text order
/// pending operation count, pending operations (TextOperation encoding)
/// ```
///
/// Deleted runs keep their ids, origins and lengths, which is all a merge needs; their scalars
/// decode as U+FFFD, never shown since they are deleted (history keeps its own copy of what a
/// save removed: ``Storage/TextSave``).
extension TextSequence {
    static let snapshotMagic: [UInt8] = Array("MDTX".utf8)
    /// The most agents a state may hold when read from bytes (its runs are bounded by
    /// ``maximumDecodedScalars``: each holds at least one).
    static let maximumAgents = 1 << 20
    /// The most scalars, deleted ones included, a state read from bytes may hold: deleted runs
    /// carry no text, so their lengths are bounded here rather than by the bytes.
    public static let maximumDecodedScalars = 1 << 26
    /// What a deleted scalar read from a format 2 snapshot holds instead of its text.
    public static let deletedPlaceholder: Unicode.Scalar = "\u{FFFD}"

    /// The whole state as bytes (snapshot format 2): ids, origins and lengths of every run,
    /// tombstones included, the visible text, and pending operations, with runs merged where
    /// they continue each other: a baseline another replica can start from.
    public var encoded: [UInt8] {
        // The list's items merged where they continue each other (their slots are not written).
        var runs: [Item] = []
        let text = visibleUTF8()
        for orderIndex in list.order.indices {
            for item in list.leaves[Int(list.order[orderIndex])].items {
                if let last = runs.last, last.isContinued(by: item) {
                    runs[runs.count - 1].length += item.length
                } else {
                    runs.append(item)
                }
            }
        }
        var writer = ByteWriter()
        writer.bytes.reserveCapacity(text.count + runs.count * 6 + agents.count * 20 + 16)
        writer.raw(Self.snapshotMagic)
        writer.byte(2)
        writer.varint(agents.count)
        for agent in agents { writer.agent(agent) }
        for counter in nextCounter { writer.varint(counter) }
        writer.varint(runs.count)
        var lastEnd = [UInt64](repeating: 0, count: agents.count)
        for index in runs.indices {
            let run = runs[index]
            let previous = index > 0 ? runs[index - 1] : nil
            let next = index + 1 < runs.count ? runs[index + 1] : nil
            var header: UInt8 = run.deleted ? 0x20 : 0
            var left: LocalID?
            if run.originLeft.isNone {
            } else if let previous, run.originLeft == previous.id(at: Int(previous.length) - 1) {
                header |= 1
            } else if run.originLeft.agent == run.agent {
                header |= 3
                left = run.originLeft
            } else {
                header |= 2
                left = run.originLeft
            }
            var right: LocalID?
            if run.originRight.isNone {
            } else if let next, run.originRight == LocalID(agent: next.agent, counter: next.counter) {
                header |= 1 << 2
            } else if let previous, run.originRight == previous.originRight {
                header |= 2 << 2
            } else if run.originRight.agent == run.agent {
                header |= 4 << 2
                right = run.originRight
            } else {
                header |= 3 << 2
                right = run.originRight
            }
            let sameAgent = previous?.agent == run.agent
            if sameAgent { header |= 0x40 }
            let continues = lastEnd[Int(run.agent)] == run.counter
            if continues { header |= 0x80 }
            writer.byte(header)
            if !sameAgent { writer.varint(UInt64(run.agent)) }
            if !continues { writer.varint(Self.zigzag(run.counter, from: lastEnd[Int(run.agent)])) }
            if let left { Self.write(origin: left, of: run, to: &writer) }
            if let right { Self.write(origin: right, of: run, to: &writer) }
            writer.varint(UInt64(run.length))
            lastEnd[Int(run.agent)] = run.counter &+ UInt64(run.length)
        }
        writer.varint(text.count)
        writer.raw(text)
        writer.varint(pending.count)
        for operation in pending { operation.write(to: &writer) }
        return writer.bytes
    }

    private static func write(origin: LocalID, of run: Item, to writer: inout ByteWriter) {
        if origin.agent != run.agent { writer.varint(UInt64(origin.agent)) }
        writer.varint(zigzag(origin.counter, from: run.counter))
    }

    /// `value - base` as a zigzag varint payload (wrapping: the reader undoes it exactly).
    static func zigzag(_ value: UInt64, from base: UInt64) -> UInt64 {
        let delta = Int64(bitPattern: value &- base)
        return UInt64(bitPattern: (delta << 1) ^ (delta >> 63))
    }

    static func unzigzag(_ encoded: UInt64, from base: UInt64) -> UInt64 {
        let delta = Int64(bitPattern: encoded >> 1) ^ -Int64(bitPattern: encoded & 1)
        return base &+ UInt64(bitPattern: delta)
    }

    /// Reads a state written by `encoded`, of snapshot format 2 or 1.
    ///
    /// - Throws: `TextDecodingError` for bytes that are truncated, oversized or malformed, and
    ///   `.inconsistentState` for a state that contradicts itself (an id twice, an origin that is
    ///   not in it, an agent index out of range).
    public init(decoding bytes: [UInt8]) throws(TextDecodingError) {
        var reader = ByteReader(bytes)
        guard bytes.count >= 5, bytes[0..<4].elementsEqual(Self.snapshotMagic) else { throw .notATextState }
        reader.offset = 5
        switch bytes[4] {
        case 1: try self.init(decodingFormat1: &reader)
        case 2: try self.init(decodingFormat2: &reader)
        default: throw .notATextState
        }
    }
}
