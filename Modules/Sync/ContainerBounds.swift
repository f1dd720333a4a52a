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
        let all = stamps.values.lazy.flatMap(\.values) + tombstones.values
        guard let stamp = all.first(where: { $0.wall > ContainerBounds.maximumReadWall }) else { return nil }
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
