#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
import Synchronization
import Text

// Import: every waiting log of a document, in each device's sequence and causal order.
extension Replicator {
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
        var listing = container.listing(document)
        // This device's saves whose rename into their slots a power loss undid: put back first,
        // then imported as its other logs are (Docs/RELIABILITY.md, "One durable step per save").
        if let standby = listing.standbyFiles[device.id] { container.removeOrphanedStandbyFiles(document, device: device.id, standby) }
        if let unplaced = listing.unplacedLogs[device.id],
           container.placeUnplacedLogs(document, device: device.id, unplaced, bootedAt: bootedAt(), refusing: refusedContainers) {
            listing = container.listing(document)
        }
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
            var weightRead = 0
            for (position, (origin, sequence)) in zip(batch.indices, batch) where !stopped.contains(origin) {
                // A batch also ends once its logs weigh ``importBatchWeight`` (the
                // rest waits for the next one): a transaction holds every log it applies, decoded,
                // and a backlog of long logs would otherwise all be in memory at once.
                if weightRead >= Self.importBatchWeight, unreadable.isEmpty {
                    pending.insert(contentsOf: batch[position...], at: 0)
                    break
                }
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
                    weightRead += Self.importWeight(of: log)
                } catch {
                    if firstUnreadable[origin] == nil { firstUnreadable[origin] = sequence }
                    // Its writer is the one device sure to hold what it did.
                    // The file's URL made only here: building one costs more than reading a small log.
                    let url = container.logURL(document, device: origin, sequence: sequence)
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
            // Every object the logs change goes through Merge.apply, which notes it: the store
            // writes those rows and walks no other.
            let result = try store.write(durable: false, notingObjects: true) { contents -> (ChangeSummary, [TransactionLog], [TransactionLog]) in
                var summary = ChangeSummary()
                var applied: [TransactionLog] = []
                // Room for every object the batch may insert, made once: a backlog grown into
                // the maps by doubling hashes every key again at each step.
                let incoming = logs.reduce(0) { $0 + $1.changes.count }
                contents.graph.objects.reserveCapacity(contents.graph.objects.count + incoming)
                contents.sync.stamps.reserveCapacity(contents.sync.stamps.count + incoming)
                contents.objectJournal?.reserveCapacity(incoming)
                summary.inserted.reserveCapacity(incoming)
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

    /// Why a baseline must not stand in for logs, or nil: out of range (see ``ContainerBounds``),
    /// it claims logs nothing else shows were written (``ClaimEvidence``), or it claims a log
    /// still in the container that it does not hold (a baseline of nothing claiming everything
    /// would otherwise replace a document with an empty one).
    func trustProblem(_ baseline: Baseline, evidence: ClaimEvidence) -> String? {
        if let problem = baseline.problem() { return problem }
        if let problem = evidence.problem(claims: baseline.applied, by: baseline.writtenBy) { return problem }
        return container.reflectionProblem(baseline)
    }

    /// The store value naming the peers' baselines the last import that read baselines
    /// trusted (one name a line): a name not among them makes the next import read them.
    static let baselinesReadKey = "sync.baselines-read"

    struct Plan {
        var runs: [(device: DeviceID, sequences: [UInt64])] = []
        var needsBaseline = false
        var gaps: [LogGap] = []
    }

    func makePlan(_ document: DocumentID, _ listing: DocumentListing, applied: [DeviceID: UInt64], report: inout ImportReport) -> Plan {
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
    func stepsOver(_ document: DocumentID, device: DeviceID, at sequence: UInt64, after previous: UInt64) -> Bool {
        guard sequence > previous + 1,
              let log = try? container.readLog(document, device: device, sequence: sequence, refusing: refusedContainers) else { return false }
        return log.follows == previous
    }

    /// The logs the first waiting log of each device waits for that are not in the container.
    func dependencyWaits(_ document: DocumentID, waiting: [TransactionLog], applied: [DeviceID: UInt64]) -> [DependencyWait] {
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

    func gap(_ document: DocumentID, device: DeviceID, missing: UInt64, nextPresent: UInt64) -> LogGap {
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
}
