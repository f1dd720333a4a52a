#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

/// How far this device's clock read from a peer's when the peer's latest registry entry landed
/// here: the time the entry says it was written (by the peer's clock) against the time its file
/// arrived (its status-change time, set by this machine's clock). Only a replication engine's
/// delay comes between the two, seconds, far below ``ContainerBounds/maximumClockLead``; an idle
/// peer's old entry landed long ago too, so its age says nothing about the clocks.
///
/// A reading is never acted on: stamps are applied as written on every device, whatever the
/// clocks say (``ContainerBounds/maximumWall``). It is what front ends tell the user, so a
/// wrong clock is set right.
public struct ClockReading: Sendable, Hashable {
    public let device: DeviceID
    public let name: String
    /// Seconds this device's clock read ahead of the peer's (negative: behind it).
    public let offset: Int64

    public init(device: DeviceID, name: String, offset: Int64) {
        self.device = device
        self.name = name
        self.offset = offset
    }

    /// Whether the two clocks differ by more than ``ContainerBounds/maximumClockLead``.
    public var isOff: Bool { offset.magnitude > UInt64(ContainerBounds.maximumClockLead.components.seconds) }
}

extension Container {
    /// Every peer's clock reading (``ClockReading``), from the registry entries of every device
    /// but `own`, in device order. Entries that cannot be read are left out.
    ///
    /// `frame`: this device's clock less the system clock, which file times follow (zero, unless
    /// a test gives the device a clock of its own).
    public func clockReadings(excluding own: DeviceID, frame: TimeInterval = 0) -> [ClockReading] {
        let ownName = own.description + ".json"
        var readings: [ClockReading] = []
        for name in listNames(devicesDirectory).sorted() where name.hasSuffix(".json") && name != ownName {
            let url = devicesDirectory.appendingPathComponent(name, isDirectory: false)
            var info = stat()
            guard lstat(url.path, &info) == 0,
                  let record: DeviceRecord = try? readJSON(url, limit: Self.maximumRegistrySize), name == "\(record.device).json"
            else { continue }
            let landed = Double(FileStamp.nanoseconds(info.st_ctim)) / 1e9 + frame
            let seconds = (landed - record.updatedAt.timeIntervalSince1970).rounded()
            // Outside data: a date of any size reads as the largest offset, never a trap.
            let bound = 1e15
            let offset = seconds.isFinite ? Int64(max(-bound, min(bound, seconds))) : Int64(bound)
            readings.append(ClockReading(device: record.device, name: record.name, offset: offset))
        }
        return readings
    }
}
