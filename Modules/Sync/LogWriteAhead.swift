import Dispatch
import FileIO
import Foundation
import Model
import Synchronization

/// A save's log written and synced beside its slot in the container on a thread of its own,
/// started inside the save's transaction once the log is staged, so that the slow half of the
/// save's one durable step (the log file's sync) runs while the store writes and commits.
///
/// The log is put in its slot only by the flush that follows the commit
/// (``Replicator/flush(_:in:after:)``): a save that does not commit leaves nothing in the
/// container, and the order of a device's logs, the slot checks and the folder's sync are
/// those of a plain flush. A write that failed costs nothing: the flush writes the log itself.
public final class LogWriteAhead: Sendable {
    /// The log's sequence and bytes, as the store's outbox holds them.
    let sequence: UInt64
    let data: Data

    private enum State: Sendable {
        case writing
        case written(Result<AtomicFile.PreparedFile, SyncError>)
        case done
    }

    private let state = Mutex(State.writing)
    private let finished = DispatchSemaphore(value: 0)

    /// One serial queue per process: a device's saves are serial anyway, and a queue of its own
    /// never waits behind other work.
    static let queue = DispatchQueue(label: "multidoc.log-write-ahead", qos: .userInitiated)

    /// Starts writing `data`, log `sequence` of `device`, beside its slot. With
    /// `preparingNext`, the empty file the next log fills is made too (``Replicator/preparesNextLog``),
    /// once the log's folder is there and before this one can be put in place: a peer that
    /// stamps the log folder once it sees this log sees the folder as the next save leaves it.
    /// On `standby`, the write runs on the thread woken for it before the log was staged.
    init(_ data: Data, container: Container, document: DocumentID, device: DeviceID, sequence: UInt64, preparingNext: Bool = false, on standby: StandbyWriter? = nil) {
        self.sequence = sequence
        self.data = data
        let job: @Sendable (AtomicFile.StandbyFile?) -> Void = { [self] file in
            let written = Result { () throws(SyncError) in
                try container.prepareLog(data, document: document, device: device, sequence: sequence, into: file)
            }
            // A save with a standby file needs no file made ahead: the next one makes its own.
            if preparingNext, file == nil, case .success = written, sequence < UInt64.max {
                // Not synced: its folder is an old one, synced by every log's write anyway.
                try? AtomicFile.makeSpareTemporary(forPath: container.logPath(document, device: device, sequence: sequence + 1), synced: false)
            }
            state.withLock { $0 = .written(written) }
            finished.signal()
        }
        if let standby {
            standby.run(job)
        } else {
            Self.queue.async { job(nil) }
        }
    }

    /// Starts writing the log `commit` staged (as its `outbox` holds it), if it holds one.
    static func starting(
        for commit: LocalCommit, container: Container, document: DocumentID, device: DeviceID, preparingNext: Bool, on standby: StandbyWriter? = nil
    ) -> LogWriteAhead? {
        guard let data = commit.outbox?[commit.log.sequence] else { return nil }
        return LogWriteAhead(data, container: container, document: document, device: device, sequence: commit.log.sequence, preparingNext: preparingNext, on: standby)
    }

    /// A file written and never taken nor dropped (a caller that let go of it) is removed.
    deinit {
        if case .written(.success(let prepared)) = state.withLock({ $0 }) { AtomicFile.discard(prepared) }
    }

    /// The prepared file of log ``sequence``, once written, if it holds `data`; nil when the
    /// write failed, was taken already, or is of other bytes (a log resealed since: dropped).
    func take(_ data: Data) -> AtomicFile.PreparedFile? {
        guard let prepared = finish() else { return nil }
        guard data == self.data else {
            AtomicFile.discard(prepared)
            return nil
        }
        return prepared
    }

    /// Drops the file unless it was taken: the save did not commit, or its flush stopped
    /// before this log.
    public func discard() {
        if let prepared = finish() { AtomicFile.discard(prepared) }
    }

    /// Waits for the write and hands its file out once.
    private func finish() -> AtomicFile.PreparedFile? {
        let pending = state.withLock { state -> Bool in
            if case .writing = state { return true }
            return false
        }
        if pending {
            finished.wait()
            // For any other caller waiting at once.
            finished.signal()
        }
        return state.withLock { state -> AtomicFile.PreparedFile? in
            defer { state = .done }
            guard case .written(.success(let prepared)) = state else { return nil }
            return prepared
        }
    }
}

/// A thread woken for a save's log when the save begins, before its log is staged: the
/// wake (tens of microseconds on a virtual machine) and the log file's creation (an inode found,
/// a folder entry written: ``Container/makeLogStandby(_:device:)``) happen while the save stages
/// its changes, not after. The thread then waits for the log by spinning for a moment (on a
/// machine with more than one processor), then asleep. ``run(_:)`` hands it the write;
/// ``cancel()`` lets it go, removing its file, when the save writes no log. One of the two must
/// follow.
public final class StandbyWriter: Sendable {
    typealias Work = @Sendable (AtomicFile.StandbyFile?) -> Void

    private enum State: Sendable {
        case waiting
        case work(Work)
        case cancelled
    }

    private let state = Mutex(State.waiting)
    private let handed = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    /// How long the thread spins for its work before it sleeps: a save stages a one-character
    /// edit in about 0.2 ms, a long edit in more.
    static let spinLimit = Duration.milliseconds(1)
    private static let spins = ProcessInfo.processInfo.activeProcessorCount > 1

    /// Wakes the thread, which makes the log's file in `device`'s log folder of `document`. A
    /// thread of the system's pool, not the writer's serial queue: a standby that waits through
    /// a long staging (or a store's busy wait) holds up no other document's log.
    public init(container: Container, document: DocumentID, device: DeviceID) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let file = container.makeLogStandby(document, device: device)
            let started = ContinuousClock.now
            var spinning = Self.spins
            while true {
                switch state.withLock({ $0 }) {
                case .work(let work):
                    work(file)
                    return
                case .cancelled:
                    if let file { AtomicFile.discard(file) }
                    released.signal()
                    return
                case .waiting:
                    if spinning, ContinuousClock.now - started < Self.spinLimit { continue }
                    spinning = false
                    handed.wait()
                }
            }
        }
    }

    /// Hands the thread its work (once); after ``cancel()``, the work runs on the queue without
    /// a file made ahead.
    func run(_ work: @escaping Work) {
        let taken = state.withLock { state -> Bool in
            guard case .waiting = state else { return false }
            state = .work(work)
            return true
        }
        if taken {
            handed.signal()
        } else {
            LogWriteAhead.queue.async { work(nil) }
        }
    }

    /// Lets the thread go without work, and returns once its file is removed; nothing once it
    /// has work.
    public func cancel() {
        let cancelled = state.withLock { state -> Bool in
            guard case .waiting = state else { return false }
            state = .cancelled
            return true
        }
        guard cancelled else { return }
        handed.signal()
        released.wait()
    }
}
