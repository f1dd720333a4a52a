import Engine
import Foundation
import Synchronization
import Sync

/// Keeps a library in step while a command runs: a targeted sync pass for the documents inotify
/// names, a full pass when a change lies elsewhere, and a full pass every `interval` as a safety
/// net. Changes that land while a pass runs are coalesced into the next pass.
func liveSync(
    _ library: DocumentLibrary, container: URL?, documents: URL, interval: Duration = .milliseconds(500),
    until done: @escaping @Sendable () async -> Bool
) async {
    let (ticks, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let pending = PendingChanges()
    var watchers: [(ContainerWatcher, URL, Bool)] = []
    if let container, let watcher = try? ContainerWatcher(root: container) { watchers.append((watcher, container, true)) }
    if let watcher = try? ContainerWatcher(root: documents) { watchers.append((watcher, documents, false)) }
    let forwarders = watchers.map { watcher, root, isContainer in
        Task {
            for await event in watcher.events {
                // Saves by other processes of this device land in Documents/: a full pass ships them.
                pending.withLock { batch in
                    if isContainer { batch.add(event, container: root) } else { batch = ChangeBatch(everything: true) }
                }
                continuation.yield()
            }
        }
    }
    let timer = Task {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            pending.withLock { $0 = ChangeBatch(everything: true) }
            continuation.yield()
        }
    }
    continuation.yield()
    for await _ in ticks {
        let batch = pending.withLock { batch -> ChangeBatch in
            defer { batch = ChangeBatch() }
            return batch
        }
        if !batch.isEmpty { await library.sync(documents: batch.target) }
        if await done() { break }
    }
    timer.cancel()
    forwarders.forEach { $0.cancel() }
    watchers.forEach { $0.0.stop() }
    continuation.finish()
}

/// The batch shared between the watcher tasks and the loop.
final class PendingChanges: Sendable {
    private let batch = Mutex(ChangeBatch(everything: true))

    func withLock<T>(_ body: (inout ChangeBatch) -> T) -> T { batch.withLock { body(&$0) } }
}
