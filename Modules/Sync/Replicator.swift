#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
import Synchronization
import Text

/// Ships one device's saves into the container and imports its peers' logs: the log-shipping
/// half of the Sync module, one document at a time. Stateless apart from its configuration,
/// so every process of a device can use its own.
public struct Replicator: Sendable {
    public let container: Container
    public let device: DeviceIdentity
    /// A device writes a baseline when this many logs are not yet covered by one
    /// (Ensembles rebases past 50 events; logs are smaller here, so 100).
    public var baselineThreshold: Int
    /// The most logs applied in one store transaction (bounds memory during a big import).
    public var importBatchSize: Int
    /// What ``commit(document:to:ship:_:)`` writes: the container's format and identity (the
    /// Engine commits through the static `commit` with what the device file remembers).
    public var format: LogFormat = .version1
    /// Container identities a reset replaced: a format 2 log naming one of them is a left-over
    /// of the old container (a replica's stale folder) and is refused.
    public var refusedContainers: Set<UUID> = []
    /// When this machine started (a power loss can only have undone commits made before): only
    /// such logs of this device are taken back by ``flush(_:in:)`` (`resequence`).
    public var bootedAt: @Sendable () -> Date = Replicator.systemBootTime
    /// After shipping a document's logs, make the next one's file ahead (an empty, synced
    /// `.tmp-<sequence>.log.spare` beside them, which the next ``flush(_:in:)`` fills): the
    /// next save makes no file while it waits. For long-lived processes, whose next save comes.
    public var preparesNextLog = false
    private let now: @Sendable () -> Date

    /// The changes and text operations one import transaction reads at most (past its last
    /// log): a backlog of 4,000 saves of 64 edits each was 260,000 operations in one transaction.
    public static let importBatchChanges = 20_000

