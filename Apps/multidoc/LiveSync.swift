import Engine
import Foundation
import Sync

/// Keeps a library in step while a command runs: a sync pass whenever inotify reports a change
/// in the container or the device's documents, and every `interval` as a safety net. Changes
/// that land while a pass runs are coalesced into one more pass.
func liveSync(
    _ library: DocumentLibrary, container: URL?, documents: URL, interval: Duration = .milliseconds(500),
    until done: @escaping @Sendable () async -> Bool
) async {
    let (ticks, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    var watchers: [ContainerWatcher] = []
    for url in [container, documents].compactMap({ $0 }) {
        if let watcher = try? ContainerWatcher(root: url) { watchers.append(watcher) }
    }
    let forwarders = watchers.map { watcher in
        Task {
            for await _ in watcher.events { continuation.yield() }
        }
    }
    let timer = Task {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            continuation.yield()
        }
    }
    continuation.yield()
    for await _ in ticks {
        await library.sync()
        if await done() { break }
    }
    timer.cancel()
    forwarders.forEach { $0.cancel() }
    watchers.forEach { $0.stop() }
    continuation.finish()
}
