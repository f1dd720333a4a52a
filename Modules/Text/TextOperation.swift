/// One replicated edit of a `TextSequence`, run-length encoded.
///
/// Typing produces long runs: a run of scalars typed one after another is one `insert`, and
/// a deleted stretch is one `delete` naming its id ranges. Operations carry everything a
/// replica needs to place them, so any replica may apply them in any order, any number of times.
public enum TextOperation: Hashable, Sendable {
    /// `scalars` inserted with ids `id.counter ..< id.counter + scalars.count` of `id.agent`.
    case insert(TextInsertion)
    /// The scalars with these ids are deleted (they stay as tombstones so that concurrent inserts
    /// next to them still find their place).
    case delete([TextIDRange])
}

/// A run of inserted scalars and where it goes.
///
/// The first scalar is placed between `originLeft` and `originRight`, the scalars that were its
/// neighbours when it was typed (nil: the start or the end of the text); each next scalar of the
/// run follows the previous one with the same right origin. Concurrent runs placed between the
/// same neighbours are ordered by the FugueMax / YjsMod rule, so runs never interleave.
public struct TextInsertion: Hashable, Sendable {
    /// The id of the first scalar.
    public var id: TextID
    public var originLeft: TextID?
    public var originRight: TextID?
    public var scalars: [Unicode.Scalar]

    public init(id: TextID, originLeft: TextID?, originRight: TextID?, scalars: [Unicode.Scalar]) {
        self.id = id
        self.originLeft = originLeft
        self.originRight = originRight
        self.scalars = scalars
    }

    /// The inserted text.
    public var text: String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }
}

extension TextOperation {
    /// The most scalars one insert may carry, and the most ids one delete may name; larger
    /// operations are malformed (a replica splits its own edits below this).
    public static let maximumRunLength = 1 << 24
    /// The most id ranges in one delete.
    public static let maximumRangeCount = 1 << 20

    /// Checks what can be checked without a state: non-empty runs, no counter overflow, sizes
    /// under the caps, origins outside the run itself.
    public func validate() throws(TextError) {
        switch self {
        case .insert(let insertion):
            let length = insertion.scalars.count
            guard length > 0 else { throw .emptyRun }
            guard length <= Self.maximumRunLength else { throw .runTooLong(length) }
            let (end, overflow) = insertion.id.counter.addingReportingOverflow(UInt64(length))
            guard !overflow else { throw .counterOverflow(insertion.id) }
            func isInside(_ origin: TextID?) -> Bool {
                guard let origin, origin.agent == insertion.id.agent else { return false }
                return origin.counter >= insertion.id.counter && origin.counter < end
            }
            guard !isInside(insertion.originLeft), !isInside(insertion.originRight) else { throw .selfReference(insertion.id) }
        case .delete(let ranges):
            guard !ranges.isEmpty else { throw .emptyRun }
            guard ranges.count <= Self.maximumRangeCount else { throw .runTooLong(ranges.count) }
            for range in ranges {
                guard !range.counters.isEmpty else { throw .emptyRun }
                guard range.counters.count <= Self.maximumRunLength else { throw .runTooLong(range.counters.count) }
            }
        }
    }
}

extension TextOperation {
    /// `operations` with each insert that continues the previous one (same agent, next
    /// counters, placed right after it with the same right origin) folded into it, and
    /// consecutive deletes joined: what a replica sends after a burst of typing. Applying the
    /// result has the same effect as applying `operations` in order.
    public static func coalesced(_ operations: [TextOperation]) -> [TextOperation] {
        var result: [TextOperation] = []
        for operation in operations {
            switch (result.last, operation) {
            case (.insert(var last)?, .insert(let next)):
                let end = last.id.counter &+ UInt64(last.scalars.count)
                if next.id.agent == last.id.agent, next.id.counter == end,
                   next.originLeft == TextID(agent: last.id.agent, counter: end &- 1), next.originRight == last.originRight,
                   last.scalars.count + next.scalars.count <= maximumRunLength {
                    last.scalars += next.scalars
                    result[result.count - 1] = .insert(last)
                } else {
                    result.append(operation)
                }
            case (.delete(var last)?, .delete(let next)) where last.count + next.count <= maximumRangeCount:
                for range in next {
                    if let previous = last.last, previous.agent == range.agent, previous.counters.upperBound == range.counters.lowerBound,
                       previous.counters.count + range.counters.count <= maximumRunLength {
                        last[last.count - 1].counters = previous.counters.lowerBound..<range.counters.upperBound
                    } else {
                        last.append(range)
                    }
                }
                result[result.count - 1] = .delete(last)
            default:
                result.append(operation)
            }
        }
        return result
    }
}
