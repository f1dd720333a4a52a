#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
import Synchronization
import Text

// Local saves: a commit stamps, merges and stages its log in the store's outbox, in one transaction.
extension Replicator {
    // MARK: Local saves

    /// Commits local changes as one transaction with its log: stamps them with the document's
    /// clock, applies them under the merge rule, and (with `ship`) keeps the encoded log in the
    /// store's outbox in the same transaction, so a crash before ``flush(_:in:)`` loses nothing.
    @discardableResult
    public func commit(_ changes: [Change], document: DocumentID, to store: any DocumentStore, ship: Bool) throws -> LocalCommit {
        try commit(document: document, to: store, ship: ship) { _ in changes }
    }

    /// Commits changes made from the graph as it is inside the transaction: a read-modify-write
    /// (an append, say) that another process of the device cannot interleave with, so neither
    /// save overwrites the other. `makeChanges` may throw to commit nothing.
    public func commit(
        document: DocumentID, to store: any DocumentStore, ship: Bool, durable: Bool = true, _ makeChanges: (ObjectGraph) throws -> [Change]
    ) throws -> LocalCommit {
        try Self.commit(
            document: document, device: device, format: format, keys: container.keys, now: now, to: store, ship: ship, durable: durable, makeChanges)
    }

    /// Commits local changes without a container (a local document, or a cloud one whose
    /// container is away): the same transaction as ``commit(document:to:ship:_:)``, which keeps
    /// the log in the outbox when `ship` is set.
    ///
    /// `durable: false` only for a save whose log is written into the container, durably, before
    /// the save is acknowledged, and whose store is synced if that fails: the log is then the
    /// save's one durable step (Docs/RELIABILITY.md, "One durable step per save").
    public static func commit(
        document: DocumentID, device: DeviceIdentity, format: LogFormat, keys: ContainerKeys? = nil, now: @Sendable () -> Date,
        to store: any DocumentStore, ship: Bool, durable: Bool = true, _ makeChanges: (ObjectGraph) throws -> [Change]
    ) throws -> LocalCommit {
        try commit(document: document, device: device, format: format, keys: keys, now: now, to: store, ship: ship, durable: durable) { graph in
            (try makeChanges(graph), [])
        }
    }

    /// ``commit(document:device:format:keys:now:to:ship:durable:_:)`` of changes and edits of
    /// texts at known places (``TextEdit``): each edit becomes operations made from its
    /// position, with no look at the whole text.
    /// - Throws: `TextError.positionOutOfRange` for an edit past the end of its text (nothing
    ///   is committed).
    ///
    /// `writingLogAheadTo`: a container the save's log is written and synced beside its slot in,
    /// on a thread of its own, while the store commits (``LogWriteAhead``); the flush that
    /// follows puts it in place (``flush(_:in:after:)``). Nothing is left of it if the commit
    /// fails.
    /// `preparingNextLog`: the next log's file is made with it (``preparesNextLog``).
    /// `standby`: the writer's thread for that log, woken by a caller that began the save
    /// earlier (one is woken here otherwise); let go of here if the save writes no log.
    public static func commit(
        document: DocumentID, device: DeviceIdentity, format: LogFormat, keys: ContainerKeys? = nil, now: @Sendable () -> Date,
        to store: any DocumentStore, ship: Bool, durable: Bool = true, writingLogAheadTo container: Container? = nil, preparingNextLog: Bool = false,
        standby woken: StandbyWriter? = nil, editing makeSave: (ObjectGraph) throws -> (changes: [Change], edits: [TextEdit])
    ) throws -> LocalCommit {
        let committedAt = now()
        let wall = ContainerBounds.clampedWall(committedAt)
        var started: LogWriteAhead?
        // The writer's thread woken now, while the save stages its log.
        let standby = container.map { woken ?? StandbyWriter(container: $0, document: document, device: device.id) }
        defer { standby?.cancel() }
        do {
            return try store.write(durable: durable) { contents in
                let (changes, edits) = try makeSave(contents.graph)
                var commit = try stage(
                    changes, edits: edits, document: document, device: device, format: format, keys: keys, wall: wall,
                    committedAt: committedAt, ship: ship, in: &contents)
                if ship {
                    commit.outbox = contents.sync.outbox
                    if let container {
                        started = LogWriteAhead.starting(
                            for: commit, container: container, document: document, device: device.id, preparingNext: preparingNextLog, on: standby)
                        commit.writeAhead = started
                    }
                }
                return commit
            }
        } catch {
            started?.discard()
            throw error
        }
    }

