import Foundation
import Model
import Sync

/// Keeps a library in step while a command runs (the CLI's `sync --watch`, `inspect`, `demo`,
/// the benchmark): inotify events feed a ``SyncLoop`` (targeted passes for the documents they
/// name), changes in the device's `documents` folder (saves by other processes) ask for a full
/// pass, and a full pass every `interval` is the safety net. Returns after the pass in which
/// `done` first answers true. (The daemon and the TUI run their own variants, which also
/// restart the watcher when the container comes back.)
public func liveSync(
    _ library: DocumentLibrary, container: URL?, documents: URL, interval: Duration = .milliseconds(500),
    until done: @escaping @Sendable () async -> Bool
) async {
    let loop = SyncLoop(device: library.identity.id)
    var watchers: [ContainerWatcher] = []
    var forwarders: [Task<Void, Never>] = []
    if let container, let watcher = try? ContainerWatcher(root: container) {
        watchers.append(watcher)
        forwarders.append(Task { for await event in watcher.events { loop.noteContainer(event, root: container) } })
    }
    if let watcher = try? ContainerWatcher(root: documents) {
        // Saves by other processes of this device land in Documents/: a full pass ships them.
        watchers.append(watcher)
        forwarders.append(Task { for await _ in watcher.events { loop.requestFullPass() } })
    }
    let timer = Task {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            loop.requestFullPass()
        }
    }
    await loop.run { batch in
        await library.sync(documents: batch.target)
        if await done() { loop.finish() }
    }
    timer.cancel()
    forwarders.forEach { $0.cancel() }
    watchers.forEach { $0.stop() }
}
