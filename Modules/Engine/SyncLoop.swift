import Foundation
import Model
import Synchronization
import Sync

/// Turns change hints (watcher events, timer ticks) into sync passes, one at a time: the core
/// of ``LiveSync``.
///
/// Hints that arrive while a pass runs are gathered into one ``ChangeBatch`` and run as one
/// more pass when it ends, never one pass per hint, so the number of passes follows how long
/// passes take, not how many files land. A hint that finds the loop idle starts a pass at once,
/// which keeps latency low. The loop starts with one full pass pending.
///
/// Thread-safe: hints may come from any task or thread while ``run(_:)`` runs.
public final class SyncLoop: Sendable {
    private struct State {
        var pending = ChangeBatch(everything: true)
        var finished = false
    }

    private let state = Mutex(State())
    private let wakeups: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation
    private let device: DeviceID?

    /// Makes a loop with one full pass pending. Container files written by `device` (this
    /// device) are not passes.
    public init(device: DeviceID? = nil) {
        self.device = device
        (wakeups, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        continuation.yield()
    }

    /// Notes a watcher event seen in `container`: a targeted pass for the document it names, a
    /// full pass if it names none; nothing for this device's own files.
    public func noteContainer(_ event: ContainerWatcher.Event, container: Container) {
        // A batch only grows, so comparing its size tells whether the event added anything
        // (copying the batch to compare it would cost a set copy per event in a burst).
        let woke = state.withLock { state -> Bool in
            let before = (state.pending.everything, state.pending.documents.count)
            state.pending.add(event, container: container, ignoring: device)
            return (state.pending.everything, state.pending.documents.count) != before
        }
        if woke { continuation.yield() }
    }

    /// Asks for a targeted pass over one document.
    public func note(_ id: DocumentID) {
        state.withLock { $0.pending.insert(id) }
        continuation.yield()
    }

    /// Asks for a full pass (a rescan tick, lost events, the container back).
    public func requestFullPass() {
        state.withLock { $0.pending = ChangeBatch(everything: true) }
        continuation.yield()
    }

    /// Ends ``run(_:)`` once the pass in progress, if any, returns. Pending hints are dropped.
    public func finish() {
        state.withLock { $0.finished = true }
        continuation.yield()
        continuation.finish()
    }

    /// Whether ``finish()`` was called.
    public var isFinished: Bool { state.withLock { $0.finished } }

    /// Runs `pass` for each batch of hints until ``finish()`` or task cancellation, one pass at a
    /// time. Returns the number of passes run. Call it once: the loop has one consumer.
    @discardableResult
    public func run(_ pass: (ChangeBatch) async -> Void) async -> Int {
        var passes = 0
        for await _ in wakeups {
            let batch = state.withLock { state -> ChangeBatch? in
                guard !state.finished else { return nil }
                defer { state.pending = ChangeBatch() }
                return state.pending
            }
            guard let batch else { break }
            if batch.isEmpty { continue }
            await pass(batch)
            passes += 1
        }
        return passes
    }
}
