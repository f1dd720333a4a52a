import Engine
import Foundation
import Model
import Synchronization
import Sync

/// Keeps the library in step while the TUI runs, in this process: the engine's ``SyncLoop``
/// turns inotify events in the container into targeted passes (a full pass when a change lies
/// elsewhere), a timer asks for a full pass every `interval` as a safety net, and hints that
/// land while a pass runs are coalesced into the next one. Runs until its task is cancelled.
func runLiveSync(_ library: DocumentLibrary, container: URL?, interval: Duration, passes: SyncPassCounter) async {
    let loop = SyncLoop(device: library.identity.id)
    let watching = WatcherSlot()
    /// (Re)starts the watcher: at start, and when the container comes back after being gone
    /// (its watches died with the old folder).
    func watch() {
        watching.replace(with: container.flatMap { root in
            guard let watcher = try? ContainerWatcher(root: root) else { return nil }
            let forwarder = Task {
                for await event in watcher.events { loop.noteContainer(event, root: root) }
            }
            return (watcher, forwarder)
        })
    }
    watch()
    let timer = Task {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            loop.requestFullPass()
        }
    }
    var wasAvailable = await library.cloudAvailable
    _ = await withTaskCancellationHandler {
        await loop.run { batch in
            await library.sync(documents: batch.target)
            passes.increment()
            let available = await library.cloudAvailable
            if available, !wasAvailable || !watching.isWatching { watch() }
            wasAvailable = available
        }
    } onCancel: {
        loop.finish()
    }
    timer.cancel()
    watching.replace(with: nil)
}

/// The container watcher in use and the task forwarding its events.
final class WatcherSlot: Sendable {
    private let slot = Mutex<(ContainerWatcher, Task<Void, Never>)?>(nil)

    var isWatching: Bool { slot.withLock { $0 != nil } }

    func replace(with new: (ContainerWatcher, Task<Void, Never>)?) {
        let old = slot.withLock { current in
            defer { current = new }
            return current
        }
        old?.1.cancel()
        old?.0.stop()
    }
}

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
