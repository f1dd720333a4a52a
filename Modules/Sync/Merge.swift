import Foundation
import Model
import Storage
import Text

/// The conflict rule. Any two devices that have applied the same set of logs hold the same
/// graph, whatever order the logs came in:
///
/// - Each attribute keeps the value written with the greatest ``Model/Stamp`` (hybrid logical
///   clock, then device UUID): per-attribute last-writer-wins.
/// - A delete is final: a tombstoned object never comes back, and later inserts or updates of it
///   are dropped (delete wins over a concurrent edit).
/// - An object exists once any insert or update of it has been applied and no delete has.
///
/// - A text attribute (``strategy(entity:attribute:)`` says `.text`) that has a replicated
///   sequence (``Text/TextSequence``, in the store's `sync.texts`) shows that sequence's text:
///   format 2 logs carry operations on it, which merge every concurrent edit (both kept, the
///   same order everywhere). Plain values written to it (format 1 logs) keep their stamps but
///   no longer change the text. Without a sequence it is last-writer-wins, as in format 1.
///
/// The state is a join-semilattice, so baselines merge with the same rule (``merge(_:into:)``).
public enum Merge {
    /// How concurrent writes of one attribute are resolved; it must stay order-independent.
    public enum MergeStrategy: Sendable { case lastWriterWins, text }

    /// The strategy for one attribute of one entity: the text of a text entry merges as text,
    /// everything else is last-writer-wins.
    public static func strategy(entity: String, attribute: String) -> MergeStrategy {
        entity == Entity.textEntry && attribute == Entity.TextEntry.text ? .text : .lastWriterWins
    }

    /// Whether a value last-writer-wins decided is worth reporting: not the time of the last
    /// save, which every save writes (two concurrent edits of a text that merged would
    /// otherwise always say one time was overwritten).
    public static func reportsConflicts(entity: String, attribute: String) -> Bool {
        !(entity == Entity.textEntry && attribute == Entity.TextEntry.modified)
    }

    /// The agent that seeds a sequence from a text that had none (a container moved from format
    /// 1): every device seeding the same text makes the same ids.
    public static let migrationAgent = Agent(high: 0, low: 1)

    /// A sequence holding `value`'s text as inserted by ``migrationAgent`` (empty for no text).
    public static func seeded(from value: AttributeValue?) -> TextSequence {
        var sequence = TextSequence()
        if let text = value?.stringValue, !text.isEmpty {
            _ = try? sequence.insert(text, at: 0, by: migrationAgent)
        }
        return sequence
    }

    /// Applies one log to `contents` and reports what changed in the graph, and which values
    /// last-writer-wins decided between writes that had not seen each other (``Model/Conflict``).
    @discardableResult
    public static func apply(_ log: TransactionLog, to contents: inout StoreContents) -> ChangeSummary {
        apply(log, to: &contents, textsApplied: [:])
    }

    /// What a save's own edits did to one of its texts, applied as they were made
    /// (``Replicator``'s stage): the log's operations of that text are not applied again.
    struct AppliedText {
        /// What they changed in the visible text, in order.
        var changes: [TextChange]
        /// The text's length before the first of them.
        var countBefore: Int
    }

    /// ``apply(_:to:)`` of a log some of whose texts' operations are already in `contents`
    /// (`textsApplied`, per text): their history entries and visible texts come from what
    /// those operations changed, and the rest of the log applies as any other.
    static func apply(_ log: TransactionLog, to contents: inout StoreContents, textsApplied: [TextJournal.Key: AppliedText]) -> ChangeSummary {
        var summary = ChangeSummary()
        let before = contents.sync.applied
        var textChanges = TextChanges()
        defer {
            recordHistory(textChanges, device: log.device, deviceName: log.deviceName, sequence: log.sequence, committedAt: log.committedAt, in: &contents)
        }
        for change in log.changes {
            apply(change, stamp: log.stamp, to: &contents, summary: &summary, textChanges: &textChanges, textsApplied: textsApplied) { current in
                // Concurrent when the writer of the older stamp had not seen the newer one's
                // write: a log stamped below the current value never saw it (the clocks order
                // every write after what its writer saw); one stamped above saw it only if its
                // dependencies (format 2) cover the current writer's logs here.
                guard current.device != log.stamp.device else { return false }
                if current > log.stamp { return true }
                guard let dependencies = log.dependencies else { return false }
                return (dependencies[current.device] ?? 0) < (before[current.device] ?? 0)
            }
        }
        contents.sync.clock.observe(log.stamp)
        return summary
    }

