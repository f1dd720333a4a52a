import Model
import Text

/// The text operations one transaction applied, per text: what a store appends instead of
/// rewriting the text's whole state (Docs/STORAGE.md, "Texts in place").
///
/// A store trusts the journal of a text only when it accounts for every change of that text in
/// the transaction: it starts at the ``TextSequence/revision`` the store committed and ends at
/// the revision the text has now. A text changed any other way (replaced, edited directly) has
/// its whole state written, as before. Not part of the contents' equality or coding, and empty
/// in every value a store returns.
public struct TextJournal: Sendable {
    /// A text: an object's attribute.
    public struct Key: Hashable, Sendable {
        public var object: ObjectID
        public var attribute: String

        public init(object: ObjectID, attribute: String) {
            self.object = object
            self.attribute = attribute
        }
    }

    struct Entry: Sendable {
        var base: UInt64
        var revision: UInt64
        var operations: [TextOperation]
    }

    private(set) var entries: [Key: Entry] = [:]

    public init() {}

    public var isEmpty: Bool { entries.isEmpty }

    /// Records that `operations` took the text `key` from revision `base` to `revision`.
    mutating func record(_ key: Key, base: UInt64, operations: [TextOperation], revision: UInt64) {
        guard base != revision else { return }
        if let index = entries.index(forKey: key), entries.values[index].revision == base {
            // In place: a copy of the entry would copy every operation the transaction applied
            // so far (an import of many logs is one transaction).
            entries.values[index].operations += operations
            entries.values[index].revision = revision
        } else {
            // The first change of the transaction, or one after a change the journal did not
            // see: the store compares `base` with what it committed.
            entries[key] = Entry(base: base, revision: revision, operations: operations)
        }
    }

    /// The operations that took `key` from revision `base` to `revision`, when the journal saw
    /// every change between the two; nil otherwise.
    public func operations(for key: Key, from base: UInt64, to revision: UInt64) -> [TextOperation]? {
        guard let entry = entries[key], entry.base == base, entry.revision == revision else { return nil }
        return entry.operations
    }
}

/// What a transaction changed of a store's texts against the revisions the store committed:
/// the one reading both backends write from.
struct TextChanges {
    enum Change {
        /// The operations that took the committed revision to this one (may be none).
        case operations([TextOperation])
        /// A text the journal cannot account for (new, replaced, edited directly): its whole state.
        case state(TextSequence)
    }

    /// Each text whose revision moved, with how to write it.
    var changed: [(key: TextJournal.Key, change: Change)] = []
    /// Texts the store committed that the contents no longer hold.
    var removed: [TextJournal.Key] = []

    var isEmpty: Bool { changed.isEmpty && removed.isEmpty }
}

extension StoreContents {
    /// The texts that changed since the store committed `committed` (per text, its revision).
    func textChanges(since committed: [TextJournal.Key: UInt64]) -> TextChanges {
        var changes = TextChanges()
        var seen: Set<TextJournal.Key> = []
        for (id, texts) in sync.texts {
            for (name, sequence) in texts {
                let key = TextJournal.Key(object: id, attribute: name)
                seen.insert(key)
                let base = committed[key]
                guard base != sequence.revision else { continue }
                if let base, let operations = textJournal.operations(for: key, from: base, to: sequence.revision),
                   !Self.outweighs(operations, sequence) {
                    changes.changed.append((key, .operations(operations)))
                } else {
                    changes.changed.append((key, .state(sequence)))
                }
            }
        }
        changes.removed = committed.keys.filter { !seen.contains($0) }
        return changes
    }

    /// Whether `operations` weigh so much against the text they made (a long paste, a backlog
    /// imported in one transaction) that the text's state is the cheaper thing to write: every
    /// later open would replay them, while the state costs about what they cost once.
    static func outweighs(_ operations: [TextOperation], _ sequence: TextSequence) -> Bool {
        var weight = 0
        for operation in operations {
            switch operation {
            case .insert(let insertion): weight &+= insertion.scalars.count
            case .delete(let ranges): for range in ranges { weight &+= Int(clamping: range.counters.upperBound - range.counters.lowerBound) }
            }
        }
        return weight >= minimumStateWeight && weight >= sequence.count / 4
    }

