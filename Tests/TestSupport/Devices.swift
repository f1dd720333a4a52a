import Foundation
import Model
import Storage

/// Fixed identifiers for deterministic tests.
public enum Fixed {
    public static func uuid(_ n: Int) -> UUID {
        // The counter leads, so UUID prefixes differ the way random ones do.
        let hex = String(n, radix: 16)
        let padded = String(repeating: "0", count: max(0, 8 - hex.count)) + hex
        return UUID(uuidString: "\(padded.suffix(8))-0000-4000-8000-000000000000") ?? UUID()
    }

    public static func device(_ n: Int) -> DeviceID { DeviceID(uuid(0xD000 + n)) }
}

/// A generator of distinct UUIDs from a counter, for injection.
public final class SequentialUUIDs: @unchecked Sendable {
    private let lock = NSLock()
    private var next: Int

    public init(start: Int) { next = start }

    public func callAsFunction() -> UUID {
        lock.lock()
        defer { lock.unlock() }
        next += 1
        return Fixed.uuid(next)
    }
}

/// A clock tests move by hand.
public final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) { current = start }

    public func now() -> Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    public func advance(_ seconds: TimeInterval) {
        lock.lock()
        current += seconds
        lock.unlock()
    }
}
