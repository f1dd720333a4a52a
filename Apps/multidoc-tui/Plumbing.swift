import Engine
import Foundation
import Model
import Synchronization

/// How many sync passes ran (shown in the title bar so a user sees sync is alive).
final class SyncPassCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Engine events handed from the background to the UI loop, which drains them between keys.
final class EventInbox: Sendable {
    private let events = Mutex<[LibraryEvent]>([])

    func push(_ event: LibraryEvent) { events.withLock { $0.append(event) } }

    func drain() -> [LibraryEvent] {
        events.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }
}

/// Set by SIGTERM, SIGINT and SIGHUP; the UI loop checks it and leaves cleanly (endwin).
let terminationRequested = Atomic<Bool>(false)

/// Installs the handlers before curses starts, so curses keeps them instead of its own.
func installTerminationHandlers() {
    for number in [SIGTERM, SIGINT, SIGHUP] {
        signal(number) { _ in terminationRequested.store(true, ordering: .relaxed) }
    }
}
