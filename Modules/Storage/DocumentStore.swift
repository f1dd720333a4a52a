import Foundation
import Model
import Text

/// A document's local copy on one device: its object graph and, beside it in the same
/// transactions, the bookkeeping the Sync module needs.
///
/// Every backend guarantees:
/// - **All or nothing.** ``write(_:)`` commits everything its body changed, or nothing: if the body
///   throws, or the commit fails, the store keeps its previous state.
/// - **Crash safety.** A crash (power loss, SIGKILL) at any point leaves the last committed state.
/// - **Several processes.** Two processes of one device may open the same store at once without
///   corrupting it; writers are serialised (one waits, up to the busy timeout, then gets
///   ``StoreError/Kind/busy``). ``write(_:)`` always sees the latest committed state, also one
///   committed by another process, so read-modify-write is safe.
/// - **Typed errors.** A store that is missing, truncated, not a store, garbage, from a newer
///   schema or unreadable fails to open with a ``StoreError`` naming the file and the problem.
///   Nothing traps.
///
/// Conveniences (``apply(_:)``) live in the protocol extension.
public protocol DocumentStore: AnyObject, Sendable {
    /// Which backend this is.
    var kind: StoreKind { get }
    /// The store's file.
    var url: URL { get }

    /// The latest committed contents.
    func read() throws(StoreError) -> StoreContents

    /// Runs `body` on the latest committed contents inside one exclusive transaction and
    /// commits what it changed. Returns what `body` returns.
    ///
    /// With `durable` the commit survives a power loss once this returns. Without, it survives
    /// a crash of the process but a power loss may undo it (the store stays consistent, at an
    /// earlier commit): for a commit whose content is made durable elsewhere before anyone
    /// relies on it — a save whose log reaches the container before the save is acknowledged
    /// (Docs/RELIABILITY.md, "One durable step per save"). A later durable commit, or
    /// ``sync()``, makes it durable too.
    /// - Throws: what `body` throws (nothing is committed), or a ``StoreError``.
    func write<T>(durable: Bool, _ body: (inout StoreContents) throws -> T) throws -> T

    /// ``write(durable:_:)`` whose body notes every object it inserts, changes or deletes
    /// (``StoreContents/noteObject(_:)``): a store may then write those objects' rows and
    /// compare no other object (an import of one row into a document of a million is no walk
    /// of the million). A body that changes an object without noting it loses that change in
    /// such a store. Stores that compare every object ignore the notes.
    func write<T>(durable: Bool, notingObjects: Bool, _ body: (inout StoreContents) throws -> T) throws -> T

    /// Makes every commit so far survive a power loss.
    func sync() throws(StoreError)

    /// Takes the logs at `sequences` out of the outbox, not synced: they are in the container,
    /// durably. The commit may come later (the SQLite store makes it part of this object's next
    /// write, or of its close), but what this store object reads from now on never shows them.
    /// Until that commit, another process (or another object on the same file) finds them in
    /// the outbox, and a flush there finds them in place (the same bytes) and takes them out.
    /// - Throws: ``StoreError`` (a store already closed, or a commit made at once that failed).
    func dropShipped(_ sequences: Set<UInt64>) throws


    /// Housekeeping a long-lived process runs when an edit is done, off its path: the SQLite
    /// store's checkpoint (``SQLiteDocumentStore/checkpointIfDue()``). Others have none.
    func checkpointIfDue()

    /// Rewrites the compacted state of what saves appended (each text's state, with the
    /// operations appended since folded in), off a save's path: ``checkpointIfDue()`` runs it
    /// when due. The contents do not change; a crash at any point leaves them as they were.
    func compact() throws(StoreError)

    /// Releases the store. Later calls throw ``StoreError/Kind/closed``. Idempotent.
    func close()

    /// This store, open, after its folder was renamed so that its file is at `url` now (an
    /// empty store made and opened ahead, given to a new document: the engine's spare stores).
    /// This object is not used again. Nil when the backend cannot carry an open store across a
    /// rename: the caller closes it and opens the store at `url`.
    func relocated(to url: URL) -> (any DocumentStore)?
}

extension DocumentStore {
    public func checkpointIfDue() {}

    public func dropShipped(_ sequences: Set<UInt64>) throws {
        try write(durable: false) { contents in
            for sequence in sequences { contents.sync.outbox[sequence] = nil }
        }
    }

    public func compact() throws(StoreError) {}

    public func relocated(to url: URL) -> (any DocumentStore)? { nil }

    public func write<T>(durable: Bool, notingObjects: Bool, _ body: (inout StoreContents) throws -> T) throws -> T {
        try write(durable: durable, body)
    }

    /// A durable ``write(durable:_:)``.
    public func write<T>(_ body: (inout StoreContents) throws -> T) throws -> T {
        try write(durable: true, body)
    }

    /// Applies a set of changes as one transaction, without any conflict rule.
    public func apply(_ changes: [Change]) throws {
        try write { contents in contents.graph.apply(changes) }
    }

