extension TextSequence {
    /// Inserts `string` at `position` (in Unicode scalars) as `agent`, and returns the operation
    /// to send to the other replicas.
    ///
    /// - Throws: `TextError.positionOutOfRange` past the end, `.emptyRun` for an empty string,
    ///   `.runTooLong` beyond `TextOperation.maximumRunLength` scalars, `.countersExhausted`
    ///   when the agent's counters would pass `UInt64.max`.
    @discardableResult
    public mutating func insert(_ string: String, at position: Int, by agent: Agent) throws(TextError) -> TextOperation {
        try insert(Array(string.unicodeScalars), at: position, by: agent)
    }

    /// Inserts `scalars` at `position` as `agent`; see `insert(_:at:by:)`.
    @discardableResult
    public mutating func insert(_ scalars: [Unicode.Scalar], at position: Int, by agent: Agent) throws(TextError) -> TextOperation {
        try insert(scalars, at: position, by: agent, from: nil)
    }

    /// Inserts `scalars` at `position` as `agent`, with ids from `first` on (the agent's next
    /// counter when nil; ``replace(_:with:by:from:)`` checks a given one). Typing on at the end of one's own run grows that
    /// run; with ids from `first`, the insert is an item of its own, as its operation's apply
    /// makes it (later deletes then name the same ranges on both paths).
    private mutating func insert(_ scalars: [Unicode.Scalar], at position: Int, by agent: Agent, from first: UInt64?) throws(TextError) -> TextOperation {
        guard position >= 0, position <= count else { throw .positionOutOfRange(position: position, count: count) }
        guard !scalars.isEmpty else { throw .emptyRun }
        guard scalars.count <= TextOperation.maximumRunLength else { throw .runTooLong(scalars.count) }
        guard list.content.count + scalars.count <= Int(Int32.max) else { throw .stateTooLarge }
        changed()
        let number = intern(agent)
        let counter = first ?? nextCounter[Int(number)]
        let (end, overflow) = counter.addingReportingOverflow(UInt64(scalars.count))
        guard !overflow else { throw .countersExhausted(agent) }

        // Where the run goes: right after the visible scalar before `position`.
        var originLeft = LocalID.none
        var cursor = Cursor(order: 0, index: 0)
        if position > 0 {
            let (found, offset) = list.findVisible(position - 1)
            let item = list.item(at: found)
            originLeft = item.id(at: offset)
            if offset + 1 < Int(item.length) { list.split(at: found, offset: offset + 1) }
            cursor = Cursor(order: found.order, index: found.index + 1)
        }
        var next = cursor
        let originRight = list.normalize(&next) ? list.item(at: next).id(at: 0) : LocalID.none

        if position > 0, first == nil, extendRun(before: cursor, agent: number, counter: counter, originRight: originRight, scalars: scalars) {
            // Typing on at the end of one's own run: the run grows, no new item.
        } else {
            let item = Item(
                agent: number, length: UInt32(scalars.count), counter: counter, slot: list.content.count,
                originLeft: originLeft, originRight: originRight, deleted: false)
            list.insert(item, scalars: scalars, at: cursor)
        }
        nextCounter[Int(number)] = end
        return .insert(TextInsertion(
            id: TextID(agent: agent, counter: counter), originLeft: textID(originLeft), originRight: textID(originRight),
            scalars: scalars))
    }

    /// Grows the item before `cursor` by `scalars` when they continue it exactly: same agent,
    /// next counters, next slots, same right origin, visible.
    private mutating func extendRun(
        before cursor: Cursor, agent: UInt32, counter: UInt64, originRight: LocalID, scalars: [Unicode.Scalar]
    ) -> Bool {
        let leaf = Int(list.order[cursor.order])
        let index = cursor.index - 1
        guard index >= 0 else { return false }
        let item = list.leaves[leaf].items[index]
        guard item.agent == agent, !item.deleted, item.counter &+ UInt64(item.length) == counter,
              item.slot + Int(item.length) == list.content.count, item.originRight == originRight,
              Int(item.length) + scalars.count <= TextOperation.maximumRunLength
        else { return false }
        if list.recorded != nil { list.recordInsertion(at: list.visiblePosition(of: cursor), scalars) }
        list.leaves[leaf].items[index].length += UInt32(scalars.count)
        list.addVisible(scalars.count, to: leaf, at: cursor.order)
        list.content.append(contentsOf: scalars)
        list.leafOfSlot.append(scalars.count, in: Int32(leaf))
        list.recordRun(agent: agent, start: counter, length: UInt64(scalars.count), slot: item.slot + Int(item.length))
        return true
    }

