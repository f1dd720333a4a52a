/// What `TextSequence.apply(_:)` did with an operation.
public enum ApplyOutcome: Hashable, Sendable {
    /// The operation changed the state (and may have let pending operations apply too).
    case applied
    /// Everything the operation says was already in the state.
    case alreadyApplied
    /// The operation refers to ids this state does not have yet; it waits in the pending buffer.
    case pending
}

extension TextSequence {
    /// Applies an operation from any replica, in any order, any number of times.
    ///
    /// An operation that refers to ids not here yet waits and applies as soon as they arrive.
    /// - Throws: a `TextError` for a malformed operation (empty, too long, counters that
    ///   overflow, an insert placed relative to itself, a state past `Int32.max` scalars); the
    ///   state is unchanged then.
    @discardableResult
    public mutating func apply(_ operation: TextOperation) throws(TextError) -> ApplyOutcome {
        try operation.validate()
        let outcome = try applyIfReady(operation)
        if outcome != .alreadyApplied { changed() }
        switch outcome {
        case .applied:
            drainPending()
        case .pending:
            if !pending.contains(operation) {
                if case .insert(let insertion) = operation {
                    let agent = intern(insertion.id.agent)
                    noteCounters(agent: agent, end: insertion.id.counter &+ UInt64(insertion.scalars.count))
                }
                pending.append(operation)
            }
        case .alreadyApplied:
            break
        }
        return outcome
    }

    /// Applies pending operations until none of them can apply.
    mutating func drainPending() {
        var progress = true
        while progress, !pending.isEmpty {
            progress = false
            var waiting: [TextOperation] = []
            for operation in pending {
                switch try? applyIfReady(operation) {
                case .pending: waiting.append(operation)
                default: progress = true
                }
            }
            pending = waiting
        }
    }

    /// Applies `operation` when every id it refers to is here; `.pending` otherwise.
    mutating func applyIfReady(_ operation: TextOperation) throws(TextError) -> ApplyOutcome {
        switch operation {
        case .insert(let insertion): try applyInsertion(insertion)
        case .delete(let ranges): applyDeletion(ranges)
        }
    }

    private mutating func applyInsertion(_ insertion: TextInsertion) throws(TextError) -> ApplyOutcome {
        guard let left = localID(insertion.originLeft), left.isNone || list.contains(left),
              let right = localID(insertion.originRight), right.isNone || list.contains(right)
        else { return .pending }
        let agent = intern(insertion.id.agent)
        let start = insertion.id.counter
        let end = start &+ UInt64(insertion.scalars.count)  // validated: no overflow
        let missing = list.missing(agent: agent, counters: start..<end)
        guard !missing.isEmpty else { return .alreadyApplied }
        guard list.content.count + insertion.scalars.count <= Int(Int32.max) else { throw .stateTooLarge }
        for part in missing {
            let offset = Int(part.lowerBound - start)
            let partLeft = offset == 0 ? left : LocalID(agent: agent, counter: part.lowerBound - 1)
            let scalars = insertion.scalars[offset..<(offset + part.count)]
            integrate(agent: agent, counter: part.lowerBound, scalars: scalars, originLeft: partLeft, originRight: right)
        }
        noteCounters(agent: agent, end: end)
        return .applied
    }

    private mutating func applyDeletion(_ ranges: [TextIDRange]) -> ApplyOutcome {
        for range in ranges {
            guard let agent = number(of: range.agent),
                  list.missing(agent: agent, counters: range.counters).isEmpty
            else { return .pending }
        }
        var changed = false
        var touched: [Int] = []
        for range in ranges {
            guard let agent = number(of: range.agent) else { continue }
            var counter = range.counters.lowerBound
            while counter < range.counters.upperBound {
                guard case (var cursor, let offset)? = list.locate(LocalID(agent: agent, counter: counter)) else { break }
                if offset > 0 {
                    list.split(at: cursor, offset: offset)
                    touched.append(Int(list.order[cursor.order]))
                    cursor.index += 1
                }
                let item = list.item(at: cursor)
                let length = min(UInt64(item.length), range.counters.upperBound - counter)
                if !item.deleted {
                    if length < UInt64(item.length) {
                        list.split(at: cursor, offset: Int(length))
                        touched.append(Int(list.order[cursor.order]))
                    }
                    list.markDeleted(at: cursor)
                    changed = true
                }
                counter += length
            }
        }
        for leaf in touched { list.rebalance(leaf: leaf) }
        return changed ? .applied : .alreadyApplied
    }

    /// Places a run whose origins are here, by the YjsMod / FugueMax rule: start right after
    /// the left origin and skip, up to the right origin, over the items that belong before it.
    ///
    /// Of the items met, one whose left origin is before ours ends the scan; one with our left
    /// origin is a sibling: it goes first when its right origin is nearer than ours (we may
    /// still belong after its subtree, so keep looking), or when both right origins are the same
    /// and its agent sorts first. Interior scalars of an item always follow their predecessor, so
    /// whole items are skipped at once.
    mutating func integrate(
        agent: UInt32, counter: UInt64, scalars: ArraySlice<Unicode.Scalar>, originLeft: LocalID, originRight: LocalID
    ) {
        // Make the origins item boundaries: the left origin ends an item, the right one starts one.
        var touched: [Int] = []
        if !originRight.isNone, let (cursor, offset) = list.locate(originRight), offset > 0 {
            list.split(at: cursor, offset: offset)
            touched.append(Int(list.order[cursor.order]))
        }
        var start = Cursor(order: 0, index: 0)
        var leftPlace = Place.beforeStart
        if !originLeft.isNone, let (cursor, offset) = list.locate(originLeft) {
            list.split(at: cursor, offset: offset + 1)
            touched.append(Int(list.order[cursor.order]))
            start = Cursor(order: cursor.order, index: cursor.index + 1)
            leftPlace = Place(order: cursor.order, index: cursor.index, offset: offset)
        }
        // Needed only when a sibling (same left origin) is met: usually never.
        var rightPlace: Place?
        let newAgent = agents[Int(agent)]

        var destination = start
        var cursor = start
        var scanning = false
        while true {
            let more = list.normalize(&cursor)
            if !scanning { destination = cursor }
            guard more else { break }
            let other = list.item(at: cursor)
            if other.agent == originRight.agent, other.counter == originRight.counter { break }
            let otherLeft = other.originLeft.isNone ? Place.beforeStart : list.place(of: other.originLeft)
            if otherLeft < leftPlace { break }
            if otherLeft == leftPlace {
                let ourRight = rightPlace ?? list.place(of: originRight)
                rightPlace = ourRight
                let otherRight = list.place(of: other.originRight)
                if otherRight < ourRight {
                    scanning = true
                } else if otherRight == ourRight {
                    let otherAgent = agents[Int(other.agent)]
                    if (newAgent, counter) < (otherAgent, other.counter) { break }
                    scanning = false
                } else {
                    scanning = false
                }
            }
            cursor.index += 1
        }
        let item = Item(
            agent: agent, length: UInt32(scalars.count), counter: counter, slot: list.content.count,
            originLeft: originLeft, originRight: originRight, deleted: false)
        list.insert(item, scalars: scalars, at: destination)
        for leaf in touched { list.rebalance(leaf: leaf) }
    }
}
