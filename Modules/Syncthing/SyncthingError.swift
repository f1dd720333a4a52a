/// Why the Syncthing nudge cannot be set up, in words a user can act on.
public struct SyncthingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, naming the setting or file to fix.
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
