/// A replica's identity in replicated text: the 16 bytes of a device's UUID.
///
/// Agents break ties between concurrent inserts at the same place, so they compare by their
/// bytes (as unsigned big-endian numbers): every replica orders them the same way, whatever
/// order it learned of them in.
public struct Agent: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Bytes 0–7, big-endian.
    public let high: UInt64
    /// Bytes 8–15, big-endian.
    public let low: UInt64

    /// An agent from its two big-endian halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// An agent from 16 bytes (a UUID's), or nil when `bytes` is not 16 long.
    public init?(bytes: some Sequence<UInt8>) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var count = 0
        for byte in bytes {
            guard count < 16 else { return nil }
            if count < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
            count += 1
        }
        guard count == 16 else { return nil }
        self.init(high: high, low: low)
    }

    /// The 16 bytes, in UUID order.
    public var bytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    public static func < (lhs: Agent, rhs: Agent) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }

    /// Lower-case hex, 32 digits.
    public var description: String {
        bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return "\(digits[Int(byte >> 4)])\(digits[Int(byte & 15)])"
        }.joined()
    }
}

/// The identity of one inserted Unicode scalar: who inserted it and that agent's counter.
///
/// An agent numbers its scalars with increasing counters and never reuses one, so an id names
/// one scalar on every replica for ever, wherever it ends up in the text.
public struct TextID: Hashable, Sendable, CustomStringConvertible {
    public var agent: Agent
    public var counter: UInt64

    public init(agent: Agent, counter: UInt64) {
        self.agent = agent
        self.counter = counter
    }

    public var description: String { "\(agent)@\(counter)" }
}

/// A run of ids of one agent: `counters` are consecutive.
public struct TextIDRange: Hashable, Sendable {
    public var agent: Agent
    public var counters: Range<UInt64>

    public init(agent: Agent, counters: Range<UInt64>) {
        self.agent = agent
        self.counters = counters
    }
}
