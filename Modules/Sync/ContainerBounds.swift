import Foundation
import Model
import Text

/// The ranges a reader accepts in container files. Every file of the container may come from
/// a peer with a wrong clock, an older or newer build, a replication engine or a person; what
/// lies outside these ranges is refused and reported, never obeyed, so no count, sum or clock
/// built from the container can overflow or wrap.
public enum ContainerBounds {
    /// The highest sequence number of a device's logs of one document: a trillion saves. A
    /// log named above it is not a log; a baseline or registry entry claiming more is refused.
    public static let maximumSequence: UInt64 = 1 << 40

    /// How far two devices' clocks may differ before a pass says so (``ClockReading``): more
    /// than a replication engine's delay, less than any wrong time zone or wrong date.
    public static let maximumClockLead: Duration = .seconds(3600)

    /// The latest wall time (milliseconds since 1970) a device stamps a save with: 2⁴⁷, in the
    /// year 6429 (``clampedWall(_:)``). A device's stamps pass it only by the counter's
    /// carry, a millisecond per 2³² saves past it: stamps up to ``maximumReadWall`` are real.
    public static let maximumWall: UInt64 = 1 << 47

    /// The latest wall time a reader takes as written: 2⁴⁸. The same constant on every device,
    /// so what a reader does with a stamp never depends on its own clock: a stamp a year ahead
    /// is applied as it is everywhere (the hybrid logical clock carries every device past it,
    /// and every device's later saves order after it), and a stamp past this wall, which no
    /// device wrote, is read as ``maximumWall`` with counter 0 on every device (``clamped(_:)``),
    /// so it orders before every save made after it, no clock saturates and every stored wall
    /// fits an `Int64`.
    public static let maximumReadWall: UInt64 = 1 << 48

    /// `now` as a stamp's wall time (milliseconds since 1970), at most ``maximumWall``.
    public static func clampedWall(_ now: Date) -> UInt64 {
        let milliseconds = (now.timeIntervalSince1970 * 1000).rounded(.down)
        guard milliseconds.isFinite, milliseconds > 0 else { return 0 }
        return milliseconds >= Double(maximumWall) ? maximumWall : UInt64(milliseconds)
    }

    /// `stamp` as every reader takes it (see ``maximumReadWall``).
    public static func clamped(_ stamp: Stamp) -> Stamp {
        guard stamp.wall > maximumReadWall else { return stamp }
        return Stamp(wall: maximumWall, counter: 0, device: stamp.device)
    }

    /// Why an applied map (a baseline's, a registry entry's) is out of range, or nil.
    public static func problem(applied: [DeviceID: UInt64]) -> String? {
        guard let (device, sequence) = applied.first(where: { $0.value > maximumSequence }) else { return nil }
        return "claims log \(sequence) of device \(device), beyond the largest sequence a device can reach (\(maximumSequence))"
    }

    /// A span in words: seconds, minutes, hours, days or years.
    public static func describe(seconds: Double) -> String {
        switch seconds {
        case ..<120: return "\(Int(seconds)) s"
        case ..<7200: return "\(Int(seconds / 60)) min"
        case ..<(3 * 86400): return "\(Int(seconds / 3600)) h"
        case ..<(3 * 365 * 86400): return "\(Int(seconds / 86400)) days"
        default: return "\(Int(seconds / (365 * 86400))) years"
        }
    }

    /// `a + b`, or the largest value instead of wrapping.
    static func sum(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let (value, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : value
    }
}

extension Baseline {
    /// Why this baseline is out of range (its applied map, its stamps), or nil. A stamp past
    /// ``ContainerBounds/maximumReadWall`` was never written by a device: such a baseline is not
    /// trusted, by every reader alike.
    func problem() -> String? {
        if let problem = ContainerBounds.problem(applied: applied) { return problem }
        // Walked where they are: a baseline of a million objects holds a million stamps.
        func tooLate(_ stamp: Stamp) -> Bool { stamp.wall > ContainerBounds.maximumReadWall }
        var late: Stamp?
        for attributes in stamps.values where late == nil { late = attributes.values.first(where: tooLate) }
        guard let stamp = late ?? tombstones.values.first(where: tooLate) else { return nil }
        return "holds a value stamped \(stamp), past the latest wall time any device writes (\(ContainerBounds.maximumReadWall) ms)"
    }

