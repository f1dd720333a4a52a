/// A hybrid logical clock stamp (Kulkarni et al.): wall-clock milliseconds, a counter for
/// events within one millisecond, and the device as the final tie-break. Stamps of different
/// devices never compare equal, so last-writer-wins is a total order.
public struct Stamp: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    public var wall: UInt64
    public var counter: UInt32
    public var device: DeviceID

    public init(wall: UInt64, counter: UInt32, device: DeviceID) {
        self.wall = wall
        self.counter = counter
        self.device = device
    }

    public static func < (lhs: Stamp, rhs: Stamp) -> Bool {
        (lhs.wall, lhs.counter, lhs.device) < (rhs.wall, rhs.counter, rhs.device)
    }

    public var description: String { "\(wall).\(counter)@\(device.description.prefix(8))" }
}

/// The clock state one device keeps per document.
public struct HybridLogicalClock: Hashable, Sendable, Codable {
    public private(set) var wall: UInt64
    public private(set) var counter: UInt32

    public init(wall: UInt64 = 0, counter: UInt32 = 0) {
        self.wall = wall
        self.counter = counter
    }

    /// Advances for a local event at physical time `now` (milliseconds) and returns its stamp.
    ///
    /// The counter never wraps: at its maximum the clock moves one millisecond ahead instead, so
    /// every local stamp orders after every stamp the clock saw (a peer's log stamped with the
    /// counter at its maximum once made every later save here lose to it).
    public mutating func tick(now: UInt64, device: DeviceID) -> Stamp {
        if now > wall {
            wall = now
            counter = 0
        } else if counter < .max {
            counter += 1
        } else if wall < .max {
            wall += 1
            counter = 0
        }
        return Stamp(wall: wall, counter: counter, device: device)
    }

    /// Moves past a stamp received from another device so later local stamps order after it.
    public mutating func observe(_ remote: Stamp) {
        if remote.wall > wall {
            wall = remote.wall
            counter = remote.counter
        } else if remote.wall == wall {
            counter = max(counter, remote.counter)
        }
    }
}