    /// What a log's operations changed in each text, in order (for its history entries).
    struct TextChanges {
        var keys: [TextJournal.Key] = []
        var changes: [TextJournal.Key: [TextChange]] = [:]

        mutating func add(_ more: [TextChange], to key: TextJournal.Key) {
            if changes[key] == nil { keys.append(key) }
            changes[key, default: []] += more
        }
    }

    /// `splices`: the text's value in the graph is the visible text of its sequence (as it always
    /// is once a text has one), so what the operations change is spliced into it rather than the
    /// whole text read again from the sequence.
    static func apply(
        _ change: LoggedChange, stamp: Stamp, to contents: inout StoreContents, summary: inout ChangeSummary,
        textChanges: inout TextChanges, splices: Bool = true, textsApplied: [TextJournal.Key: AppliedText] = [:],
        concurrent: (Stamp) -> Bool = { _ in false }
    ) {
        let id = change.id
        switch change.op {
        case .delete:
            if let existing = contents.sync.tombstones[id], existing >= stamp { return }
            contents.sync.tombstones[id] = stamp
            contents.noteObject(id)
            if contents.graph.objects.removeValue(forKey: id) != nil {
                summary.deleted.insert(id)
                summary.inserted.remove(id)
                summary.updated.remove(id)
            }
            contents.sync.stamps[id] = nil
            contents.sync.texts[id] = nil
        case .insert, .update:
            guard contents.sync.tombstones[id] == nil else { return }
            // Taken out and put back, so the record and its stamps are changed in place rather
            // than copied (the dictionary would otherwise still hold them).
            var existing = contents.graph.objects.removeValue(forKey: id)
            let isNew = existing == nil
            // Moved, not copied: a long text's string then has one holder, and an append
            // changes it in place.
            var record = existing.take() ?? ObjectRecord(entity: change.entity ?? "")
            if record.entity.isEmpty, let entity = change.entity { record.entity = entity }
            var stamps = contents.sync.stamps.removeValue(forKey: id) ?? [:]
            var changed = false
            // A new object with nothing of it here yet takes the log's attributes whole, each
            // stamped with the log's stamp: what the loop below would set one by one (no
            // current value to conflict with, no text held by a sequence), with no key hashed
            // again (`mapValues` keeps the table's layout).
            let takesWhole = isNew && stamps.isEmpty && contents.sync.texts[id] == nil
            if takesWhole, let attributes = change.attributes {
                record.attributes = attributes
                stamps = attributes.mapValues { _ in stamp }
            }
            for (name, value) in takesWhole ? [:] : change.attributes ?? [:] {
                if let current = stamps[name], let old = record.attributes[name], old != value,
                   strategy(entity: record.entity, attribute: name) == .lastWriterWins, reportsConflicts(entity: record.entity, attribute: name),
                   concurrent(current) {
                    let incomingWins = current < stamp
                    summary.conflicts.append(Conflict(
                        object: id, entity: record.entity, attribute: name,
                        kept: incomingWins ? value : old, keptBy: incomingWins ? stamp.device : current.device,
                        lost: incomingWins ? old : value, lostBy: incomingWins ? current.device : stamp.device))
                }
                if let current = stamps[name], current >= stamp { continue }
                stamps[name] = stamp
                // A text with a sequence shows the sequence's text, whatever plain value comes.
                if strategy(entity: record.entity, attribute: name) == .text, contents.sync.texts[id]?[name] != nil { continue }
                if record.attributes[name] != value {
                    record.attributes[name] = value
                    changed = true
                }
            }
            for (name, operations) in change.texts ?? [:] {
                // The decoder validated each operation; one the sequence still refuses (a state
                // past its limits) is left out rather than stopping the import. Applied in
                // place, and noted for the store, which appends them.
                let hadSequence = contents.sync.texts[id]?[name] != nil
                let key = TextJournal.Key(object: id, attribute: name)
                let (made, countBefore) = textsApplied[key].map { ($0.changes, $0.countBefore) }
                    ?? contents.applyText(operations, object: id, attribute: name) { seeded(from: record.attributes[name]) }
                textChanges.add(made, to: key)
                if stamps[name].map({ $0 < stamp }) ?? true { stamps[name] = stamp }
                var text: AttributeValue?
                if splices || !hadSequence, case .string(var old)? = record.attributes[name], consistent(old, count: countBefore) {
                    if made.isEmpty {
                        text = .string(old)
                    } else {
                        // The record's reference let go first, so an append changes the text
                        // where it is instead of copying it.
                        record.attributes[name] = .string("")
                        if TextChange.apply(made, to: &old, count: countBefore) {
                            text = .string(old)
                            changed = true
                        } else {
                            record.attributes[name] = .string(old)
                        }
                    }
                }
                guard let text = text ?? contents.sync.texts[id]?[name].map({ AttributeValue.string($0.text) }) else { continue }
                if record.attributes[name] != text {
                    record.attributes[name] = text
                    changed = true
                }
            }
            contents.graph.objects[id] = record
            contents.sync.stamps[id] = stamps
            contents.noteObject(id)
            if isNew {
                summary.inserted.insert(id)
            } else if changed, !summary.inserted.contains(id) {
                summary.updated.insert(id)
            }
        }
    }

