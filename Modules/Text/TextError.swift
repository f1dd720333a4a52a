/// Why a text edit or a remote operation was refused.
public enum TextError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A local edit named a position past the end of the text.
    case positionOutOfRange(position: Int, count: Int)
    /// An operation with nothing in it (an empty insert, delete or id range).
    case emptyRun
    /// An operation longer than `TextOperation.maximumRunLength`.
    case runTooLong(Int)
    /// The run's counters would pass `UInt64.max`.
    case counterOverflow(TextID)
    /// An insert whose origin lies inside its own run: it could never be placed.
    case selfReference(TextID)
    /// An insert reuses ids already in the text for different content or origins.
    case conflictingIDs(TextID)
    /// The agent has used every counter: no more local inserts are possible for it.
    case countersExhausted(Agent)
    /// Too many scalars in one state (more than `Int32.max`).
    case stateTooLarge

    public var description: String {
        switch self {
        case .positionOutOfRange(let position, let count): "position \(position) is outside the text of \(count) scalars"
        case .emptyRun: "the operation is empty"
        case .runTooLong(let length): "the operation is too long (\(length) items)"
        case .counterOverflow(let id): "the run starting at \(id) overflows its counters"
        case .selfReference(let id): "the run starting at \(id) is placed relative to itself"
        case .conflictingIDs(let id): "the run starting at \(id) reuses ids already in the text"
        case .countersExhausted(let agent): "agent \(agent) has no counters left"
        case .stateTooLarge: "the text has too many scalars"
        }
    }
}
