#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
import Synchronization
import Text

// Shipping: the outbox written into the container, slots others took stepped over, saves taken back re-sequenced.
extension Replicator {
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

    /// ``flush(_:in:)`` right after `commit`, a save of `document`: the outbox as the commit
    /// left it (not read again), and the save's log put in place from where it was written
    /// while the store committed (``LocalCommit/writeAhead``).
    @discardableResult
    public func flush(_ document: DocumentID, in store: any DocumentStore, after commit: LocalCommit) throws -> [URL] {
        defer { commit.writeAhead?.discard() }
        var steppedOver: [QuarantinedFile] = []
        return try flush(
            document, in: store, resequencedOnce: false, stepsLeft: 3, steppedOver: &steppedOver, outbox: commit.outbox, writeAhead: commit.writeAhead)
    }

    /// ``flush(_:in:)``, with the files it stepped over at this device's slots, for the report.
    public func flushReporting(_ document: DocumentID, in store: any DocumentStore) throws -> (written: [URL], steppedOver: [QuarantinedFile]) {
        var steppedOver: [QuarantinedFile] = []
        let written = try flush(document, in: store, resequencedOnce: false, stepsLeft: 3, steppedOver: &steppedOver)
        return (written, steppedOver)
    }

    /// `outbox`: the store's outbox when the caller has it (read otherwise); `writeAhead`: one
    /// of its logs, written beside its slot already.
    func flush(
        _ document: DocumentID, in store: any DocumentStore, resequencedOnce: Bool, stepsLeft: Int, steppedOver: inout [QuarantinedFile],
        outbox known: [UInt64: Data]? = nil, writeAhead: LogWriteAhead? = nil
    ) throws -> [URL] {
        let outbox = try known ?? store.read().sync.outbox
        guard !outbox.isEmpty else { return [] }
        try container.checkAvailable()
        let resealed = try resealed(outbox, in: store)
        var written: [URL] = []
        for (sequence, data) in resealed.sorted(by: { $0.key < $1.key }) {
            let (url, placement) = if let writeAhead, writeAhead.sequence == sequence, let prepared = writeAhead.take(data) {
                try container.placePrepared(prepared)
            } else {
                try container.placeLog(data, document: document, device: device.id, sequence: sequence)
            }
            // Put in place where nothing was, atomically (`RENAME_NOREPLACE`): the slot holds this log.
            if placement == .exclusive {
                written.append(url)
                continue
            }
            // Otherwise the slot must hold exactly this log (a retry after a crash, or a file
            // system that could not refuse to replace). Anything else there — a file too big to
            // be a log, another log of this sequence (a copy of this device's root, or a
            // restored backup, saved the same numbers; or a forgery) — keeps the log in the outbox.
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
                    return try flush(
                        document, in: store, resequencedOnce: true, stepsLeft: stepsLeft, steppedOver: &steppedOver, writeAhead: writeAhead)
                }
                // A file that is not this device's log at all: stepped over.
                if stepsLeft > 0, let squatted = try stepOver(document, from: sequence, in: store) {
                    steppedOver += squatted
                    return try flush(
                        document, in: store, resequencedOnce: resequencedOnce, stepsLeft: stepsLeft - 1, steppedOver: &steppedOver, writeAhead: writeAhead)
                }
                if existing == nil {
                    throw SyncError(.writeFailed, path: url.path, detail: "this device's log \(sequence) goes there, but the file in its place cannot be read; the save waits in the outbox (a copy of this device's root, or a restored backup, saved the same numbers; or the file is forged)", wayOut: .newIdentity)
                }
                throw SyncError(.writeFailed, path: url.path, detail: "a different log with this sequence is already in the container; the save waits in the outbox (a copy of this device's root, or a restored backup, saved the same numbers; or the file is forged)", wayOut: .newIdentity)
            }
            if placement == .existed {
                // Put there by an attempt that may have stopped before its folder was synced:
                // synced now, before the outbox lets it go.
                do {
                    try AtomicFile.sync(url)
                } catch {
                    throw SyncError(.writeFailed, path: url.path, detail: error.description)
                }
            }
            written.append(url)
        }
        // Not synced, and perhaps committed after this returns (``DocumentStore/dropShipped(_:)``):
        // a power loss or a kill that undoes it leaves the logs in the outbox, and shipping
        // them again finds the same bytes in place.
        let sent = Set(outbox.keys)
        try store.dropShipped(sent)
        // A log written ahead made the next one's file with it (``LogWriteAhead``).
        if preparesNextLog, let last = sent.max(), last < UInt64.max, writeAhead?.sequence != last {
            // Not synced: its folder is an old one, synced by every log's write anyway, and a sync
            // per save would cost a burst of saves more than the file saves the next one.
            try? AtomicFile.makeSpareTemporary(forPath: container.logPath(document, device: device.id, sequence: last + 1), synced: false)
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
    func resequence(_ document: DocumentID, from first: UInt64, in store: any DocumentStore) throws -> Bool {
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
    func stepOver(_ document: DocumentID, from first: UInt64, in store: any DocumentStore) throws -> [QuarantinedFile]? {
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
    func resealed(_ outbox: [UInt64: Data], in store: any DocumentStore) throws -> [UInt64: Data] {
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
}