    public init(container: Container, device: DeviceIdentity, baselineThreshold: Int = 100, importBatchSize: Int = 5_000, now: @escaping @Sendable () -> Date = Date.init) {
        self.container = container
        self.device = device
        self.baselineThreshold = baselineThreshold
        self.importBatchSize = importBatchSize
        self.now = now
    }

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
    public static func commit(
        document: DocumentID, device: DeviceIdentity, format: LogFormat, keys: ContainerKeys? = nil, now: @Sendable () -> Date,
        to store: any DocumentStore, ship: Bool, durable: Bool = true, editing makeSave: (ObjectGraph) throws -> (changes: [Change], edits: [TextEdit])
    ) throws -> LocalCommit {
        let committedAt = now()
        let wall = ContainerBounds.clampedWall(committedAt)
        return try store.write(durable: durable) { contents in
            let (changes, edits) = try makeSave(contents.graph)
            return try stage(
                changes, edits: edits, document: document, device: device, format: format, keys: keys, wall: wall,
                committedAt: committedAt, ship: ship, in: &contents)
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
        let format = edits.isEmpty ? Self.format(format, writing: logged, in: contents) : LogFormat(version: max(2, format.version), container: format.container)
        if format.version >= 2 {
            var salt = FNV1a()
            salt.mix(uuid: device.id.uuid)
            salt.mix((contents.sync.applied[device.id] ?? 0) &+ 1)
            salt.mix(wall)
            logged = try textOperations(logged, by: Agent(device.id), salt: salt, in: contents)
            logged = try textOperations(edits, adding: logged, by: Agent(device.id), salt: salt, in: contents)
        }
        let commit = try stage(
            logged: logged, document: document, device: device, format: format, keys: keys, wall: wall, committedAt: committedAt, ship: ship,
            in: &contents)
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
    private static func same(_ held: AttributeValue?, _ written: AttributeValue) -> Bool {
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
        let summary = Merge.apply(log, to: &contents)
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

    /// `logged` with the operations of `edits` added to the changes of their objects: each made
    /// from its position in the text as the store holds it. Several edits of one text in a save
    /// apply one after the other, on a working copy.
    static func textOperations(_ edits: [TextEdit], adding logged: [LoggedChange], by agent: Agent, salt: FNV1a, in contents: StoreContents) throws -> [LoggedChange] {
        guard !edits.isEmpty else { return logged }
        var logged = logged
        var working: [TextJournal.Key: TextSequence] = [:]
        for (index, edit) in edits.enumerated() {
            guard let record = contents.graph.objects[edit.object] else { continue }
            let key = TextJournal.Key(object: edit.object, attribute: edit.attribute)
            let again = edits[(index + 1)...].contains { $0.object == edit.object && $0.attribute == edit.attribute }
            // Taken out of `working`, so the edits after the first change the one working copy
            // in place (a copy per edit would copy the whole state each time).
            var stored = working.removeValue(forKey: key) ?? contents.sync.texts[edit.object]?[edit.attribute] ?? Merge.seeded(from: record.attributes[edit.attribute])
            let (range, scalars) = try edit.resolved(count: stored.count)
            var hash = salt
            hash.mix(UInt64(range.lowerBound))
            for scalar in scalars { hash.mix(UInt64(scalar.value)) }
            let operations = try stored.operations(replacing: range, with: scalars, by: agent, from: firstCounter(in: stored, by: agent, hash: hash))
            if again {
                for operation in operations { try stored.apply(operation) }
                working[key] = stored
            }
            guard !operations.isEmpty else { continue }
            if let at = logged.lastIndex(where: { $0.id == edit.object && $0.op != .delete }) {
                logged[at].texts = (logged[at].texts ?? [:]).merging([edit.attribute: operations]) { $0 + $1 }
                if logged[at].entity == nil { logged[at].entity = record.entity }
            } else {
                logged.append(LoggedChange(op: .update, id: edit.object, entity: record.entity, texts: [edit.attribute: operations]))
            }
        }
        return logged
    }

    /// Writes the store's outbox into the container and clears it. Returns the files written.
    ///
    /// A file at one of this device's slots that is not this device's log (junk, unsigned or
    /// signed by another key in a signed container: it cannot be its own) is stepped over: the
    /// waiting saves are numbered after it, the first saying which log of this device it follows
    /// (``TransactionLog/follows``), so readers step over the same slots (``importPending(_:into:)``).
    /// - Throws: ``SyncError`` if the container cannot be written; the outbox is kept for later.
    @discardableResult
    public func flush(_ document: DocumentID, in store: any DocumentStore) throws -> [URL] {
        try flushReporting(document, in: store).written
    }

    /// ``flush(_:in:)``, with the files it stepped over at this device's slots, for the report.
    public func flushReporting(_ document: DocumentID, in store: any DocumentStore) throws -> (written: [URL], steppedOver: [QuarantinedFile]) {
        var steppedOver: [QuarantinedFile] = []
        let written = try flush(document, in: store, resequencedOnce: false, stepsLeft: 3, steppedOver: &steppedOver)
        return (written, steppedOver)
    }

    private func flush(
        _ document: DocumentID, in store: any DocumentStore, resequencedOnce: Bool, stepsLeft: Int, steppedOver: inout [QuarantinedFile]
    ) throws -> [URL] {
        let outbox = try store.read().sync.outbox
        guard !outbox.isEmpty else { return [] }
        try container.checkAvailable()
        let resealed = try resealed(outbox, in: store)
        var written: [URL] = []
        for (sequence, data) in resealed.sorted(by: { $0.key < $1.key }) {
            let url = try container.writeLog(data, document: document, device: device.id, sequence: sequence)
            // The slot must now hold exactly this log. Anything else there — a file too big to be
            // a log, another log of this sequence (a copy of this device's root, or a restored
            // backup, saved the same numbers; or a forgery) — keeps the log in the outbox.
            let existing: Data?
            do {
                existing = try container.readFile(url, limit: TransactionLog.maximumFileSize)
            } catch {
                existing = nil
            }
            guard existing == data else {
                // This device's own log, shipped before a power loss undid the commit that made
                // it: the saves made since are numbered after the device's logs in place.
                if existing != nil, !resequencedOnce, try resequence(document, from: sequence, in: store) {
                    return try flush(document, in: store, resequencedOnce: true, stepsLeft: stepsLeft, steppedOver: &steppedOver)
                }
                // A file that is not this device's log at all: stepped over.
                if stepsLeft > 0, let squatted = try stepOver(document, from: sequence, in: store) {
                    steppedOver += squatted
                    return try flush(document, in: store, resequencedOnce: resequencedOnce, stepsLeft: stepsLeft - 1, steppedOver: &steppedOver)
                }
                if existing == nil {
                    throw SyncError(.writeFailed, path: url.path, detail: "this device's log \(sequence) goes there, but the file in its place cannot be read; the save waits in the outbox (a copy of this device's root, or a restored backup, saved the same numbers; or the file is forged)", wayOut: .newIdentity)
                }
                throw SyncError(.writeFailed, path: url.path, detail: "a different log with this sequence is already in the container; the save waits in the outbox (a copy of this device's root, or a restored backup, saved the same numbers; or the file is forged)", wayOut: .newIdentity)
            }
            written.append(url)
        }
        // Not synced: a power loss that undoes it leaves the logs in the outbox, and shipping
        // them again finds the same bytes in place.
        let sent = Set(outbox.keys)
        try store.write(durable: false) { contents in
            for sequence in sent { contents.sync.outbox[sequence] = nil }
        }
        if preparesNextLog, let last = sent.max(), last < UInt64.max {
            // Not synced: its folder is an old one, synced by every log's write anyway, and a sync
            // per save would cost a burst of saves more than the file saves the next one.
            try? AtomicFile.makeSpareTemporary(for: container.logURL(document, device: device.id, sequence: last + 1), synced: false)
        }
        return written
    }

    /// Why this device's waiting saves of `document` (its `outbox`) cannot ship, without writing
    /// anything: another file holds the slot the first of them goes to (a copy of this device's
    /// root or a restored backup saved the same numbers, or the file is forged), the error
    /// ``flush(_:in:)`` ends with. Nil when the slot is free or holds that very log, or holds a
    /// log of this device made before this machine started, which a flush takes back.
    public func takenSlot(_ document: DocumentID, outbox: [UInt64: Data]) -> SyncError? {
        guard let first = outbox.keys.min(), let data = outbox[first], container.hasLog(document, device: device.id, sequence: first) else { return nil }
        let url = container.logURL(document, device: device.id, sequence: first)
        guard let existing = try? container.readFile(url, limit: TransactionLog.maximumFileSize), existing == data else {
            if let log = try? container.readLog(document, device: device.id, sequence: first, refusing: refusedContainers), log.committedAt < bootedAt() {
                return nil
            }
            return SyncError(
                .writeFailed, path: url.path,
                detail: "this device's log \(first) waits in the outbox and a different file is in its place (a copy of this device's root, or a restored backup, saved the same numbers; or the file is forged)",
                wayOut: .newIdentity)
        }
        return nil
    }

    /// Takes back this device's own logs from `first` on that the store lost (a save's commit is
    /// not synced when its log is written durably instead, so a power loss can undo the commit
    /// and keep the log), and numbers the saves waiting in the outbox after them, in one synced
    /// commit. False when the container holds no readable log of this device at `first` (a copy
    /// of the root, a restored backup or a forgery put another one there): nothing is changed.
    ///
    /// Without a container at the restart after such a power loss, the next save reused the lost
    /// one's number; with the container back it would wait in the outbox for ever while peers
    /// had the lost save and this device did not. The lost saves and the waiting ones were made
    /// independently of each other (the waiting ones on a store without the lost ones), so
    /// applying the lost ones now and shipping the waiting ones after them is what peers would
    /// have had if the two had been made concurrently on two devices: the merge rule (stamps,
    /// text identities) keeps both. Text identities stay apart: each save's new ones start a
    /// distance past the last ones that hashes the save's time (``textOperations(_:by:salt:in:)``).
    private func resequence(_ document: DocumentID, from first: UInt64, in store: any DocumentStore) throws -> Bool {
        var lost: [TransactionLog] = []
        var next = first
        while next <= ContainerBounds.maximumSequence,
              let log = try? container.readLog(document, device: device.id, sequence: next, refusing: refusedContainers) {
            lost.append(log)
            next += 1
        }
        // Only a log made before this machine started can be one a power loss took from the
        // store; one made since is another copy of this device's root saving (it needs an
        // identity of its own: `multidoc device new-identity`).
        let booted = bootedAt()
        guard !lost.isEmpty, lost.allSatisfy({ $0.committedAt < booted }) else { return false }
        let format = self.format, keys = container.keys
        return try store.write(durable: true) { contents -> Bool in
            let waiting = contents.sync.outbox.filter { $0.key >= first }.sorted { $0.key < $1.key }
            guard !waiting.isEmpty else { return false }
            var renumbered: [(old: UInt64, log: TransactionLog)] = []
            for (old, data) in waiting {
                guard let log = try? container.decodeLog(data, document, device: device.id, sequence: old, refusing: refusedContainers) else { return false }
                renumbered.append((old, log))
            }
            for (old, _) in waiting { contents.sync.outbox[old] = nil }
            var sequence = first + UInt64(lost.count) - 1
            var moved: [UInt64: UInt64] = [:]
            for (old, log) in renumbered {
                sequence += 1
                var log = log
                log.sequence = sequence
                moved[old] = sequence
                contents.sync.outbox[sequence] = try Self.encoded(log, format: LogFormat(version: log.format, container: format.container), keys: keys)
            }
            // The device's text history names the waiting saves by their new numbers (before the
            // lost saves add theirs under the old ones).
            for index in contents.sync.history.indices where contents.sync.history[index].device == device.id {
                if let new = moved[contents.sync.history[index].sequence] { contents.sync.history[index].sequence = new }
            }
            for log in lost { _ = Merge.apply(log, to: &contents) }
            contents.sync.applied[device.id] = sequence
            // The saves taken back were typed first: where they and the saves made meanwhile
            // inserted into the same place, the merge rule alone may have put the later words
            // first. One more save puts them in the order they were typed, on every device.
            let corrections = Self.typingOrderCorrections(lost: lost, waiting: renumbered.map(\.log), device: device.id, in: contents)
            if !corrections.isEmpty {
                let wall = UInt64(max(0, now().timeIntervalSince1970 * 1000))
                _ = try Self.stage(
                    corrections, document: document, device: device, format: format,
                    keys: keys, wall: wall, committedAt: now(), ship: true, in: &contents)
            }
            return true
        }
    }

    /// Numbers the saves waiting in the outbox from `first` on after the files at this device's
    /// slots from `first` on that are not its logs (junk, a forgery: anything that does not read
    /// as this device's log, signed by its key in a signed container), in one synced commit. The
    /// first of them says which log of this device it follows, so every reader steps over the
    /// same slots. Returns those files, or nil when there is nothing to step over (a readable log
    /// of this device is in the way, or the saves are format 1, which cannot say it).
    private func stepOver(_ document: DocumentID, from first: UInt64, in store: any DocumentStore) throws -> [QuarantinedFile]? {
        var squatted: [QuarantinedFile] = []
        var next = first
        while next <= ContainerBounds.maximumSequence, container.hasLog(document, device: device.id, sequence: next) {
            do {
                _ = try container.readLog(document, device: device.id, sequence: next, refusing: refusedContainers)
                return nil
            } catch {
                squatted.append(QuarantinedFile(
                    url: container.logURL(document, device: device.id, sequence: next),
                    reason: "at this device's own log slot \(next), not its log (\(error.reason)): stepped over, its saves go after it"))
            }
            next += 1
        }
        guard !squatted.isEmpty, next <= ContainerBounds.maximumSequence else { return nil }
        let format = self.format, keys = container.keys
        let moved = try store.write(durable: true) { contents -> Bool in
            let waiting = contents.sync.outbox.filter { $0.key >= first }.sorted { $0.key < $1.key }
            guard !waiting.isEmpty else { return false }
            var renumbered: [(old: UInt64, log: TransactionLog)] = []
            for (old, data) in waiting {
                guard let log = try? container.decodeLog(data, document, device: device.id, sequence: old, refusing: refusedContainers),
                      log.format >= 2 else { return false }
                renumbered.append((old, log))
            }
            let (last, overflow) = next.addingReportingOverflow(UInt64(renumbered.count - 1))
            guard !overflow, last <= ContainerBounds.maximumSequence else { return false }
            for (old, _) in waiting { contents.sync.outbox[old] = nil }
            var sequence = next - 1
            var numbers: [UInt64: UInt64] = [:]
            for (index, (old, log)) in renumbered.enumerated() {
                sequence += 1
                var log = log
                var dependencies = log.dependencies ?? [:]
                // The first follows what it followed (the log before `first`, or what an earlier
                // step over named); the rest follow the one before them.
                dependencies[device.id] = index == 0 ? log.follows : nil
                log.dependencies = dependencies
                log.sequence = sequence
                numbers[old] = sequence
                contents.sync.outbox[sequence] = try Self.encoded(log, format: LogFormat(version: log.format, container: format.container), keys: keys)
            }
            for index in contents.sync.history.indices where contents.sync.history[index].device == device.id {
                if let new = numbers[contents.sync.history[index].sequence] { contents.sync.history[index].sequence = new }
            }
            contents.sync.applied[device.id] = max(contents.sync.applied[device.id] ?? 0, sequence)
            return true
        }
        return moved ? squatted : nil
    }

    /// The changes that put, in every text, the inserts of `lost` before those of `waiting`
    /// where the two landed in the same place (``TextSequence/text(placingInGaps:)``).
    static func typingOrderCorrections(
        lost: [TransactionLog], waiting: [TransactionLog], device: DeviceID, in contents: StoreContents
    ) -> [Change] {
        let agent = Agent(device)
        func inserted(_ logs: [TransactionLog]) -> [Range<UInt64>] {
            logs.flatMap { log in
                log.changes.flatMap { change in
                    (change.texts ?? [:]).values.joined().compactMap { operation -> Range<UInt64>? in
                        guard case .insert(let insertion) = operation, insertion.id.agent == agent else { return nil }
                        let (end, overflow) = insertion.id.counter.addingReportingOverflow(UInt64(insertion.scalars.count))
                        return overflow ? nil : insertion.id.counter..<end
                    }
                }
            }
        }
        let earlier = inserted(lost), later = inserted(waiting)
        guard !earlier.isEmpty, !later.isEmpty else { return [] }
        var changes: [Change] = []
        for (object, attributes) in contents.sync.texts.sorted(by: { $0.key < $1.key }) {
            for (name, sequence) in attributes.sorted(by: { $0.key < $1.key }) {
                let ordered = sequence.text { id -> TextSequence.InsertGroup? in
                    guard id.agent == agent else { return nil }
                    if earlier.contains(where: { $0.contains(id.counter) }) { return .earlier }
                    if later.contains(where: { $0.contains(id.counter) }) { return .later }
                    return nil
                }
                if ordered != sequence.text { changes.append(.update(object, attributes: [name: .string(ordered)])) }
            }
        }
        return changes
    }

    /// The wall-clock time this machine started: now less the time since boot.
    @Sendable public static func systemBootTime() -> Date {
        var uptime = timespec()
        guard clock_gettime(CLOCK_BOOTTIME, &uptime) == 0 else { return .distantPast }
        return Date().addingTimeInterval(-(Double(uptime.tv_sec) + Double(uptime.tv_nsec) / 1e9))
    }

    /// Logs saved before the container was signed (or encrypted), or while this device did
    /// not know it was, signed now and kept so in the outbox before they are shipped: a retry
    /// after a crash then writes the same bytes.
    private func resealed(_ outbox: [UInt64: Data], in store: any DocumentStore) throws -> [UInt64: Data] {
        guard container.keys?.policy.isSigned == true else { return outbox }
        var changed: [UInt64: Data] = [:]
        for (sequence, data) in outbox where ContainerEnvelope.isEnvelope(data) {
            if let sealed = try container.resealed(envelope: data) { changed[sequence] = Data(sealed) }
        }
        guard !changed.isEmpty else { return outbox }
        try store.write(durable: true) { contents in
            for (sequence, data) in changed where contents.sync.outbox[sequence] != nil { contents.sync.outbox[sequence] = data }
        }
        return outbox.merging(changed) { $1 }
    }

    /// Makes a document visible to peers: its info file, and (for a document that already has
    /// history, like one moved to the cloud) a baseline so a fresh peer can build it.
    public func publish(_ info: DocumentInfo, store: any DocumentStore, baseline: Bool) throws {
        try container.checkAvailable()
        takeDocumentFolder(info.document)
        let url = container.infoURL(info.document, device: device.id)
        // The baseline before the info file: a document is published once its info file is
        // there, so a process killed in between leaves peers nothing rather than an empty
        // document that no later pass would fill (the next pass publishes it whole).
        if baseline { try writeBaseline(info.document, from: store) }
        if !container.isPublished(info.document, by: device.id) {
            try container.writeJSON(info, to: url)
        }
    }

    // MARK: A document folder made ahead

    /// Makes this device's next document folder ahead, if it is not there: `logs/<device>/` and
    /// empty files for the info file and the first log, under `documents/.spare-<device>`
    /// (a dot name: every reader, `container verify` and the watchers' reports skip it).
    /// Publishing a document then renames it into place and fills those files: no folder or
    /// file is made in the container while `new` waits (on ext4 each creation scans the inodes
    /// freed in the last seconds; five of them were a fifth of new → viewable). Built under a
    /// `.building` name, synced, then renamed, so a spare is always whole.
    public func prepareDocumentFolder() throws {
        try container.checkAvailable()
        let spare = container.spareDocumentDirectory(device: device.id)
        if FileManager.default.fileExists(atPath: Container.logsDirectory(inDocumentFolder: spare, device: device.id).path) { return }
        let building = container.documentsDirectory.appendingPathComponent(".spare-\(device.id).building", isDirectory: false)
        let logs = Container.logsDirectory(inDocumentFolder: building, device: device.id)
        if let problem = container.symlinkProblem(building) { throw SyncError(.writeFailed, path: building.path, detail: problem) }
        do {
            if FileManager.default.fileExists(atPath: building.path) { try FileManager.default.removeItem(at: building) }
            try AtomicFile.makeDirectory(logs, below: container.root)
            try AtomicFile.makeSpareTemporary(for: Container.infoURL(inDocumentFolder: building, device: device.id))
            try AtomicFile.makeSpareTemporary(for: logs.appendingPathComponent(Container.logFileName(1), isDirectory: false))
            try AtomicFile.syncDirectory(logs)
            try AtomicFile.syncDirectory(logs.deletingLastPathComponent())
            try AtomicFile.syncDirectory(building)
            try AtomicFile.move(building, to: spare)
        } catch {
            throw SyncError(.writeFailed, path: spare.path, detail: "\(error)")
        }
    }

    /// Renames this device's document folder made ahead to `document`'s, when that is not there.
    private func takeDocumentFolder(_ document: DocumentID) {
        let folder = container.documentDirectory(document)
        guard !FileManager.default.fileExists(atPath: folder.path) else { return }
        try? AtomicFile.move(container.spareDocumentDirectory(device: device.id), to: folder)
    }

    /// Deletes a document for every device: a tombstone that stays, and the document's folder.
    /// Returns the tombstone written.
    @discardableResult
    public func delete(_ document: DocumentID) throws(SyncError) -> DocumentTombstone {
        let tombstone = try writeTombstone(document, deletedAt: now())
        container.remove(container.documentDirectory(document))
        return tombstone
    }

    /// Writes this device's tombstone of `document` (replacing a damaged one of its own): for a
    /// delete, and again when the tombstone of a deletion this device made or applied is gone
    /// from the container or damaged there, so the deletion still reaches every device.
    @discardableResult
    public func writeTombstone(_ document: DocumentID, deletedAt: Date) throws(SyncError) -> DocumentTombstone {
        try container.checkAvailable()
        // Peers apply tombstones only from registered devices.
        try registerIfMissing()
        let tombstone = DocumentTombstone(document: document, deletedBy: device.id, deletedAt: deletedAt)
        try container.writeJSON(tombstone, to: container.tombstoneURL(document, device: device.id))
        return tombstone
    }

    // MARK: Import

    /// Imports every log of `document` that is waiting in the container, in each device's
    /// sequence order, in as few transactions as possible. Idempotent; stops at a gap (the
    /// missing log is waited for) and at a malformed log (quarantined and reported).
    public func importPending(_ document: DocumentID, into store: any DocumentStore) throws -> ImportReport {
        var report = ImportReport()
        // Only what the plan needs: a copy of the contents kept through the writes below would
        // share their texts, which the import then copies whole to change them.
        var (applied, baselinesRead) = try { () throws(StoreError) in
            let contents = try store.read()
            return (contents.sync.applied, contents.sync.values[Self.baselinesReadKey, default: ""])
        }()
        // The document's folders, listed once for the plan, the progress and the conflict copies.
        let listing = container.listing(document)
        report.listing = listing
        report.conflictCopies = listing.conflictCopies.map {
            QuarantinedFile(url: $0, reason: "conflict copy made by the replication engine, not imported")
        }
        var plan = makePlan(document, listing, applied: applied, report: &report)
        // A peer's baseline not read here yet may hold logs that are in no log file any more (a
        // lost log its writer supplied again: ``lostLogs(_:listing:covered:contents:)``); its
        // name alone cannot tell, so each is read until it is found trusted (one not trusted
        // is reported, and read again, on every import, as before).
        let read = Set(baselinesRead.split(separator: "\n").map(String.init))
        if listing.baselineNames.contains(where: { !$0.hasPrefix("\(device.id)-") && !read.contains($0) }) { plan.needsBaseline = true }

        if plan.needsBaseline {
            // Every baseline is checked (widest first): the widest trusted one is also what a
            // compaction after this import needs, which then reads none again.
            func holdsMore(_ entry: (url: URL, baseline: Baseline)) -> Bool {
                entry.baseline.applied.contains { device, sequence in sequence > (applied[device] ?? 0) }
            }
            var trusted: [(url: URL, baseline: Baseline)] = []
            let baselines = container.baselines(document)
            let evidence = ClaimEvidence(container, document: document, listing: listing, applied: applied, reader: device.id, baselines: baselines.map(\.baseline))
            for entry in baselines {
                if let problem = trustProblem(entry.baseline, evidence: evidence) {
                    // Reported when it would have been used.
                    if holdsMore(entry) { report.quarantined.append(QuarantinedFile(url: entry.url, reason: "baseline not used: \(problem)")) }
                } else {
                    trusted.append(entry)
                }
            }
            report.trustedBaselineCoverage = trusted.first?.baseline.applied ?? [:]
            let useful = trusted.filter(holdsMore)
            if !useful.isEmpty {
                // Not synced, as the logs' imports below (Docs/RELIABILITY.md, "One durable step
                // per save"): the baseline stays in the container, and merging it again is a no-op.
                let summary = try store.write(durable: false) { contents -> ChangeSummary in
                    var summary = ChangeSummary()
                    for entry in useful { summary.formUnion(Merge.merge(entry.baseline, into: &contents)) }
                    return summary
                }
                report.summary.formUnion(summary)
                report.baselinesMerged = useful.count
                applied = try store.read().sync.applied
                plan = makePlan(document, listing, applied: applied, report: &report)
            }
            // Bookkeeping only, in no transaction of its own unless it changed.
            let trustedNames = trusted.map(\.url.lastPathComponent).filter { !$0.hasPrefix("\(device.id)-") }
            if Set(trustedNames) != read {
                let value = trustedNames.sorted().joined(separator: "\n")
                try store.write(durable: false) { $0.sync.values[Self.baselinesReadKey] = value.isEmpty ? nil : value }
            }
        }

        var pending = plan.runs.flatMap { run in run.sequences.map { (run.device, $0) } }
        // Logs that wait for another device's logs they were made on (carried to the next batch).
        var waiting: [TransactionLog] = []
        while !pending.isEmpty {
            let batch = pending.prefix(importBatchSize)
            pending.removeFirst(batch.count)
            var logs: [TransactionLog] = waiting
            var stopped: Set<DeviceID> = []
            // Per device, the slots read that hold no log of it (a damaged file, a forgery): the
            // device goes on past them only when a later log of its says it follows the log
            // before them (its writer stepped over them); else it stops at the first.
            var unreadable: [DeviceID: [QuarantinedFile]] = [:]
            var firstUnreadable: [DeviceID: UInt64] = [:]
            var changesRead = 0
            for (position, (origin, sequence)) in zip(batch.indices, batch) where !stopped.contains(origin) {
                // A batch also ends after ``importBatchChanges`` changes and text operations (the
                // rest waits for the next one): a transaction holds every log it applies, decoded,
                // and a backlog of long logs would otherwise all be in memory at once.
                if changesRead >= Self.importBatchChanges, unreadable.isEmpty {
                    pending.insert(contentsOf: batch[position...], at: 0)
                    break
                }
                let url = container.logURL(document, device: origin, sequence: sequence)
                do {
                    let log = try container.readLog(document, device: origin, sequence: sequence, refusing: refusedContainers)
                    if let skipped = firstUnreadable[origin] {
                        guard log.follows < skipped else {
                            stopped.insert(origin)
                            continue
                        }
                        for file in unreadable[origin] ?? [] {
                            report.quarantined.append(QuarantinedFile(url: file.url, reason: "\(file.reason); stepped over: log \(sequence) of its device says it follows log \(log.follows)"))
                        }
                        unreadable[origin] = nil
                        firstUnreadable[origin] = nil
                    }
                    logs.append(log)
                    changesRead += log.changes.reduce(0) { $0 + 1 + ($1.texts?.values.reduce(0) { $0 + $1.count } ?? 0) }
                } catch {
                    if firstUnreadable[origin] == nil { firstUnreadable[origin] = sequence }
                    // Its writer is the one device sure to hold what it did.
                    unreadable[origin, default: []].append(QuarantinedFile(url: url, reason: error.description, wayOut: .replaceDamaged(writer: origin)))
                }
            }
            // A device whose unreadable slots no later log steps over stops at the first of them.
            for (origin, files) in unreadable {
                stopped.insert(origin)
                if let file = files.first { report.quarantined.append(file) }
            }
            if !stopped.isEmpty { pending.removeAll { stopped.contains($0.0) } }
            guard !logs.isEmpty else { continue }
            // An import is not synced: a power loss that undoes it leaves the logs in the
            // container (they go only once a baseline holds them) and the next import applies them
            // again; any later synced commit of this store (a save) makes it durable first, since
            // both backends keep commits in order (Docs/RELIABILITY.md, "One durable step per save").
            let result = try store.write(durable: false) { contents -> (ChangeSummary, [TransactionLog], [TransactionLog]) in
                var summary = ChangeSummary()
                var applied: [TransactionLog] = []
                // Per device, its logs in sequence order; each round applies every device's
                // logs up to the first whose dependencies are not applied yet.
                var queues = Dictionary(grouping: logs, by: \.device).mapValues { $0.sorted { $0.sequence < $1.sequence }[...] }
                var progress = true
                while progress {
                    progress = false
                    for device in queues.keys.sorted() {
                        while let log = queues[device]?.first {
                            let have = contents.sync.applied[log.device] ?? 0
                            // Another process may have applied some meanwhile: apply only the next one.
                            if log.sequence <= have { queues[device]?.removeFirst(); continue }
                            guard log.isNext(after: have), log.dependenciesMet(by: contents.sync.applied) else { break }
                            queues[device]?.removeFirst()
                            summary.formUnion(Merge.apply(log, to: &contents))
                            contents.sync.applied[log.device] = log.sequence
                            applied.append(log)
                            progress = true
                        }
                    }
                }
                return (summary, applied, queues.values.flatMap { $0 })
            }
            waiting = result.2
            report.summary.formUnion(result.0)
            report.imported.append(contentsOf: result.1.map(ImportedLog.init))
        }
        applied = try store.read().sync.applied
        report.waitingForOthers = waiting.count
        report.dependencyWaits = dependencyWaits(document, waiting: waiting, applied: applied)
        report.gaps = plan.gaps
        report.progress = Self.progress(listing, applied: applied)
        return report
    }

    /// Imports logs a watcher saw arrive, without listing the document's folders: each device's
    /// arrived logs that continue its applied sequence, read and applied in one transaction
    /// (not synced, as ``importPending(_:into:)``'s). Nil when that is not the whole story and
    /// the caller must run ``importPending(_:into:)``: the store has applied nothing yet (a first
    /// import builds from baselines), an arrived log does not continue its device's sequence (a
    /// gap, reported there), a log cannot be read or checked (quarantined there), or it waits
    /// for another device's log. What it imports is exactly what ``importPending(_:into:)`` would
    /// import first, so the two can follow each other in any order.
    ///
    /// Returns the report with the store's contents before (without its texts' sequences) and
    /// after the import (read in its transaction: the caller needs no read of its own).
    public func importArrived(
        _ document: DocumentID, logs arrived: [DeviceID: Set<UInt64>], into store: any DocumentStore
    ) throws -> (report: ImportReport, before: StoreContents, after: StoreContents)? {
        // Not a copy of the contents: one kept through the write below would share its texts,
        // which the import then copies whole to change them.
        let applied = try store.read().sync.applied
        guard !applied.isEmpty else { return nil }
        var logs: [TransactionLog] = []
        for (origin, sequences) in arrived.sorted(by: { $0.key < $1.key }) where origin != device.id {
            var next = (applied[origin] ?? 0) + 1
            // Arrived logs already applied (another process, or a pass, took them) need nothing.
            guard sequences.contains(where: { $0 >= next }) else { continue }
            guard sequences.contains(next) else { return nil }
            while sequences.contains(next) {
                guard let log = try? container.readLog(document, device: origin, sequence: next, refusing: refusedContainers)
                else { return nil }
                logs.append(log)
                next += 1
            }
            // A later log already there (it waited behind a gap the arrival fills) is the whole
            // import's to take.
            if sequences.contains(where: { $0 > next }) || container.hasLog(document, device: origin, sequence: next) { return nil }
        }
        guard !logs.isEmpty else {
            let contents = try store.read()
            return (ImportReport(), contents, contents)
        }
        let outcome = try store.write(durable: false) { contents -> (ChangeSummary, StoreContents, StoreContents)? in
            // Without its texts, which the logs change in place.
            var before = contents
            before.sync.texts = [:]
            // Another process may have applied some meanwhile, or a log waits for another
            // device's: the full import sorts that out, and nothing is changed here then.
            var willHave = contents.sync.applied
            for log in logs {
                guard log.isNext(after: willHave[log.device] ?? 0), log.dependenciesMet(by: willHave) else { return nil }
                willHave[log.device] = log.sequence
            }
            var summary = ChangeSummary()
            for log in logs {
                summary.formUnion(Merge.apply(log, to: &contents))
                contents.sync.applied[log.device] = log.sequence
            }
            return (summary, before, contents)
        }
        guard let (summary, before, after) = outcome else { return nil }
        var report = ImportReport()
        report.summary = summary
        report.imported = logs.map(ImportedLog.init)
        return (report, before, after)
    }

    /// Why a baseline must not stand in for logs, or nil: out of range (see ``ContainerBounds``),
    /// it claims logs nothing else shows were written (``ClaimEvidence``), or it claims a log
    /// still in the container that it does not hold (a baseline of nothing claiming everything
    /// would otherwise replace a document with an empty one).
    func trustProblem(_ baseline: Baseline, evidence: ClaimEvidence) -> String? {
        if let problem = baseline.problem() { return problem }
        if let problem = evidence.problem(claims: baseline.applied, by: baseline.writtenBy) { return problem }
        for (origin, sequence) in baseline.applied where sequence > 0 {
            guard let log = try? container.readLog(baseline.document, device: origin, sequence: sequence) else { continue }
            if !baseline.reflects(log) {
                return "it claims log \(sequence) of device \(origin) but does not hold what that log did"
            }
        }
        return nil
    }

    /// The store value naming the peers' baselines the last import that read baselines
    /// trusted (one name a line): a name not among them makes the next import read them.
    static let baselinesReadKey = "sync.baselines-read"

    private struct Plan {
        var runs: [(device: DeviceID, sequences: [UInt64])] = []
        var needsBaseline = false
        var gaps: [LogGap] = []
    }

    private func makePlan(_ document: DocumentID, _ listing: DocumentListing, applied: [DeviceID: UInt64], report: inout ImportReport) -> Plan {
        var plan = Plan()
        let devices = listing.devices
        if devices.isEmpty || applied.isEmpty { plan.needsBaseline = true }
        // Logs this device never applied may have been pruned (it saved before it registered,
        // so the pruning devices did not wait for it): a baseline covering more than it has
        // applied may hold them.
        if let coverage = listing.largestBaselineCoverage, coverage > applied.values.reduce(0, ContainerBounds.sum) {
            plan.needsBaseline = true
        }
        for origin in devices {
            let have = applied[origin] ?? 0
            let present = (listing.logs[origin] ?? []).filter { $0 > have }
            guard let first = present.first else { continue }
            if first != have + 1, !stepsOver(document, device: origin, at: first, after: have) {
                // The next log is missing: it may still be on its way, or pruned after a baseline.
                plan.needsBaseline = true
                plan.gaps.append(gap(document, device: origin, missing: have + 1, nextPresent: first))
                continue
            }
            var run: [UInt64] = []
            var expected = first
            for sequence in present {
                guard sequence == expected || stepsOver(document, device: origin, at: sequence, after: expected - 1) else {
                    plan.gaps.append(gap(document, device: origin, missing: expected, nextPresent: sequence))
                    break
                }
                run.append(sequence)
                expected = sequence + 1
            }
            plan.runs.append((origin, run))
        }
        return plan
    }

    /// Whether `device`'s log at `sequence` says it follows its log `previous` (its writer
    /// stepped over the slots between, which files not its own took): the slots between are
    /// no gap then, whatever is, or is no longer, in them.
    private func stepsOver(_ document: DocumentID, device: DeviceID, at sequence: UInt64, after previous: UInt64) -> Bool {
        guard sequence > previous + 1,
              let log = try? container.readLog(document, device: device, sequence: sequence, refusing: refusedContainers) else { return false }
        return log.follows == previous
    }

    /// The logs the first waiting log of each device waits for that are not in the container.
    private func dependencyWaits(_ document: DocumentID, waiting: [TransactionLog], applied: [DeviceID: UInt64]) -> [DependencyWait] {
        var firsts: [DeviceID: TransactionLog] = [:]
        for log in waiting where firsts[log.device].map({ log.sequence < $0.sequence }) ?? true { firsts[log.device] = log }
        var result: [DependencyWait] = []
        for log in firsts.values.sorted(by: { $0.device < $1.device }) {
            for (other, needed) in (log.dependencies ?? [:]).sorted(by: { $0.key < $1.key }) {
                let next = (applied[other] ?? 0) + 1
                guard next <= needed, !container.logSequences(document, device: other).contains(next) else { continue }
                let file = container.logURL(document, device: log.device, sequence: log.sequence)
                var info = stat()
                let since = lstat(file.path, &info) == 0 ? Date(timeIntervalSince1970: Double(FileStamp.nanoseconds(info.st_ctim)) / 1e9) : nil
                result.append(DependencyWait(device: log.device, sequence: log.sequence, waitsFor: other, missing: next, since: since))
            }
        }
        return result
    }

    private func gap(_ document: DocumentID, device: DeviceID, missing: UInt64, nextPresent: UInt64) -> LogGap {
        // The time the next log reached this replica: its status-change time, which this
        // kernel sets when the file lands (a replication engine keeps the writer's modification
        // time, which may be hours older).
        let next = container.logURL(document, device: device, sequence: nextPresent)
        var info = stat()
        let since = lstat(next.path, &info) == 0 ? Date(timeIntervalSince1970: Double(FileStamp.nanoseconds(info.st_ctim)) / 1e9) : nil
        return LogGap(device: device, missing: missing, nextPresent: nextPresent, since: since)
    }

    /// The gaps a device joining now would wait behind: logs missing from the container past
    /// what its trusted baselines cover, while later logs of the same device are there.
    public func standingGaps(_ document: DocumentID) -> [LogGap] {
        let listing = container.listing(document)
        let baselines = container.baselines(document)
        let evidence = ClaimEvidence(container, document: document, listing: listing, applied: [:], reader: nil, baselines: baselines.map(\.baseline))
        var covered: [DeviceID: UInt64] = [:]
        for entry in baselines where trustProblem(entry.baseline, evidence: evidence) == nil {
            for (device, sequence) in entry.baseline.applied { covered[device] = max(covered[device] ?? 0, sequence) }
        }
        var report = ImportReport()
        return makePlan(document, listing, applied: covered, report: &report).gaps
    }

    /// How much of a document this device has, against what the container shows.
    public func progress(_ document: DocumentID, applied: [DeviceID: UInt64]) -> DownloadProgress {
        Self.progress(container.listing(document), applied: applied)
    }

    /// How much of a document this device has, against what `listing` shows.
    static func progress(_ listing: DocumentListing, applied: [DeviceID: UInt64]) -> DownloadProgress {
        var known: UInt64 = 0
        var have: UInt64 = 0
        var devices = Set(listing.logs.keys)
        devices.formUnion(applied.keys)
        for origin in devices {
            let mine = applied[origin] ?? 0
            let highest = listing.logs[origin]?.last ?? 0
            known = ContainerBounds.sum(known, max(mine, highest))
            have = ContainerBounds.sum(have, mine)
        }
        return DownloadProgress(applied: have, known: known)
    }

    // MARK: Baselines, registry, pruning

    /// Writes a baseline of the store's state and removes this device's older ones.
    @discardableResult
    public func writeBaseline(_ document: DocumentID, from store: any DocumentStore) throws -> URL {
        let contents = try store.read()
        let baseline = Baseline(document: document, writtenBy: device.id, writtenAt: now(), contents: contents)
        let name = "\(device.id)-\(baseline.coverage).json"
        let url = container.baselinesDirectory(document).appendingPathComponent(name, isDirectory: false)
        // A document holding sequences is of format 2 (``format(_:writing:in:)``), whatever
        // this device last read of the container's format.
        if format.version >= 2 || baseline.format >= 2 {
            // Binary (Baseline+Binary.swift): a JSON baseline of a large document took seconds
            // to write and as long again for every reader.
            try container.writeEnvelope(baseline.envelope(container: format.container), to: url, limit: Container.maximumBaselineSize)

        } else {
            try container.writeJSON(baseline, to: url, pretty: false, limit: Container.maximumBaselineSize)
        }
        // This device's older baselines go, by name (none read again).
        for older in container.baselineNames(document, by: device.id) where older != name {
            container.remove(container.baselinesDirectory(document).appendingPathComponent(older, isDirectory: false))
        }
        return url
    }

    /// A large document's baseline waits for one uncovered log per this many objects (and
    /// ``baselineThreshold`` at least): writing a baseline costs what the document holds, so it
    /// is written once the logs it would stand for are a share of that (a million-row document
    /// otherwise wrote, and every peer copied, 70 MB per hundred one-row saves), and a late
    /// joiner reads at most that many logs past it.
    static let objectsPerUncoveredLog = 100

    /// Writes a baseline when more than ``baselineThreshold`` logs in the container (and one per
    /// ``objectsPerUncoveredLog`` objects of the document) are not yet covered by one, then
    /// removes this device's logs that every registered device has applied and a baseline covers.
    ///
    /// `registry` is every device's record, read once for a pass over many documents and only
    /// if one of them has logs to prune (it grows with the number of documents).
    ///
    /// `imported`: the import this compaction follows, whose listing of the document's folders
    /// (and the trusted coverage, when it read the baselines) stand instead of looking again.
    public func compact(
        _ document: DocumentID, store: any DocumentStore, registry: RegistrySnapshot? = nil, after imported: ImportReport? = nil
    ) throws -> CompactionReport {
        var report = CompactionReport()
        let listing = imported?.listing ?? container.listing(document)
        let contents = try store.read()
        let covered = imported?.trustedBaselineCoverage ?? trustedBaseline(document, listing: listing, applied: contents.sync.applied)?.applied ?? [:]
        var uncovered = 0
        for (origin, sequences) in listing.logs {
            let floor = covered[origin] ?? 0
            uncovered += sequences.filter { $0 > floor }.count
        }
        var coverage = covered
        var applied = contents.sync.applied
        // Lost logs are supplied again by `container repair` only (``resupplyLostLogs(_:store:)``),
        // never by a pass: a deletion on its way looks the same from here (the document's logs
        // gone before its tombstone arrives), and a baseline written then outlives the clean-up.
        if uncovered >= max(baselineThreshold, contents.graph.objects.count / Self.objectsPerUncoveredLog) {
            report.baseline = try writeBaseline(document, from: store)
            applied = try store.read().sync.applied
            coverage = applied
        }
        let evidence = ClaimEvidence(container, document: document, listing: listing, applied: applied, reader: device.id)
        report.prunedLogs = pruneLogs(
            document, covering: coverage[device.id] ?? 0, written: evidence.shown(device.id), registry: registry, present: listing.logs[device.id] ?? [])
        return report
    }

    /// This device's logs of `document` that its store applied and the container lacks, while
    /// no trusted baseline covers them (`covered`: how many of this device's logs the widest
    /// one does) and its outbox does not hold them: removed from the container (damaged, then
    /// taken out as `container verify` says; a replica gone wrong), and only this device is sure
    /// to hold what they did. None for a document whose folder is gone or that a tombstone
    /// names: a deletion, not a loss. Costs nothing more than the listing when every log is there.
    func lostLogs(_ document: DocumentID, listing: DocumentListing, covered: UInt64, contents: StoreContents) -> [UInt64] {
        let applied = contents.sync.applied[device.id] ?? 0
        guard applied > covered else { return [] }
        var held = Set((listing.logs[device.id] ?? []).filter { $0 > covered && $0 <= applied })
        held.formUnion(contents.sync.outbox.keys.filter { $0 > covered && $0 <= applied })
        guard UInt64(held.count) < applied - covered else { return [] }
        guard Container.isFolder(container.documentDirectory(document)), !container.isDeleted(document) else { return [] }
        // Only a document still published: a folder without any info file is a deleted one's,
        // brought back by a racing peer's log before its tombstone arrived here, and a
        // baseline written there would outlive the tombstone's clean-up.
        guard container.hasInfoFile(document) else { return [] }
        // The store's own count of its saves: as many as it made, never a number from outside.
        return (covered + 1...applied).filter { !held.contains($0) }
    }

    /// Supplies `lost` logs of this device again: a baseline of the store, which covers them,
    /// so every device builds from it past them (a baseline of a device's own is its word about
    /// its logs: ``ClaimEvidence``). Looks again first with every trusted baseline (`lost` was
    /// found against the widest only), and writes nothing when this device's baseline of the
    /// store as it is is there already but not trusted (writing it again would change nothing).
    /// Returns the logs supplied and the baseline, or nil.
    func resupply(_ document: DocumentID, lost: [UInt64], listing: DocumentListing, store: any DocumentStore) throws -> (lost: [UInt64], baseline: URL)? {
        let contents = try store.read()
        let baselines = container.baselines(document)
        let evidence = ClaimEvidence(
            container, document: document, listing: listing, applied: contents.sync.applied, reader: device.id, baselines: baselines.map(\.baseline))
        let trusted = baselines.filter { trustProblem($0.baseline, evidence: evidence) == nil }
        let covered = trusted.map { $0.baseline.applied[device.id] ?? 0 }.max() ?? 0
        let stillLost = lostLogs(document, listing: listing, covered: covered, contents: contents)
        guard !stillLost.isEmpty else { return nil }
        let coverage = contents.sync.applied.values.reduce(0, ContainerBounds.sum)
        if baselines.contains(where: { $0.baseline.writtenBy == device.id && $0.baseline.coverage == coverage }) { return nil }
        return (stillLost, try writeBaseline(document, from: store))
    }

    /// `container repair` for this device's own logs of `document`: supplies again those the
    /// container lost (``lostLogs(_:listing:covered:contents:)``). Returns the logs supplied and
    /// the baseline that covers them, or nil when none is lost.
    public func resupplyLostLogs(_ document: DocumentID, store: any DocumentStore) throws -> (lost: [UInt64], baseline: URL)? {
        let listing = container.listing(document)
        let contents = try store.read()
        let covered = trustedBaseline(document, listing: listing, applied: contents.sync.applied)?.applied[device.id] ?? 0
        let lost = lostLogs(document, listing: listing, covered: covered, contents: contents)
        guard !lost.isEmpty else { return nil }
        return try resupply(document, lost: lost, listing: listing, store: store)
    }

    /// Removes this device's logs of `document` that every registered device has applied and
    /// the best baseline in the container includes (no store needed: a quiet document's logs
    /// are pruned when the registry shows its peers caught up). Returns how many were removed.
    @discardableResult
    public func prune(_ document: DocumentID, registry: RegistrySnapshot) -> Int {
        let listing = container.listing(document)
        let covering = trustedBaseline(document, listing: listing, applied: nil, records: registry.records)?.applied[device.id] ?? 0
        let evidence = ClaimEvidence(container, document: document, listing: listing, applied: nil, reader: device.id, records: registry.records)
        return pruneLogs(document, covering: covering, written: evidence.shown(device.id), registry: registry, present: listing.logs[device.id] ?? [])
    }

    /// The baseline of widest coverage that may stand in for the logs it claims (see
    /// ``trustProblem(_:evidence:)``): the only kind this device prunes its logs for.
    /// `applied`: what this device applied of the document (nil: no store at hand).
    func trustedBaseline(_ document: DocumentID, listing: DocumentListing, applied: [DeviceID: UInt64]?, records: [DeviceRecord]? = nil) -> Baseline? {
        let baselines = container.baselines(document).map(\.baseline)
        let evidence = ClaimEvidence(container, document: document, listing: listing, applied: applied, reader: device.id, baselines: baselines, records: records)
        return baselines.first { trustProblem($0, evidence: evidence) == nil }
    }

    /// Removes this device's logs of `document` up to `covering` that every registered device
    /// has applied. Only a device that registered prunes (its entry is what shows a device
    /// joining later how many logs it wrote), and a registry entry claiming more of this
    /// device's logs than it `written` is not believed: it counts as having none, and is
    /// reported (``RegistrySnapshot/refusedClaims``).
    ///
    /// `present`: this device's logs of the document in the container, when just listed.
    private func pruneLogs(_ document: DocumentID, covering: UInt64, written: UInt64, registry: RegistrySnapshot?, present: [UInt64]? = nil) -> Int {
        let candidates = (present ?? container.logSequences(document, device: device.id)).filter { $0 <= covering }
        guard !candidates.isEmpty else { return 0 }
        let records = registry?.records ?? container.deviceRecords()
        guard records.contains(where: { $0.device == device.id }) else { return 0 }
        let everyoneHas = records.map { record -> UInt64 in
            let claim = record.applied[document]?[device.id] ?? 0
            guard claim > written, record.device != device.id else { return claim }
            registry?.refuse(QuarantinedFile(
                url: container.deviceRecordURL(record.device),
                reason: "registry entry not used for pruning: it claims log \(claim) of document \(document) of this device, which wrote \(written)"))
            return 0
        }.min() ?? 0
        let prunable = min(everyoneHas, covering, written)
        var pruned = 0
        for sequence in candidates where sequence <= prunable {
            container.remove(container.logURL(document, device: device.id, sequence: sequence))
            pruned += 1
        }
        return pruned
    }

    /// The lowest sequence of this device's logs of `document` still in the container.
    public func lowestLog(_ document: DocumentID) -> UInt64? {
        container.logSequences(document, device: device.id).first
    }

    /// Writes this device's registry file (what it has applied of each document).
    /// Writes an empty registry entry for this device if it has none yet (before its first
    /// tombstone: peers refuse tombstones from devices that never registered). It says this
    /// device has applied nothing yet, until its next full pass registers what it has.
    public func registerIfMissing() throws(SyncError) {
        guard !container.isRegistered(device.id) else { return }
        try register(applied: [:])
    }

    public func register(applied: [DocumentID: [DeviceID: UInt64]]) throws(SyncError) {
        try container.checkAvailable()
        // The caller decides whether it changed (the Engine keeps a digest of what it last
        // wrote): reading a registry of 10,000 documents back to compare cost more than writing.
        let url = container.deviceRecordURL(device.id)
        let record = DeviceRecord(device: device, updatedAt: now(), applied: applied, key: try? container.keys?.signingKey().publicKey)
        try container.writeRecord(record.encodedJSON(), to: url, limit: Container.maximumRegistrySize)
    }
}

/// Every device's registry record, read the first time something needs it: a pass over
/// 10,000 documents needs it only when one of them has logs to prune, and each record holds an
/// entry per document, so reading them all costs a fifth of a `list` at that size.
public final class RegistrySnapshot: Sendable {
    private let container: Container
    private let loaded = Mutex<[DeviceRecord]?>(nil)

    public init(_ container: Container) { self.container = container }

    /// Taken as given (tests).
    public init(_ container: Container, records: [DeviceRecord]) {
        self.container = container
        loaded.withLock { $0 = records }
    }

    /// Registry entries a pass did not believe (they claim more of this device's logs than it
    /// wrote), for its report.
    public var refusedClaims: [QuarantinedFile] { refused.withLock { $0.sorted { $0.url.path < $1.url.path } } }
    private let refused = Mutex<Set<QuarantinedFile>>([])

    func refuse(_ file: QuarantinedFile) { _ = refused.withLock { $0.insert(file) } }

    public var records: [DeviceRecord] {
        loaded.withLock { loaded in
            if let loaded { return loaded }
            let records = container.deviceRecords()
            loaded = records
            return records
        }
    }
}

/// A local save: its log and what it changed.
public struct LocalCommit: Sendable {
    public let log: TransactionLog
    public let summary: ChangeSummary
}

/// What an import did.
public struct ImportReport: Sendable {
    public var summary = ChangeSummary()
    public var imported: [ImportedLog] = []
    public var quarantined: [QuarantinedFile] = []
    public var baselinesMerged = 0
    /// Conflict copies the replication engine made in the document's folders (reported, never
    /// imported), found by the import's listing.
    public var conflictCopies: [QuarantinedFile] = []
    /// The document's folders as the import listed them.
    public var listing: DocumentListing?
    /// What the widest trusted baseline in the container covers, when the import read the
    /// baselines (nil: it did not need them).
    public var trustedBaselineCoverage: [DeviceID: UInt64]?
    /// Logs missing while later ones of the same device are there (on their way, or lost).
    public var gaps: [LogGap] = []
    /// A later log is present but an earlier one has not arrived yet.
    public var waitingForGap: Bool { !gaps.isEmpty }
    /// Logs present but not applied because logs of other devices they were made on have not
    /// arrived (or are behind a gap).
    public var waitingForOthers = 0
    /// For each device whose next log waits so, the other device's log it waits for when that
    /// log is not in the container at all (`since`: when the waiting log arrived).
    public var dependencyWaits: [DependencyWait] = []
    public var progress = DownloadProgress(applied: 0, known: 0)

    /// Everything the container shows of the document is in: nothing quarantined, no gap,
    /// every log known applied.
    public var isComplete: Bool { quarantined.isEmpty && !waitingForGap && waitingForOthers == 0 && progress.percent >= 100 }

    public init() {}
}

/// A device's log missing from the container while a later one is there: the device's later
/// saves wait behind it on every device that has not applied it. Usually a log still on its way
/// (a replication engine delivers files in any order); one missing for long was lost, and a
/// device that applied it can write a baseline that covers it (`multidoc container repair`).
public struct LogGap: Sendable, Hashable, CustomStringConvertible {
    public let device: DeviceID
    /// The first missing sequence, and the next one present.
    public let missing: UInt64
    public let nextPresent: UInt64
    /// When the next present log reached this replica (its file's time): the gap is at least
    /// this old. Nil if it could not be read.
    public let since: Date?

    public var description: String {
        let range = nextPresent > missing + 1 ? "logs \(missing)…\(nextPresent - 1)" : "log \(missing)"
        return "\(range) of device \(device)"
    }
}

/// A device's log that waits for another device's log it was made on, which is not in the
/// container: on its way, lost, or named by a lying file.
public struct DependencyWait: Sendable, Hashable, CustomStringConvertible {
    public let device: DeviceID
    public let sequence: UInt64
    public let waitsFor: DeviceID
    public let missing: UInt64
    /// When the waiting log reached this replica.
    public let since: Date?

    public var description: String {
        "log \(sequence) of device \(device) was made after log \(missing) of device \(waitsFor), which is not in the container"
    }
}

/// One imported log's header (for notifications and latency figures).
public struct ImportedLog: Sendable, Hashable {
    public let device: DeviceID
    public let deviceName: String
    public let sequence: UInt64
    public let committedAt: Date
    public let stamp: Stamp

    init(_ log: TransactionLog) {
        device = log.device
        deviceName = log.deviceName
        sequence = log.sequence
        committedAt = log.committedAt
        stamp = log.stamp
    }
}

/// A file that was not imported, and why.
public struct QuarantinedFile: Sendable, Hashable, CustomStringConvertible {
    public let url: URL
    public let reason: String
    /// What gets the file's content to the devices that refused it, when something does.
    public let wayOut: WayOut?
    public var description: String { "\(url.path): \(reason)" + (wayOut.map { "; \($0)" } ?? "") }

    public init(url: URL, reason: String, wayOut: WayOut? = nil) {
        self.url = url
        self.reason = reason
        self.wayOut = wayOut
    }
}

/// The seed's "percent downloaded": logs applied against logs known.
public struct DownloadProgress: Sendable, Hashable, Codable {
    public var applied: UInt64
    public var known: UInt64

    public var percent: Int {
        guard known > 0 else { return applied > 0 ? 100 : 0 }
        return Int(min(100, (applied * 100) / known))
    }
}

/// What ``Replicator/compact(_:store:)`` did.
public struct CompactionReport: Sendable {
    public var baseline: URL?
    public var prunedLogs = 0
}