    /// Whether `text` can be the visible text of a sequence of `count` scalars: its length
    /// says so at once for ASCII, and its scalars are counted otherwise.
    static func consistent(_ text: String, count: Int) -> Bool {
        let bytes = text.utf8.count
        if bytes == count { return true }
        return bytes > count && text.unicodeScalars.count == count
    }

    /// Adds a ``Storage/TextSave`` for each text the operations changed, from what they changed
    /// (no second look at the whole text).
    static func recordHistory(
        _ textChanges: TextChanges, device: DeviceID, deviceName: String, sequence: UInt64, committedAt: Date, in contents: inout StoreContents
    ) {
        guard !textChanges.keys.isEmpty else { return }
        for key in textChanges.keys {
            let next = (contents.sync.history.last?.id ?? 0) &+ 1
            if let entry = TextSave.change(
                made: textChanges.changes[key] ?? [], id: next, object: key.object, attribute: key.attribute, device: device,
                deviceName: deviceName, sequence: sequence, committedAt: committedAt) {
                contents.sync.history.append(entry)
            }
        }
        contents.sync.history = TextSave.kept(contents.sync.history)
    }

    /// Joins a baseline into `contents` with the same rule. The result covers the union of the
    /// logs both include.
    ///
    /// `adoptsWhole`: into a store that holds no object, tombstone or text yet (a device
    /// joining), the baseline's objects are taken whole instead of object by object (the same
    /// result, ``adopt(_:into:summary:)``: merging a million objects one by one took seconds).
    @discardableResult
    public static func merge(_ baseline: Baseline, into contents: inout StoreContents, adoptsWhole: Bool = true) -> ChangeSummary {
        var summary = ChangeSummary()
        var textChanges = TextChanges()
        defer {
            recordHistory(textChanges, device: baseline.writtenBy, deviceName: "baseline", sequence: 0, committedAt: baseline.writtenAt, in: &contents)
        }
        if adoptsWhole, contents.graph.objects.isEmpty, contents.sync.tombstones.isEmpty, contents.sync.stamps.isEmpty, contents.sync.texts.isEmpty {
            adopt(baseline, into: &contents, summary: &summary)
        } else {
            mergeObjects(baseline, into: &contents, summary: &summary)
        }
        for (id, texts) in baseline.texts ?? [:] where contents.sync.tombstones[id] == nil {
            for (name, theirs) in texts {
                // The baseline's sequence already holds any seeding: nothing is seeded again.
                if contents.sync.texts[id]?[name] == nil { contents.sync.texts[id, default: [:]][name] = TextSequence() }
                let operations = theirs.operations(since: TextVersion())
                apply(LoggedChange(op: .update, id: id, entity: baseline.objects[id]?.entity ?? contents.graph.objects[id]?.entity ?? "",
                                   texts: [name: operations]),
                      stamp: baseline.stamps[id]?[name] ?? Stamp(wall: 0, counter: 0, device: baseline.writtenBy),
                      to: &contents, summary: &summary, textChanges: &textChanges, splices: false)
            }
        }
        for (device, sequence) in baseline.applied {
            contents.sync.applied[device] = max(contents.sync.applied[device] ?? 0, sequence)
        }
        for stamps in baseline.stamps.values {
            for stamp in stamps.values { contents.sync.clock.observe(stamp) }
        }
        return summary
    }