    /// The object graph alone.
    public func graph() throws(StoreError) -> ObjectGraph { try read().graph }
}

/// Everything a store holds.
public struct StoreContents: Hashable, Sendable, Codable {
    public var graph: ObjectGraph
    public var sync: SyncBookkeeping
    /// The text operations applied in this transaction (``applyText(_:object:attribute:seed:)``),
    /// which the store appends instead of rewriting each changed text. Empty in every value a
    /// store returns; not compared, hashed or coded.
    public var textJournal = TextJournal()
    /// The objects this transaction inserted, changed or deleted, when its store asked the
    /// body to note them (``DocumentStore/write(durable:notingObjects:_:)``); nil otherwise.
    /// Nil in every value a store returns; not compared, hashed or coded.
    public var objectJournal: Set<ObjectID>?

    /// Notes that this transaction inserted, changed or deleted `id` (nothing when the store
    /// did not ask: ``objectJournal``).
    public mutating func noteObject(_ id: ObjectID) {
        objectJournal?.insert(id)
    }

    public init(graph: ObjectGraph = ObjectGraph(), sync: SyncBookkeeping = SyncBookkeeping()) {
        self.graph = graph
        self.sync = sync
    }

    private enum CodingKeys: String, CodingKey { case graph, sync }

    public static func == (lhs: StoreContents, rhs: StoreContents) -> Bool { lhs.graph == rhs.graph && lhs.sync == rhs.sync }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(graph)
        hasher.combine(sync)
    }
}

/// The sync bookkeeping a store keeps beside its data, committed in the same transactions.
public struct SyncBookkeeping: Hashable, Sendable, Codable {
    /// Per device, the highest sequence number applied with every lower one applied too.
    public var applied: [DeviceID: UInt64]
    /// Per object and attribute, the stamp of the write that set the current value.
    public var stamps: [ObjectID: [String: Stamp]]
    /// Deleted objects and the stamp of their deletion. A tombstoned object never comes back.
    public var tombstones: [ObjectID: Stamp]
    /// This device's hybrid logical clock for the document.
    public var clock: HybridLogicalClock
    /// Logs committed here but not yet known to be in the container, by sequence number.
    public var outbox: [UInt64: Data]
    /// Small named values (the document's own metadata, the schema version).
    public var values: [String: String]
    /// Per object and text attribute, the replicated sequence whose visible text is the
    /// attribute's value in the graph (only for attributes that merge as text, in a container
    /// of format 2).
    public var texts: [ObjectID: [String: TextSequence]]
    /// The saves that changed a text, as this device applied them, oldest first, each with what
    /// undoes it: `multidoc history`, `show --at`, `revert`. The last 1,000, and any of the
    /// last 30 days (``TextSave/kept(_:)``).
    public var history: [TextSave] = []

    public init(
        applied: [DeviceID: UInt64] = [:], stamps: [ObjectID: [String: Stamp]] = [:],
        tombstones: [ObjectID: Stamp] = [:], clock: HybridLogicalClock = HybridLogicalClock(),
        outbox: [UInt64: Data] = [:], values: [String: String] = [:], texts: [ObjectID: [String: TextSequence]] = [:]
    ) {
        self.applied = applied
        self.stamps = stamps
        self.tombstones = tombstones
        self.clock = clock
        self.outbox = outbox
        self.values = values
        self.texts = texts
    }

    private enum CodingKeys: String, CodingKey { case applied, stamps, tombstones, clock, outbox, values, texts, history }

    /// Files written before texts existed have none.
    public init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: CodingKeys.self)
        applied = try keyed.decode([DeviceID: UInt64].self, forKey: .applied)
        stamps = try keyed.decode([ObjectID: [String: Stamp]].self, forKey: .stamps)
        tombstones = try keyed.decode([ObjectID: Stamp].self, forKey: .tombstones)
        clock = try keyed.decode(HybridLogicalClock.self, forKey: .clock)
        outbox = try keyed.decode([UInt64: Data].self, forKey: .outbox)
        values = try keyed.decode([String: String].self, forKey: .values)
        texts = try keyed.decodeIfPresent([ObjectID: [String: TextSequence]].self, forKey: .texts) ?? [:]
        history = try keyed.decodeIfPresent([TextSave].self, forKey: .history) ?? []
    }
}

/// One save that changed a text, as a device applied it: who made it, when, how much it
/// added and removed, and the replacements that turn the text after it back into the text
/// before it.
public struct TextSave: Hashable, Sendable, Codable {
    /// This device's number for the entry (1, 2, 3 … in the order it applied them).
    public var id: UInt64
    public var object: ObjectID
    public var attribute: String
    /// The device that made the save, its name, and its log's sequence (0: a baseline).
    public var device: DeviceID
    public var deviceName: String
    public var sequence: UInt64
    public var committedAt: Date
    /// Unicode scalars added and removed.
    public var added: Int
    public var removed: Int
    /// In the text after the save, from the last position to the first: replace `length`
    /// scalars at `at` with `text` to get the text before it.
    public var undo: [TextUndo]

