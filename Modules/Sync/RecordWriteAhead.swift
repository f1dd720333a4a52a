import Dispatch
import FileIO
import Foundation
import Synchronization

/// A record of the container written and synced under its temporary name on a thread of the
/// system's pool, while the caller does something else: a new document's info file while its
/// first save commits (``Replicator/startPublishing(_:)``). Nothing is in place until
/// ``Replicator/publish(_:store:baseline:writingAhead:info:)`` puts it there; a file never
/// taken is removed when the last reference goes.
public final class RecordWriteAhead: Sendable {
    private enum State {
        case writing
        case written(Result<AtomicFile.PreparedFile, SyncError>)
        case taken
    }

    private let state = Mutex(State.writing)
    private let finished = DispatchSemaphore(value: 0)

    init(_ write: @escaping @Sendable () throws(SyncError) -> AtomicFile.PreparedFile) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let written = Result { () throws(SyncError) in try write() }
            state.withLock { $0 = .written(written) }
            finished.signal()
        }
    }

    deinit {
        if case .written(.success(let prepared)) = state.withLock({ $0 }) { AtomicFile.discard(prepared) }
    }

    /// Waits for the write and hands its file out, once; the write's error when it failed.
    func take() throws(SyncError) -> AtomicFile.PreparedFile? {
        finished.wait()
        finished.signal()  // for a later caller
        let result = state.withLock { state -> Result<AtomicFile.PreparedFile, SyncError>? in
            guard case .written(let result) = state else { return nil }
            state = .taken
            return result
        }
        return try result?.get()
    }

    /// Drops the file unless it was taken (the save it waited for did not commit).
    public func discard() {
        if let prepared = try? take() { AtomicFile.discard(prepared) }
    }
}
