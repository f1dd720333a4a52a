#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
import Synchronization
import Text

// Baselines, the registry and pruning.
extension Replicator {
    // MARK: Baselines, registry, pruning

    /// Writes a baseline of the store's state and removes this device's older ones.
    @discardableResult
    public func writeBaseline(_ document: DocumentID, from store: any DocumentStore) throws -> URL {
        let contents = try store.read()
        let baseline = Baseline(document: document, writtenBy: device.id, writtenAt: now(), contents: contents)
        // A document holding sequences is of format 2 (``format(_:writing:in:)``), whatever
        // this device last read of the container's format.
        let binary = format.version >= 2 || baseline.format >= 2
        let name = BaselineFileName(writer: device.id, coverage: baseline.coverage, form: binary ? .binary : .json).description
        let url = container.baselinesDirectory(document).appendingPathComponent(name, isDirectory: false)
        if binary {
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
    func pruneLogs(_ document: DocumentID, covering: UInt64, written: UInt64, registry: RegistrySnapshot?, present: [UInt64]? = nil) -> Int {
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