    public init(
        id: UInt64, object: ObjectID, attribute: String, device: DeviceID, deviceName: String, sequence: UInt64, committedAt: Date,
        added: Int, removed: Int, undo: [TextUndo]
    ) {
        self.id = id
        self.object = object
        self.attribute = attribute
        self.device = device
        self.deviceName = deviceName
        self.sequence = sequence
        self.committedAt = committedAt
        self.added = added
        self.removed = removed
        self.undo = undo
    }

    /// How many saves are always kept, and for how long any save is kept.
    public static let keptSaves = 1_000
    public static let keptFor: TimeInterval = 30 * 86_400

    /// The entries to keep of `history`: the last ``keptSaves``, and any made within
    /// ``keptFor`` of the newest.
    public static func kept(_ history: [TextSave]) -> [TextSave] {
        guard history.count > keptSaves, let newest = history.last?.committedAt else { return history }
        let cutoff = newest.addingTimeInterval(-keptFor)
        let firstKept = history.count - keptSaves
        // Every save calls this: when nothing is old enough to go (a history of the last 30
        // days), the history is returned as it is rather than copied.
        guard history[..<firstKept].contains(where: { $0.committedAt < cutoff }) else { return history }
        return history.enumerated().filter { $0.offset >= firstKept || $0.element.committedAt >= cutoff }.map(\.element)
    }

    /// The entry for a change of `text` from `old` to `new` (nil when they are equal).
    public static func change(
        from old: String, to new: String, id: UInt64, object: ObjectID, attribute: String, device: DeviceID, deviceName: String,
        sequence: UInt64, committedAt: Date
    ) -> TextSave? {
        guard old != new else { return nil }
        let before = Array(old.unicodeScalars), after = Array(new.unicodeScalars)
        let hunks = ScalarDiff.hunks(from: before, to: after)
        var undo: [TextUndo] = []
        for hunk in hunks.reversed() {
            var text = String.UnicodeScalarView()
            text.append(contentsOf: before[hunk.old])
            undo.append(TextUndo(at: hunk.new.lowerBound, length: hunk.new.count, text: String(text)))
        }
        return TextSave(
            id: id, object: object, attribute: attribute, device: device, deviceName: deviceName, sequence: sequence,
            committedAt: committedAt, added: hunks.reduce(0) { $0 + $1.new.count }, removed: hunks.reduce(0) { $0 + $1.old.count },
            undo: undo)
    }

    /// The entry for a save whose operations made `changes` to a text, in order
    /// (``Text/TextSequence/recordingChanges(_:)``): built from what changed, without comparing
    /// the texts. Nil when nothing changed.
    public static func change(
        made changes: [TextChange], id: UInt64, object: ObjectID, attribute: String, device: DeviceID, deviceName: String,
        sequence: UInt64, committedAt: Date
    ) -> TextSave? {
        // A deletion and an insertion at one place are one replacement.
        var steps: [TextChange] = []
        for change in changes where !change.removed.isEmpty || !change.inserted.isEmpty {
            if let last = steps.last, last.inserted.isEmpty, !last.removed.isEmpty, change.removed.isEmpty, change.position == last.position {
                steps[steps.count - 1].inserted = change.inserted
            } else {
                steps.append(change)
            }
        }
        guard !steps.isEmpty else { return nil }
        func string(_ scalars: [Unicode.Scalar]) -> String {
            var view = String.UnicodeScalarView()
            view.append(contentsOf: scalars)
            return String(view)
        }
        // Undone from the last change to the first: each undo finds the text as its change left it.
        let undo = steps.reversed().map { TextUndo(at: $0.position, length: $0.inserted.count, text: string($0.removed)) }
        return TextSave(
            id: id, object: object, attribute: attribute, device: device, deviceName: deviceName, sequence: sequence, committedAt: committedAt,
            added: steps.reduce(0) { $0 + $1.inserted.count }, removed: steps.reduce(0) { $0 + $1.removed.count }, undo: undo)
    }

    /// The text before this save, from the text after it; nil if `text` is not a text this
    /// save could have left (it does not reach the positions the save changed).
    public func undone(_ text: String) -> String? {
        var scalars = Array(text.unicodeScalars)
        for step in undo {
            guard step.at >= 0, step.length >= 0, step.at + step.length <= scalars.count else { return nil }
            scalars.replaceSubrange(step.at..<(step.at + step.length), with: step.text.unicodeScalars)
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }
}

/// One replacement of ``TextSave/undo``.
public struct TextUndo: Hashable, Sendable, Codable {
    public var at: Int
    public var length: Int
    public var text: String

    public init(at: Int, length: Int, text: String) {
        self.at = at
        self.length = length
        self.text = text
    }
}
