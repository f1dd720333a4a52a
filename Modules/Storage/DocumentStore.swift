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

    /// Makes every commit so far survive a power loss.
    func sync() throws(StoreError)

    /// Releases the store. Later calls throw ``StoreError/Kind/closed``. Idempotent.
    func close()
}

extension DocumentStore {
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

    public init(graph: ObjectGraph = ObjectGraph(), sync: SyncBookkeeping = SyncBookkeeping()) {
        self.graph = graph
        self.sync = sync
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

    private enum CodingKeys: String, CodingKey { case applied, stamps, tombstones, clock, outbox, values, texts }

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
    }
}