    /// The inside of a local commit's transaction: stamps `changes` with the document's clock,
    /// applies them under the merge rule, counts the save and (with `ship`) keeps its log in the
    /// outbox. For a caller that commits several saves in one transaction.
    ///
    /// In `format` 2 a new value of a text attribute becomes operations on its sequence (a
    /// minimal diff from the text this device has), so concurrent edits merge. A text that is
    /// a sequence here is always written so, whatever `format` says (``format(_:writing:in:)``).
    ///
    /// A save is what the store shows after it: when the merge rule would not leave every
    /// value it writes in the graph, it throws ``SyncError/Kind/saveRefused`` and nothing is
    /// committed, rather than report saved a save that changed nothing.
    public static func stage(
        _ changes: [Change], edits: [TextEdit] = [], document: DocumentID, device: DeviceIdentity, format: LogFormat, keys: ContainerKeys? = nil,
        wall: UInt64, committedAt: Date, ship: Bool, in contents: inout StoreContents
    ) throws -> LocalCommit {
        var changes = changes
        // An edit of a text that has no sequence and will get none (format 1): its new value.
        let byValue = format.version < 2 ? edits.filter { contents.sync.texts[$0.object]?[$0.attribute] == nil } : []
        for edit in byValue {
            guard let record = contents.graph.objects[edit.object] else { continue }
            let text = try edit.applied(to: record.attributes[edit.attribute]?.stringValue ?? "")
            changes.append(.update(edit.object, attributes: [edit.attribute: .string(text)]))
        }
        let edits = byValue.isEmpty ? edits : edits.filter { edit in !byValue.contains { $0.object == edit.object && $0.attribute == edit.attribute } }
        let written = TransactionLog.logged(changes, in: contents.graph)
        var logged = written
        var textsApplied: [TextJournal.Key: Merge.AppliedText] = [:]
        let format = edits.isEmpty ? Self.format(format, writing: logged, in: contents) : LogFormat(version: max(2, format.version), container: format.container)
        if format.version >= 2 {
            var salt = FNV1a()
            salt.mix(uuid: device.id.uuid)
            salt.mix((contents.sync.applied[device.id] ?? 0) &+ 1)
            salt.mix(wall)
            logged = try textOperations(logged, by: Agent(device.id), salt: salt, in: contents)
            if editsApplyInPlace(edits, logged: logged) {
                (logged, textsApplied) = try applyEdits(edits, adding: logged, by: Agent(device.id), salt: salt, in: &contents)
            } else {
                logged = try textOperations(edits, adding: logged, by: Agent(device.id), salt: salt, in: contents)
            }
        }
        let commit = try stage(
            logged: logged, document: document, device: device, format: format, keys: keys, wall: wall, committedAt: committedAt, ship: ship,
            textsApplied: textsApplied, in: &contents)
        if let problem = unapplied(written, in: contents) {
            throw SyncError(.saveRefused, path: document.description, detail: "\(problem), so nothing was saved")
        }
        return commit
    }

    /// The format a save of `changes` is written in: `format`, or 2 when the save carries text
    /// operations or writes a text that is already a sequence in `contents`. Such a text shows
    /// its sequence and never a plain value (``Merge``): written in format 1 the save would
    /// change nothing, here or on any peer. A store holds a sequence only after format 2 logs
    /// or baselines of its document, which every device that reads the document reads.
    static func format(_ format: LogFormat, writing changes: [LoggedChange], in contents: StoreContents) -> LogFormat {
        guard format.version < 2 else { return format }
        let needsOperations = changes.contains { change in
            if let texts = change.texts, !texts.isEmpty { return true }
            guard let entity = change.entity, let sequences = contents.sync.texts[change.id] else { return false }
            return (change.attributes ?? [:]).keys.contains { name in
                Merge.strategy(entity: entity, attribute: name) == .text && sequences[name] != nil
            }
        }
        return needsOperations ? LogFormat(version: 2, container: format.container) : format
    }

