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

    /// How far a peer's clock may run ahead of this device's: a log, baseline or tombstone
    /// stamped later than this device's clock plus this waits (reported) until the clock gets
    /// there, instead of dragging this device's clock (and every later save) into the future.
    public static let maximumClockLead: Duration = .seconds(3600)

    /// The latest stamp wall time (milliseconds since 1970) accepted at `now`.
    public static func latestWall(at now: Date) -> UInt64 {
        let milliseconds = (now.timeIntervalSince1970 * 1000).rounded()
        let clamped = milliseconds.isFinite ? max(0, min(milliseconds, 9.0e15)) : 0
        return UInt64(clamped) + UInt64(maximumClockLead.components.seconds) * 1000
    }

    /// Why an applied map (a baseline's, a registry entry's) is out of range, or nil.
    public static func problem(applied: [DeviceID: UInt64]) -> String? {
        guard let (device, sequence) = applied.first(where: { $0.value > maximumSequence }) else { return nil }
        return "claims log \(sequence) of device \(device), beyond the largest sequence a device can reach (\(maximumSequence))"
    }

    /// Why a stamp is out of range at `latest` (see ``latestWall(at:)``), or nil.
    public static func problem(stamp: Stamp, latest: UInt64) -> String? {
        guard stamp.wall > latest else { return nil }
        let ahead = Double(stamp.wall) / 1000 - Double(latest - UInt64(maximumClockLead.components.seconds) * 1000) / 1000
        return "stamped \(Self.describe(seconds: ahead)) ahead of this device's clock (more than \(Self.describe(seconds: Double(maximumClockLead.components.seconds))) is not trusted); waiting until this clock gets there — check the writer's clock"
    }

    static func describe(seconds: Double) -> String {
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
    /// Why this baseline is out of range at `latest` (its applied map, its stamps), or nil.
    func problem(latest: UInt64?) -> String? {
        if let problem = ContainerBounds.problem(applied: applied) { return problem }
        guard let latest else { return nil }
        let all = stamps.values.flatMap(\.values) + tombstones.values
        return all.lazy.compactMap { ContainerBounds.problem(stamp: $0, latest: latest) }.first.map { "holds a value \($0)" }
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
