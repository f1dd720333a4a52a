import Dispatch
import Testing

/// Runs a suite's tests on threads of their own instead of Swift's cooperative pool, which has
/// one thread per core (two here). Tests that wait for processes synchronously
/// (``ProductRunner/run(_:_:environment:stdin:timeout:fileSizeLimit:directory:)``) hold a
/// thread for as long as the process runs; on the pool, two such suites at once left nothing
/// for the tests that wait on events (live sync, the TUI, the daemons), which then timed out.
public struct OffThePool: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(ThreadsExecutor.shared) { try await function() }
    }
}

extension Trait where Self == OffThePool {
    /// The suite's tests run on threads of their own, not on the cooperative pool.
    public static var offThePool: OffThePool { OffThePool() }
}

/// A task executor on a concurrent dispatch queue: its threads are not the cooperative pool's.
final class ThreadsExecutor: TaskExecutor {
    static let shared = ThreadsExecutor()
    private let queue = DispatchQueue(label: "multidoc.tests.off-the-pool", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