    /// Why `contents` does not hold what `changes` wrote (each object's attributes at their last
    /// values, each deleted object gone), or nil when it does.
    static func unapplied(_ changes: [LoggedChange], in contents: StoreContents) -> String? {
        var written: [ObjectID: [String: AttributeValue]] = [:]
        var deleted: Set<ObjectID> = []
        for change in changes {
            switch change.op {
            case .delete:
                written[change.id] = nil
                deleted.insert(change.id)
            case .insert, .update:
                deleted.remove(change.id)
                written[change.id, default: [:]].merge(change.attributes ?? [:]) { _, new in new }
            }
        }
        if let id = deleted.first(where: { contents.graph.objects[$0] != nil }) {
            return "\(id) would still be there after its delete"
        }
        for (id, attributes) in written {
            guard let record = contents.graph.objects[id] else {
                return contents.sync.tombstones[id] != nil ? "\(id) was deleted" : "\(id) would not be there after the save"
            }
            for (name, value) in attributes {
                var held = record.attributes[name]
                // A text saved empty as operations is none at all: its sequence holds nothing.
                if held == nil, Merge.strategy(entity: record.entity, attribute: name) == .text { held = .string("") }
                guard same(held, value) else { return "the \(name) of \(id) would not hold what was saved" }
            }
        }
        return nil
    }

    /// Equal values, a NaN equal to itself.
    static func same(_ held: AttributeValue?, _ written: AttributeValue) -> Bool {
        if held == written { return true }
        if case .double(let a)? = held, case .double(let b) = written { return a.isNaN && b.isNaN }
        return false
    }

    /// ``stage(_:document:device:format:wall:committedAt:ship:in:)`` for changes already in
    /// their logged form (text operations included): the saves moved to a new device identity.
    ///
    /// `keeping` stamps the changes with a stamp made before (wall and counter, this device):
    /// saves moved to a new device identity keep their place among everyone's edits.
    public static func stage(
        logged: [LoggedChange], document: DocumentID, device: DeviceIdentity, format: LogFormat, keys: ContainerKeys? = nil, wall: UInt64,
        committedAt: Date, ship: Bool, keeping earlier: Stamp? = nil, in contents: inout StoreContents
    ) throws -> LocalCommit {
        try stage(
            logged: logged, document: document, device: device, format: format, keys: keys, wall: wall, committedAt: committedAt, ship: ship,
            keeping: earlier, textsApplied: [:], in: &contents)
    }

    /// ``stage(logged:document:device:format:keys:wall:committedAt:ship:keeping:in:)`` of a log
    /// whose operations of some texts are already applied to `contents` (`textsApplied`).
    static func stage(
        logged: [LoggedChange], document: DocumentID, device: DeviceIdentity, format: LogFormat, keys: ContainerKeys? = nil, wall: UInt64,
        committedAt: Date, ship: Bool, keeping earlier: Stamp? = nil, textsApplied: [TextJournal.Key: Merge.AppliedText],
        in contents: inout StoreContents
    ) throws -> LocalCommit {
        let format = Self.format(format, writing: logged, in: contents)
        let stamp: Stamp
        if let earlier {
            stamp = Stamp(wall: earlier.wall, counter: earlier.counter, device: device.id)
            contents.sync.clock.observe(stamp)
        } else {
            stamp = contents.sync.clock.tick(now: wall, device: device.id)
        }
        let last = contents.sync.applied[device.id] ?? 0
        guard last < ContainerBounds.maximumSequence else {
            throw SyncError(.saveRefused, path: document.description, detail: "this device has made \(last) saves of the document, the most a device can")
        }
        let sequence = last + 1
        var log = TransactionLog(
            format: format.version, document: document, device: device.id, sequence: sequence, stamp: stamp,
            committedAt: committedAt, deviceName: device.name, changes: logged)
        if format.version >= 2 { log.dependencies = contents.sync.applied.filter { $0.key != device.id && $0.value > 0 } }
        let summary = Merge.apply(log, to: &contents, textsApplied: textsApplied)
        contents.sync.applied[device.id] = sequence
        // A device never writes a log its peers would refuse: checked before anything is
        // committed (the transaction rolls back with the throw).
        let data = try encoded(log, format: format, keys: keys)
        if ship { contents.sync.outbox[sequence] = data }
        return LocalCommit(log: log, summary: summary)
    }

