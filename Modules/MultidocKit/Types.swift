import Foundation
import Model

/// One document as this device sees it: a row of the master list.
public struct Document: Sendable, Equatable, Codable, Identifiable {
    /// The document's UUID, the same on every device.
    public var id: UUID
    /// Its name (unique on a device; a peer's rename travels with its saves).
    public var name: String
    /// The seed's status words, such as `Normal` or `Closed|Editing Disabled|Progress Available`.
    public var state: String
    /// Where it came from: made here, or found in the container (made by a peer).
    public var origin: Origin
    /// Whether its text can be shown (false until a discovered document's first import).
    public var viewable: Bool
    /// How much of what the container holds of it is on this device (0–100; 0 for a preview).
    public var downloadPercent: Int
    /// When its text was last saved, on any device.
    public var modified: Date?
    /// Why it is in an error state, when it is.
    public var problem: String?
    /// Where it is in its life on this device: the one value ``viewable`` and
    /// ``downloadPercent`` agree with.
    public var life: Life

    /// Where a document is in its life on this device: the engine's own states, so a front end
    /// built on this library and the CLI never disagree on what a document is.
    public typealias Life = DocumentLife

    /// Where a document came from.
    public enum Origin: String, Sendable, Equatable, Codable {
        /// Created on this device.
        case created
        /// Found in the container, made by another device.
        case discovered
    }

    /// A row as given (for tests and previews; the device makes its own).
    public init(
        id: UUID, name: String, state: String, origin: Origin, viewable: Bool, downloadPercent: Int, modified: Date?,
        problem: String?, life: Life = .downloaded
    ) {
        self.id = id
        self.name = name
        self.state = state
        self.origin = origin
        self.viewable = viewable
        self.downloadPercent = downloadPercent
        self.modified = modified
        self.problem = problem
        self.life = life
    }
}

/// Something that happened to the device's documents, in the order it happened.
public enum DocumentChange: Sendable, Equatable {
    /// A document was made on this device (``MultidocDevice/create(named:)``, a restore, or
    /// another process of the device).
    case created(Document)
    /// A peer's document was found in the container.
    case discovered(Document)
    /// A peer's saves were imported; `from` names the peers.
    case imported(UUID, from: [String])
    /// A document this device could not show before can now be shown.
    case viewable(UUID)
    /// A save was made on this device.
    case saved(UUID)
    /// A document got a new name, here or on a peer.
    case renamed(UUID, from: String, to: String)
    /// A document was deleted, here or on a peer.
    case deleted(UUID, name: String)
    /// A document waits for a save that is missing from the container; `detail` says which and
    /// what gets it going.
    case stalled(name: String, detail: String)
}

/// One save in a document's history, oldest first.
public struct HistoryEntry: Sendable, Equatable, Codable {
    /// This device's number for the save (1, 2, 3 … in the order it applied them).
    public var number: UInt64
    /// The name of the device that made it.
    public var device: String
    /// When it was committed on that device.
    public var committedAt: Date
    /// Characters (Unicode scalars) it added.
    public var added: Int
    /// Characters (Unicode scalars) it removed.
    public var removed: Int
}

/// What the device is doing.
public struct DeviceStatus: Sendable, Equatable, Codable {
    /// The device's name, as peers see it.
    public var device: String
    /// The device's UUID.
    public var deviceID: UUID
    /// The device root.
    public var root: String
    /// The container, when the device syncs through one.
    public var container: String?
    /// Whether the last sync could use the container.
    public var containerAvailable: Bool
    /// Documents on this device.
    public var documents: Int
    /// Problems the last sync reported, one line each, each ending with what gets out of it.
    public var problems: [String]
}

/// What one ``MultidocDevice/syncNow()`` did.
public struct SyncSummary: Sendable, Equatable, Codable {
    /// Logs imported from peers.
    public var imported: Int
    /// Logs this device shipped into the container.
    public var exported: Int
    /// Names of documents found in the container.
    public var discovered: [String]
    /// Problems, one line each.
    public var problems: [String]
}

/// How fast peers' changes reached this device: one-way latencies of imports into the
/// inspected documents (``MultidocDevice/latencies()``).
public struct Latencies: Sendable, Equatable, Codable {
    /// One import.
    public struct Sample: Sendable, Equatable, Codable {
        /// When the change was imported here.
        public var at: Date
        /// The inspected document it changed.
        public var document: UUID
        /// The name of the peer that made it.
        public var from: String
        /// Import time minus the peer's commit time (includes clock skew across hosts).
        public var oneWayMs: Double
        /// On the device whose ping was answered: ping saved → answer imported.
        public var roundTripMs: Double?
    }

    /// Every sample, oldest first.
    public var samples: [Sample]
    /// How many samples there are.
    public var count: Int
    /// The one-way median, nil without samples.
    public var p50Ms: Double?
    /// The one-way 90th percentile, nil without samples.
    public var p90Ms: Double?
    /// The slowest one-way figure, nil without samples.
    public var maxMs: Double?
    /// The samples as an SVG plot (empty without samples).
    public var svg: String
}

/// What went wrong, in words a user can act on. ``underlying`` keeps the engine's error.
public struct MultidocError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it is, so a caller can act on it without reading words.
    public enum Kind: Sendable, Equatable {
        /// No document by that name or UUID (or not in the trash, for a restore).
        case notFound
        /// The request itself is wrong: a bad name, a range past the end of the text, a bad setting.
        case invalid
        /// Several documents match; give a UUID.
        case ambiguous
        /// The container is missing, unreadable or refuses this device.
        case container
        /// Anything else: a store or file that cannot be read or written.
        case failed
    }

    /// What kind of failure it is.
    public let kind: Kind
    /// The message, one line.
    public let description: String
    /// The error that caused it.
    public let underlying: (any Error)?

    /// An error of `kind`, saying `description`, caused by `underlying`.
    public init(_ kind: Kind, _ description: String, underlying: (any Error)? = nil) {
        self.kind = kind
        self.description = description
        self.underlying = underlying
    }
}