    /// Replaces the visible scalars in `range` with `scalars` as `agent`, new ids from
    /// `counter` on, and returns the operations: those ``operations(replacing:with:by:from:)``
    /// makes, applied here as they are made (deletes first, then inserts of at most
    /// `TextOperation.maximumRunLength` scalars each), with no second lookup of their places.
    /// An editor's edit at its position, saved. A `counter` below the agent's next counter
    /// (ids it used) is refused like one past `UInt64.max`.
    ///
    /// - Throws: `TextError.positionOutOfRange` when `range` reaches outside the text,
    ///   `.countersExhausted` when the new ids would pass `UInt64.max` or reuse the agent's,
    ///   `.stateTooLarge` past the state's limit; the text may then hold the deletes.
    public mutating func replace(
        _ range: Range<Int>, with scalars: [Unicode.Scalar], by agent: Agent, from counter: UInt64
    ) throws(TextError) -> [TextOperation] {
        guard range.lowerBound >= 0, range.upperBound <= count else {
            throw .positionOutOfRange(position: range.lowerBound < 0 ? range.lowerBound : range.upperBound, count: count)
        }
        let (_, overflow) = counter.addingReportingOverflow(UInt64(scalars.count))
        guard !overflow, counter >= nextCounter(for: agent) else { throw .countersExhausted(agent) }
        // The state an operation's apply leaves: a delete alone adds no agent to the table.
        var operations = try delete(range, interning: nil)
        var start = 0
        var next = counter
        while start < scalars.count {
            let end = min(scalars.count, start + TextOperation.maximumRunLength)
            operations.append(try insert(Array(scalars[start..<end]), at: range.lowerBound + start, by: agent, from: next))
            next += UInt64(end - start)
            start = end
        }
        // As `apply(_:)` does after an operation: one that waited for these ids goes in.
        if !pending.isEmpty, !operations.isEmpty { drainPending() }
        return operations
    }

    /// Deletes the visible scalars in `range` and returns the operations naming them: runs of
    /// ids, so deleting millions of scalars typed in one go is a few ranges. Each operation is
    /// within what every reader accepts (`TextOperation.validate()`: ranges of at most
    /// `maximumRunLength` ids, at most `maximumRangeCount` of them), so a delete of more than
    /// that many runs is several operations. Empty for an empty range.
    ///
    /// - Throws: `TextError.positionOutOfRange` when the range reaches outside the text.
    @discardableResult
    public mutating func delete(_ range: Range<Int>, by agent: Agent) throws(TextError) -> [TextOperation] {
        try delete(range, interning: agent)
    }

    /// ``delete(_:by:)``, with `agent` added to the agent table when given (a delete names
    /// the deleted scalars' agents, not its own: applied as an operation it adds none).
    private mutating func delete(_ range: Range<Int>, interning agent: Agent?) throws(TextError) -> [TextOperation] {
        guard range.lowerBound >= 0, range.upperBound <= count else {
            throw .positionOutOfRange(position: range.lowerBound < 0 ? range.lowerBound : range.upperBound, count: count)
        }
        guard !range.isEmpty else { return [] }
        changed()
        if let agent { _ = intern(agent) }
        var (cursor, offset) = list.findVisible(range.lowerBound)
        var remaining = range.count
        var deleted: [TextIDRange] = []
        var touched: [Int] = []
        while remaining > 0, list.normalize(&cursor) {
            let item = list.item(at: cursor)
            if item.deleted {
                cursor.index += 1
                continue
            }
            if offset > 0 {
                list.split(at: cursor, offset: offset)
                touched.append(Int(list.order[cursor.order]))
                cursor.index += 1
                offset = 0
                continue
            }
            if Int(item.length) > remaining {
                list.split(at: cursor, offset: remaining)
                touched.append(Int(list.order[cursor.order]))
            }
            let length = min(Int(item.length), remaining)
            list.markDeleted(at: cursor)
            remaining -= length
            let agent = agents[Int(item.agent)]
            let counters = item.counter..<(item.counter &+ UInt64(length))
            if let last = deleted.last, last.agent == agent, last.counters.upperBound == counters.lowerBound,
               last.counters.count + counters.count <= TextOperation.maximumRunLength {
                deleted[deleted.count - 1].counters = last.counters.lowerBound..<counters.upperBound
            } else {
                deleted.append(TextIDRange(agent: agent, counters: counters))
            }
            cursor.index += 1
        }
        for leaf in touched { list.rebalance(leaf: leaf) }
        return stride(from: 0, to: deleted.count, by: TextOperation.maximumRangeCount).map { start in
            .delete(Array(deleted[start..<min(deleted.count, start + TextOperation.maximumRangeCount)]))
        }
    }

    /// Replaces the text with `newText` by a small edit (a Myers diff over Unicode scalars after
    /// trimming the common prefix and suffix), applied as `agent`; returns the operations in the
    /// order they were applied. Very different texts become one delete and one insert.
    @discardableResult
    public mutating func edits(to newText: String, by agent: Agent) throws(TextError) -> [TextOperation] {
        let old = currentScalars()
        let new = Array(newText.unicodeScalars)
        var operations: [TextOperation] = []
        // From the last hunk to the first, so earlier positions stay valid.
        for hunk in ScalarDiff.hunks(from: old, to: new).reversed() {
            operations += try delete(hunk.old, by: agent)
            var position = hunk.old.lowerBound
            var start = hunk.new.lowerBound
            while start < hunk.new.upperBound {
                let end = min(hunk.new.upperBound, start + TextOperation.maximumRunLength)
                operations.append(try insert(Array(new[start..<end]), at: position, by: agent))
                position += end - start
                start = end
            }
        }
        return operations
    }

    /// The visible scalars, in order.
    func currentScalars() -> [Unicode.Scalar] {
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(count)
        for orderIndex in list.order.indices {
            for item in list.leaves[Int(list.order[orderIndex])].items where !item.deleted {
                list.content.append(item.slot..<(item.slot + Int(item.length)), to: &result)
            }
        }
        return result
    }
}
