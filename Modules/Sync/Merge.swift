import Model
import Storage

/// The conflict rule. Any two devices that have applied the same set of logs hold the same
/// graph, whatever order the logs came in:
///
/// - Each attribute keeps the value written with the greatest ``Model/Stamp`` (hybrid logical
///   clock, then device UUID): per-attribute last-writer-wins.
/// - A delete is final: a tombstoned object never comes back, and later inserts or updates of it
///   are dropped (delete wins over a concurrent edit).
/// - An object exists once any insert or update of it has been applied and no delete has.
///
/// The state is a join-semilattice, so baselines merge with the same rule (``merge(_:into:)``).
/// Room for other strategies: ``MergeStrategy`` is chosen per attribute; only
/// last-writer-wins exists today.
public enum Merge {
    /// How concurrent writes of one attribute are resolved. A new strategy (a text merge, say)
    /// is a new case here, chosen in ``strategy(entity:attribute:)`` and handled where
    /// ``apply(_:to:)`` and ``merge(_:into:)`` meet an attribute; it must stay order-independent.
    public enum MergeStrategy: Sendable { case lastWriterWins }

    /// The strategy for one attribute of one entity: last-writer-wins for every attribute today.
    public static func strategy(entity: String, attribute: String) -> MergeStrategy { .lastWriterWins }

    /// Applies one log to `contents` and reports what changed in the graph.
    @discardableResult
    public static func apply(_ log: TransactionLog, to contents: inout StoreContents) -> ChangeSummary {
        var summary = ChangeSummary()
        for change in log.changes {
            apply(change, stamp: log.stamp, to: &contents, summary: &summary)
        }
        contents.sync.clock.observe(log.stamp)
        return summary
    }

    static func apply(_ change: LoggedChange, stamp: Stamp, to contents: inout StoreContents, summary: inout ChangeSummary) {
        let id = change.id
        switch change.op {
        case .delete:
            if let existing = contents.sync.tombstones[id], existing >= stamp { return }
            contents.sync.tombstones[id] = stamp
            if contents.graph.objects.removeValue(forKey: id) != nil {
                summary.deleted.insert(id)
                summary.inserted.remove(id)
                summary.updated.remove(id)
            }
            contents.sync.stamps[id] = nil
        case .insert, .update:
            guard contents.sync.tombstones[id] == nil else { return }
            let isNew = contents.graph.objects[id] == nil
            var record = contents.graph.objects[id] ?? ObjectRecord(entity: change.entity ?? "")
            if record.entity.isEmpty, let entity = change.entity { record.entity = entity }
            var stamps = contents.sync.stamps[id] ?? [:]
            var changed = false
            for (name, value) in change.attributes ?? [:] {
                switch strategy(entity: record.entity, attribute: name) {
                case .lastWriterWins:
                    if let current = stamps[name], current >= stamp { continue }
                }
                stamps[name] = stamp
                if record.attributes[name] != value {
                    record.attributes[name] = value
                    changed = true
                }
            }
            contents.graph.objects[id] = record
            contents.sync.stamps[id] = stamps
            if isNew {
                summary.inserted.insert(id)
            } else if changed, !summary.inserted.contains(id) {
                summary.updated.insert(id)
            }
        }
    }

    /// Joins a baseline into `contents` with the same rule. The result covers the union of the
    /// logs both include.
    @discardableResult
    public static func merge(_ baseline: Baseline, into contents: inout StoreContents) -> ChangeSummary {
        var summary = ChangeSummary()
        for (id, stamp) in baseline.tombstones {
            apply(LoggedChange(op: .delete, id: id), stamp: stamp, to: &contents, summary: &summary)
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
                apply(LoggedChange(op: .insert, id: id, entity: record.entity, attributes: attributes),
                      stamp: stamp, to: &contents, summary: &summary)
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
}
