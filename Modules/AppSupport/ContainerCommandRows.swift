import Engine
import Foundation
import Sync

/// What `container copy --json` prints: where the copy went and the files left out of it.
public struct ContainerCopyRow: Encodable, Sendable {
    /// The folder the container was copied to.
    public var copiedTo: String
    /// Each file not copied, with why (the text of the warning printed without `--json`).
    public var skipped: [String]

    public init(copiedTo: URL, skipped: [String]) {
        self.copiedTo = copiedTo.path
        self.skipped = skipped
    }
}

/// What `container adopt --json` prints: whether the container is there after the pass that
/// adopted it, and what that pass could not do.
public struct ContainerAdoptRow: Encodable, Sendable {
    /// The container folder adopted.
    public var container: String?
    public var cloudAvailable: Bool
    /// One line per problem of the pass (the lines printed without `--json`).
    public var problems: [String]

    public init(_ report: SyncReport, container: URL?) {
        self.container = container?.path
        cloudAvailable = report.cloudAvailable
        problems = report.problems.map(\.description)
    }
}

/// What `container reset --yes --json` prints: the new identity and what the pass that
/// adopted it could not do (documents kept as local ones among them).
public struct ContainerResetRow: Encodable, Sendable {
    /// The new container identity's UUID.
    public var containerID: String
    /// One line per problem of the pass (the lines printed without `--json`).
    public var problems: [String]

    public init(containerID: UUID, _ report: SyncReport) {
        self.containerID = containerID.uuidString.lowercased()
        problems = report.problems.map(\.description)
    }
}

/// What `device new-identity --json` prints without `--yes`: the device as it stays.
public struct NewIdentityPreviewRow: Encodable, Sendable {
    /// This device's UUID, unchanged.
    public var device: String
    /// Always false: nothing was changed (`--yes` changes it).
    public var changed = false

    public init(device: String) { self.device = device }
}