    /// The baseline's tombstones and objects merged one by one, each attribute with its stamp.
    static func mergeObjects(_ baseline: Baseline, into contents: inout StoreContents, summary: inout ChangeSummary) {
        for (id, stamp) in baseline.tombstones {
            var none = TextChanges()
            apply(LoggedChange(op: .delete, id: id), stamp: stamp, to: &contents, summary: &summary, textChanges: &none)
        }
        for (id, record) in baseline.objects {
            let stamps = baseline.stamps[id] ?? [:]
            // Group attributes by stamp so each keeps its own version.
            var byStamp: [Stamp: [String: AttributeValue]] = [:]
            for (name, value) in record.attributes {
                let stamp = stamps[name] ?? Stamp(wall: 0, counter: 0, device: baseline.writtenBy)
                byStamp[stamp, default: [:]][name] = value
            }
            if byStamp.isEmpty {
                let stamp = Stamp(wall: 0, counter: 0, device: baseline.writtenBy)
                byStamp[stamp] = [:]
            }
            for (stamp, attributes) in byStamp.sorted(by: { $0.key < $1.key }) {
                var none = TextChanges()
                apply(LoggedChange(op: .insert, id: id, entity: record.entity, attributes: attributes),
                      stamp: stamp, to: &contents, summary: &summary, textChanges: &none)
            }
        }
    }

    /// What ``mergeObjects(_:into:summary:)`` leaves in a store that holds no object, tombstone
    /// or text, made whole: the tombstones, every object no tombstone names, each attribute
    /// stamped with the baseline's stamp or, without one, its writer's zero stamp (stamps of
    /// attributes an object does not have are not kept).
    static func adopt(_ baseline: Baseline, into contents: inout StoreContents, summary: inout ChangeSummary) {
        var objects = baseline.objects
        for id in baseline.tombstones.keys { objects[id] = nil }
        let zero = Stamp(wall: 0, counter: 0, device: baseline.writtenBy)
        // The baseline's stamps as they are (shared, not copied) unless an object lacks one.
        var stamps = baseline.stamps
        var stamped = 0
        for (id, record) in objects {
            let given = baseline.stamps[id]
            if given != nil { stamped += 1 }
            if let given, given.count == record.attributes.count, record.attributes.keys.allSatisfy({ given[$0] != nil }) { continue }
            var each: [String: Stamp] = Dictionary(minimumCapacity: record.attributes.count)
            for name in record.attributes.keys { each[name] = given?[name] ?? zero }
            stamps[id] = each
        }
        // Stamps of objects that are not there (tombstoned, or never in the baseline) go.
        if stamped < baseline.stamps.count { stamps = stamps.filter { objects[$0.key] != nil } }
        summary.inserted = Set(objects.keys)
        contents.sync.tombstones = baseline.tombstones
        contents.graph.objects = objects
        contents.sync.stamps = stamps
    }
}
