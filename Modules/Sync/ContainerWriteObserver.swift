/// Told about every file a device writes into (or removes from) its container, after the change
/// is durable. The hook for a replication engine that wants to hear about new files at once
/// instead of finding them on its next scan (Syncthing's nudge).
///
/// ``containerDidChange(_:)`` runs on the writer's thread in the middle of a save or a sync
/// pass: it must return at once, never block and never fail. Work such as a network request
/// belongs on another task.
public protocol ContainerWriteObserver: Sendable {
    /// A file or folder at `relativePath` (relative to the container root, `/`-separated, for
    /// example `documents/<uuid>/logs/<device>/0000000000000007.log`) was written or removed.
    func containerDidChange(_ relativePath: String)

    /// Waits, at most `timeout`, until what was observed so far has been handed on. Short-lived
    /// processes call it before they exit (``DocumentLibrary.closeAll()`` does). The default
    /// returns at once.
    func flush(timeout: Duration) async
}

extension ContainerWriteObserver {
    public func flush(timeout: Duration) async {}
}

/// A ``ContainerWriteObserver`` made of a closure.
public struct ClosureContainerWriteObserver: ContainerWriteObserver {
    private let body: @Sendable (String) -> Void

    /// - Parameter body: called with each relative path; must return at once.
    public init(_ body: @escaping @Sendable (String) -> Void) { self.body = body }

    public func containerDidChange(_ relativePath: String) { body(relativePath) }
}
