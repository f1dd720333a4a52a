/// A problem with the container or a file in it, in words a user can act on.
public struct SyncError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The container folder is missing, unmounted or unreadable.
        case containerUnavailable
        /// The container was made by a newer multidoc.
        case unknownFormat(found: Int, supported: Int)
        /// The container's identity is not the one this device synced with.
        case identityChanged(remembered: String, found: String?)
        /// A file in the container is not what its name says (quarantined, not imported).
        case malformedFile
        /// Writing into the container failed.
        case writeFailed
        /// A save that no peer would accept (too large, past the last sequence): not committed.
        case saveRefused
        /// The device's signing key cannot be read, made or used.
        case keyUnusable
        /// The container is signed and this device is not admitted, or encrypted and this device
        /// does not hold its key: it cannot write anything its peers accept.
        case notAdmitted
        /// The container is encrypted and this device does not hold the key, or the passphrase
        /// given is not the container's.
        case locked
    }

    public let kind: Kind
    public let path: String
    public let detail: String
    /// What gets out of the state this error leaves the device in, when the error knows it.
    public let wayOut: WayOut?

    public init(_ kind: Kind, path: String, detail: String = "", wayOut: WayOut? = nil) {
        self.kind = kind
        self.path = path
        self.detail = detail
        self.wayOut = wayOut
    }

    public var description: String {
        wayOut.map { "\(summary); \($0)" } ?? summary
    }

    /// The error without its way out.
    public var summary: String {
        let what: String
        switch kind {
        case .containerUnavailable: what = "container is unavailable"
        case .unknownFormat(let found, let supported):
            what = "container has format version \(found); this build knows up to \(supported)"
        case .identityChanged(let remembered, let found):
            what = "container identity changed (this device synced with \(remembered), the container is now \(found ?? "without an identity"))"
        case .malformedFile: what = "malformed file, quarantined"
        case .writeFailed: what = "cannot write into the container"
        case .saveRefused: what = "save refused, nothing was changed"
        case .keyUnusable: what = "device key unusable"
        case .notAdmitted: what = "this device is not admitted to the container"
        case .locked: what = "container is encrypted"
        }
        return detail.isEmpty ? "\(path): \(what)" : "\(path): \(what): \(detail)"
    }
}