    /// A log's bytes as a device ships them: format 2 in an envelope (sealed with `keys` in a
    /// signed container), format 1 as JSON.
    ///
    /// The bytes are read back by the decoder every reader runs (``TransactionLog/decode(_:document:device:sequence:refusing:)``)
    /// before they are returned: writer and readers share one set of limits (file size, run
    /// lengths, counts, names), and a log a peer would refuse is never written.
    /// - Throws: ``SyncError/Kind/saveRefused`` saying what a reader would refuse.
    static func encoded(_ log: TransactionLog, format: LogFormat, keys: ContainerKeys?) throws -> Data {
        let plain: Data
        var envelope: ContainerEnvelope?
        if format.version >= 2 {
            let made = log.envelope(container: format.container)
            envelope = made
            plain = Data(made.encoded)
        } else {
            plain = try log.encoded()
        }
        let refused = { (detail: String) in
            SyncError(.saveRefused, path: log.document.description, detail: "no device would read its log: \(detail)")
        }
        guard plain.count <= TransactionLog.maximumFileSize else {
            throw refused("it would be \(plain.count / 1_048_576) MiB, and no device reads one over \(TransactionLog.maximumFileSize / 1_048_576) MiB; save it in smaller parts")
        }
        do {
            _ = try TransactionLog.decode(plain, document: log.document, device: log.device, sequence: log.sequence)
        } catch {
            throw refused(error.reason)
        }
        guard let envelope, let keys else { return plain }
        let sealed = Data(try keys.seal(envelope))
        guard sealed.count <= TransactionLog.maximumFileSize else {
            throw refused("sealed, it would be \(sealed.count / 1_048_576) MiB, and no device reads one over \(TransactionLog.maximumFileSize / 1_048_576) MiB; save it in smaller parts")
        }
        return sealed
    }

    /// Turns new values of text attributes into operations on their sequences: the edits from
    /// the text this device has to the new one, made by `agent`.
    ///
    /// Each save's new ids start a hash-chosen distance (below 2³²) past the agent's last ones:
    /// a copy of a device's root (which has the same agent and the same counters) saving other
    /// text then mints other ids, instead of ids its original also used for other characters
    /// (Docs/CONTAINER-FORMAT.md). `salt` mixes the device, the save and its time; the new
    /// text is mixed in here.
    static func textOperations(_ changes: [LoggedChange], by agent: Agent, salt: FNV1a, in contents: StoreContents) throws -> [LoggedChange] {
        // A text written once in the save (the usual case) is diffed against the store's own
        // state, which is not copied; one written twice goes through a working copy.
        var writes: [TextJournal.Key: Int] = [:]
        for change in changes where change.op != .delete {
            guard let entity = change.entity else { continue }
            for name in (change.attributes ?? [:]).keys where Merge.strategy(entity: entity, attribute: name) == .text {
                writes[TextJournal.Key(object: change.id, attribute: name), default: 0] += 1
            }
        }
        var working: [ObjectID: [String: TextSequence]] = [:]
        return try changes.map { change in
            guard change.op != .delete, let entity = change.entity, let attributes = change.attributes else {
                if change.op == .delete { working[change.id] = nil }
                return change
            }
            var result = change
            for (name, value) in attributes where Merge.strategy(entity: entity, attribute: name) == .text {
                guard let text = value.stringValue else { continue }
                var hash = salt
                for byte in text.utf8 { hash.mix(byte: byte) }
                let operations: [TextOperation]
                if writes[TextJournal.Key(object: change.id, attribute: name)] == 1 {
                    let seeded = contents.sync.texts[change.id]?[name] == nil ? Merge.seeded(from: contents.graph.objects[change.id]?.attributes[name]) : nil
                    operations = try Self.operations(to: text, in: seeded ?? contents.sync.texts[change.id]?[name] ?? TextSequence(), by: agent, hash: hash)
                } else {
                    var sequence = working[change.id]?[name] ?? contents.sync.texts[change.id]?[name]
                        ?? Merge.seeded(from: contents.graph.objects[change.id]?.attributes[name])
                    let next = sequence.nextCounter(for: agent)
                    if next < UInt64.max >> 1 { sequence.skipCounters(for: agent, to: next + (hash.value & 0xFFFF_FFFF)) }
                    operations = try sequence.edits(to: text, by: agent)
                    working[change.id, default: [:]][name] = sequence
                }
                result.attributes?[name] = nil
                if !operations.isEmpty { result.texts = (result.texts ?? [:]).merging([name: operations]) { $0 + $1 } }
            }
            return result
        }
    }

    /// Where a save's new ids start in `sequence`: a hash-chosen distance past the agent's last.
    static func firstCounter(in sequence: TextSequence, by agent: Agent, hash: FNV1a) -> UInt64 {
        let next = sequence.nextCounter(for: agent)
        return next < UInt64.max >> 1 ? next + (hash.value & 0xFFFF_FFFF) : next
    }

    /// The operations that make `sequence`'s text `text` (one diff), without changing it.
    static func operations(to text: String, in sequence: TextSequence, by agent: Agent, hash: FNV1a) throws(TextError) -> [TextOperation] {
        try sequence.operations(to: text, by: agent, from: firstCounter(in: sequence, by: agent, hash: hash))
    }
}