    /// Whether the baseline holds what `log` did (every attribute it wrote at the log's stamp
    /// or later, every object it deleted): a baseline that claims a log it does not hold is
    /// never trusted to replace that log.
    public func reflects(_ log: TransactionLog) -> Bool {
        log.changes.allSatisfy { change in
            if let tombstone = tombstones[change.id], tombstone >= log.stamp { return true }
            switch change.op {
            case .delete:
                return false
            case .insert, .update:
                guard objects[change.id] != nil, let stamps = stamps[change.id] else { return false }
                let attributes = (change.attributes ?? [:]).keys.allSatisfy { name in stamps[name].map { $0 >= log.stamp } ?? false }
                // A text operation is reflected when the baseline's sequence holds what it inserted.
                let texts = (change.texts ?? [:]).allSatisfy { name, operations in
                    guard let version = self.texts?[change.id]?[name]?.version else { return false }
                    return operations.allSatisfy { operation in
                        guard case .insert(let insertion) = operation else { return true }
                        return version.contains(insertion.id)
                    }
                }
                return attributes && texts
            }
        }
    }
}

/// How far a reader believes claims about each device's logs of one document: a baseline's
/// coverage, a registry entry's applied map. A claim that a device wrote log N is believed only
/// when something the reader can see shows N: the device's logs in the container, what the
/// reader applied, or the device's own word — its registry entry, or a baseline it wrote (a
/// local document moved to the cloud has a baseline and none of the logs it covers; a baseline
/// also holds the saves still in its writer's outbox). About the reader's own logs it believes
/// only what it wrote (its own baselines only when it holds nothing else of the document).
///
/// A file that claims more is reported and not used: a baseline of nothing claiming a thousand
/// logs of a device that wrote two would otherwise stand for the whole document on every
/// device that joins later, make the peers register logs nobody wrote, let the writer prune
/// the logs it has, and move the writer's next save past a thousand numbers its peers wait for.
final class ClaimEvidence {
    private let container: Container
    private let document: DocumentID
    /// Each device's logs of the document in the container, ascending.
    private let logs: [DeviceID: [UInt64]]
    /// What the reader applied of the document (nil: no store at hand).
    private let applied: [DeviceID: UInt64]?
    /// The device reading (nil: no device, as in `container verify`).
    private let reader: DeviceID?
    /// What each device's own baselines say of its logs.
    private var ownWord: [DeviceID: UInt64] = [:]
    private var registered: [DeviceID: UInt64] = [:]
    private let records: [DeviceRecord]?

    /// - Parameters:
    ///   - listing: the document's folders, as the caller listed them.
    ///   - applied: what the reader applied (nil: unknown).
    ///   - reader: the device reading.
    ///   - baselines: the baselines in the container, whose writers speak for their own logs.
    ///   - records: every registry entry, when the caller read them (nil: each read when needed).
    init(
        _ container: Container, document: DocumentID, listing: DocumentListing, applied: [DeviceID: UInt64]?, reader: DeviceID?,
        baselines: [Baseline] = [], records: [DeviceRecord]? = nil
    ) {
        self.container = container
        self.document = document
        self.logs = listing.logs
        self.applied = applied
        self.reader = reader
        self.records = records
        for baseline in baselines where baseline.document == document {
            let writer = baseline.writtenBy
            guard let own = baseline.applied[writer] else { continue }
            ownWord[writer] = max(ownWord[writer] ?? 0, own)
        }
    }

    /// The most of its logs of the document `device`'s own registry entry says it applied.
    private func registry(_ device: DeviceID) -> UInt64 {
        if let known = registered[device] { return known }
        let record = records.map { $0.first { $0.device == device } } ?? container.deviceRecord(device)
        let value = record?.applied[document]?[device] ?? 0
        registered[device] = value
        return value
    }

    /// The logs the reader wrote: what it applied of its own and the run of its own logs in the
    /// container right after (saves a power loss took from its store), or what its registry
    /// entry says (a store built again). Without a store, its logs in the container.
    private func written(by reader: DeviceID) -> UInt64 {
        var wrote: UInt64
        if let applied {
            wrote = applied[reader] ?? 0
            for sequence in logs[reader] ?? [] where sequence > wrote {
                guard sequence == wrote + 1 else { break }
                wrote = sequence
            }
        } else {
            wrote = logs[reader]?.last ?? 0
        }
        // A reader that holds nothing of its own here (a document it made and then let go of,
        // found again; a local document moved to the cloud, whose baseline covers no logs) has
        // only its own baselines to go by. One that holds its saves believes no baseline of
        // more than it wrote, even under its own name.
        if wrote == 0, registry(reader) == 0 { return ownWord[reader] ?? 0 }
        return max(wrote, registry(reader))
    }

    /// The highest log of `device` the reader believes exists.
    func shown(_ device: DeviceID) -> UInt64 {
        if device == reader { return written(by: device) }
        let seen = max(applied?[device] ?? 0, logs[device]?.last ?? 0, ownWord[device] ?? 0)
        return max(seen, registry(device))
    }

    /// Why `applied` (a baseline's coverage or a registry entry's map for the document, written
    /// by `writer`) claims more than the reader believes, or nil.
    func problem(claims applied: [DeviceID: UInt64], by writer: DeviceID) -> String? {
        for (device, sequence) in applied.sorted(by: { $0.key < $1.key }) where sequence > 0 {
            // A device's word about its own logs, unless they are the reader's.
            if device == writer, device != reader { continue }
            let shown = shown(device)
            guard sequence > shown else { continue }
            if device == reader {
                return "it claims log \(sequence) of this device, which wrote \(shown) of this document"
            }
            return "it claims log \(sequence) of device \(device), but nothing shows more than \(shown) of that device's logs (its logs in the container, its registry entry and baselines, what this device applied)"
        }
        return nil
    }
}