    /// Operations lighter than this are appended whatever the text's length.
    static let minimumStateWeight = 4_096

    /// Applies `operations` to the text `attribute` of `object` in place (starting it from
    /// `seed()` when it has none), notes them in ``textJournal`` for the store, and returns
    /// what they changed in the visible text, in order, with the text's length before.
    /// Operations the text refuses (a state past its limits) are left out, as are those it
    /// already held.
    public mutating func applyText(
        _ operations: [TextOperation], object: ObjectID, attribute: String, seed: () -> TextSequence
    ) -> (changes: [TextChange], countBefore: Int) {
        if sync.texts[object]?[attribute] == nil { sync.texts[object, default: [:]][attribute] = seed() }
        let (changes, countBefore, _) = inPlace(object: object, attribute: attribute) { sequence, applied in
            for operation in operations {
                // One the text refuses (a state past its limits) or already held is left out.
                guard let outcome = try? sequence.apply(operation), outcome != .alreadyApplied else { continue }
                applied.append(operation)
            }
        }
        return (changes, countBefore)
    }

    /// Runs `edit(step, &text)` for each of `steps` steps in turn on the text `attribute` of
    /// `object`, in place (started from `seed()` when it has none, and left without one when
    /// the steps make nothing): each step changes the text (an editor's edit at its position,
    /// ``Text/TextSequence/replace(_:with:by:from:)``) and returns the operations it applied.
    /// What ``applyText(_:object:attribute:seed:)`` does for operations made elsewhere, with
    /// the text looked up, its changes recorded and the journal noted once for all the steps.
    /// Returns what they changed in the visible text, the text's length before, and the
    /// operations. A step that throws stops them; the text then holds the steps before it,
    /// unjournaled, and the caller's transaction must not commit.
    public mutating func editText(
        object: ObjectID, attribute: String, seed: () -> TextSequence, steps: Int,
        _ edit: (_ step: Int, _ text: inout TextSequence) throws -> [TextOperation]
    ) rethrows -> (changes: [TextChange], countBefore: Int, made: [TextOperation]) {
        let seeded = sync.texts[object]?[attribute] == nil
        if seeded { sync.texts[object, default: [:]][attribute] = seed() }
        let (changes, countBefore, made) = try inPlace(object: object, attribute: attribute) { sequence, applied in
            for step in 0..<steps { applied += try edit(step, &sequence) }
        }
        if seeded, made.isEmpty {
            sync.texts[object]?[attribute] = nil
            if sync.texts[object]?.isEmpty == true { sync.texts[object] = nil }
        }
        return (changes, countBefore, made)
    }

    /// Runs `body` on the text `attribute` of `object` where it is (a copy of the state would
    /// copy every scalar of a long text), and notes the operations it applied in
    /// ``textJournal``. Returns what they changed in the visible text, its length before, and
    /// the operations.
    private mutating func inPlace(
        object: ObjectID, attribute: String, _ body: (inout TextSequence, inout [TextOperation]) throws -> Void
    ) rethrows -> (changes: [TextChange], countBefore: Int, applied: [TextOperation]) {
        var applied: [TextOperation] = []
        var base: UInt64 = 0, revision: UInt64 = 0, countBefore = 0
        let changes = try sync.texts[object]?[attribute]?.recordingChanges { (sequence: inout TextSequence) throws in
            base = sequence.revision
            countBefore = sequence.count
            try body(&sequence, &applied)
            revision = sequence.revision
        }
        textJournal.record(TextJournal.Key(object: object, attribute: attribute), base: base, operations: applied, revision: revision)
        return (changes ?? [], countBefore, applied)
    }
}
