/// Where a document is in its life on this device, as a user sees it (Docs/STATES.md): the one
/// value the listing, the catalog's quiet marks, the passes and every front end read, instead of
/// combining a preview flag, a download percentage and a problem.
///
/// Whether its text can be shown (`viewable`), how far a download is, a stalled log and saves
/// not shipped yet are said beside it: they hold in several of these states.
public enum DocumentLife: String, Sendable, Hashable, CaseIterable, Codable {
    /// Known from its record only (a peer's info file): nothing of its content is here.
    case listed
    /// Read from the container into memory by a listing pass: it shows while the container is
    /// there, and nothing of it is on this device. Never downloaded.
    case previewed
    /// Its store is on this device, and the container holds logs the store has not applied.
    case downloading
    /// Its store is on this device with every log the container holds: it opens, shows and
    /// takes edits with the container gone. A document made here starts so.
    case downloaded
    /// Its store on this device is not a valid store (cut short, corrupt, gone while its record
    /// stays): AttemptErrorRecovery rebuilds it.
    case damaged
    /// Its store could not be opened or made, and is not damaged: another process holds it, a
    /// full disk, permissions, a newer schema.
    case unreadable
    /// Deleted, and its store is kept in `<root>/Trash/` for the library's `trashDays`
    /// days: `restore` brings its text back as a new document.
    case trashed
    /// Deleted, nothing of it kept here; its UUID never comes back.
    case deleted

    /// What moves a document from one state to another.
    public enum Event: String, Sendable, Hashable, CaseIterable, Codable {
        /// A listing pass read its logs from the container into memory.
        case previewRead
        /// Its store applied logs, and the container holds more.
        case partlyApplied
        /// Its store applied every log the container holds (or, for a local document, opened).
        case fullyApplied
        /// Its store was found not to be a valid store.
        case storeDamaged
        /// Its store could not be opened or made, though not damaged.
        case storeUnreadable
        /// A tombstone, this device's or a peer's, was accepted.
        case tombstoned
        /// Its trash entry went: past its days, or restored as a new document.
        case leftTrash
    }

    /// A move the life does not allow, with the state and the event that tried it.
    public struct IllegalMove: Error, Sendable, Hashable, CustomStringConvertible {
        /// The state the move was tried from.
        public let life: DocumentLife
        /// The event it was not allowed to take.
        public let event: Event

        /// The refusal of `event` in `life`.
        public init(life: DocumentLife, event: Event) {
            self.life = life
            self.event = event
        }

        public var description: String {
            "a document \(life.rawValue) on this device cannot take the event \(event.rawValue)"
        }
    }

    /// Where a document starts: made here, it is downloaded; found in the container, listed.
    public static func start(_ origin: DocumentOrigin) -> DocumentLife {
        origin == .created ? .downloaded : .listed
    }

    /// The state after `event`.
    /// - Throws: ``IllegalMove`` for a move the life does not allow: anything after deletion,
    ///   anything but leaving the trash once trashed, a preview of a document whose store is
    ///   here (a preview never stands for a download), damage to a store that is not here.
    public func after(_ event: Event) throws(IllegalMove) -> DocumentLife {
        switch (self, event) {
        case (.deleted, _): break
        case (.trashed, .leftTrash): return .deleted
        case (.trashed, _): break
        case (_, .leftTrash): break
        case (_, .tombstoned): return holdsStore ? .trashed : .deleted
        case (.listed, .previewRead), (.previewed, .previewRead): return .previewed
        case (_, .previewRead): break
        case (_, .partlyApplied): return .downloading
        case (_, .fullyApplied): return .downloaded
        case (.listed, .storeDamaged), (.previewed, .storeDamaged): break
        case (_, .storeDamaged): return .damaged
        case (_, .storeUnreadable): return .unreadable
        }
        throw IllegalMove(life: self, event: event)
    }

    /// Whether the document has a store on this device (it goes to the trash when deleted).
    /// An unreadable one may: the trash keeps it when its files are there.
    public var holdsStore: Bool {
        switch self {
        case .downloading, .downloaded, .damaged, .unreadable: true
        case .listed, .previewed, .trashed, .deleted: false
        }
    }

    /// Whether what it shows holds with the container gone: the whole store is here.
    public var isDownloaded: Bool { self == .downloaded }

    /// Whether it is in the master table (not deleted, not in the trash).
    public var isListed: Bool { self != .trashed && self != .deleted }
}
