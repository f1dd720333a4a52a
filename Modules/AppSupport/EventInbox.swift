import Engine
import Synchronization

/// Engine events handed from a background task to a front end's loop, which drains them
/// between keys (the TUI).
public final class EventInbox: Sendable {
    private let events = Mutex<[LibraryEvent]>([])

    public init() {}

    /// Keeps `event` for the next ``drain()``.
    public func push(_ event: LibraryEvent) { events.withLock { $0.append(event) } }

    /// The events pushed since the last drain, oldest first.
    public func drain() -> [LibraryEvent] {
        events.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }
}

/// How many sync passes ran (the TUI's title bar shows it, so a user sees sync is alive).
public final class SyncPassCounter: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// Counts one pass.
    public func increment() { count.add(1, ordering: .relaxed) }
    public var value: Int { count.load(ordering: .relaxed) }
}
