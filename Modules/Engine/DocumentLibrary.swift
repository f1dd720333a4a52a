import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import Text

/// The document library every front end uses: lifecycle, the one document handler, sync
/// passes, local↔cloud moves, container changes and error recovery. One per device root and
/// process; several processes of one device may run at once (stores serialise their writes).
public actor DocumentLibrary {
    public struct Configuration: Sendable {
        public var root: DeviceRoot
        /// The shared container; nil means no cloud at all.
        public var container: URL?
        public var settings: ResolvedSettings
        public var identity: DeviceIdentity
        public var stores: StoreProvider
        public var now: @Sendable () -> Date
        public var newUUID: @Sendable () -> UUID
        public var logger: Logger
        /// Asked when the container's identity changed (the seed's delegate). Default: stay local.
        public var onContainerChange: @Sendable (String) -> ContainerChangeDecision
        /// Told about every file this device writes into the container (a replication engine's
        /// nudge); flushed by ``DocumentLibrary/closeAll()``. Nil: nobody is told.
        public var containerObserver: (any ContainerWriteObserver)?
        /// Keep a document's folder made ahead, here (an empty store, held open, and the record's
        /// file: ``SpareStores``) and in the container (``Replicator/prepareDocumentFolder()``),
        /// and each document's next log file, so that a new or newly discovered document, and
        /// each save, makes no file while someone waits. For long-lived processes (the daemon,
        /// the TUI): a command that exits at once would make them for nobody.
        public var keepsSpareStores: Bool

        public init(
            root: DeviceRoot, container: URL?, settings: ResolvedSettings, identity: DeviceIdentity,
            stores: StoreProvider, now: @escaping @Sendable () -> Date = Date.init,
            newUUID: @escaping @Sendable () -> UUID = UUID.init,
            logger: Logger = Logger(label: "multidoc.engine"),
            onContainerChange: @escaping @Sendable (String) -> ContainerChangeDecision = { _ in .stayLocal },
            containerObserver: (any ContainerWriteObserver)? = nil,
            keepsSpareStores: Bool = false
        ) {
            self.root = root
            self.container = container
            self.settings = settings
            self.identity = identity
            self.stores = stores
            self.now = now
            self.newUUID = newUUID
            self.logger = logger
            self.onContainerChange = onContainerChange
            self.containerObserver = containerObserver
            self.keepsSpareStores = keepsSpareStores
        }
    }

    public let configuration: Configuration
    public nonisolated var identity: DeviceIdentity { configuration.identity }
    public private(set) var settings: ResolvedSettings
    let root: DeviceRoot
    var replicator: Replicator?
    /// The replicator when the container in place may be read and written: nil without a
    /// container and while ``containerRefusal`` holds. Saves still commit through `replicator`
    /// (their logs wait in the outbox).
    var cloud: Replicator? { containerRefusal == nil ? replicator : nil }
    var logger: Logger
    let handler: DocumentHandler
    var subscribers: [UUID: AsyncStream<LibraryEvent>.Continuation] = [:]
    /// Problems found when opening documents, by document: what was found and the life it
    /// makes (damaged or unreadable).
    var problems: [DocumentID: (life: DocumentLife, message: String)] = [:]
    /// Documents whose graph became available in this process (for `becameViewable`).
    var viewable: Set<DocumentID> = []
    /// What error recovery did, by document (shown once by front ends).
    public internal(set) var recoveryReports: [DocumentID: String] = [:]
    /// Documents ``withDocument(_:_:)`` is creating, so that callers who ask meanwhile wait for
    /// the same creation.
    var creating: [DocumentID: Task<Void, any Error>] = [:]
    /// The inspected document and ping state (EnablePing).
    var ping = PingState()
    /// Whether this process has checked the container's identity (targeted passes skip it).
    var identityChecked = false
    /// Whether the last sync pass found the container usable.
    public internal(set) var cloudAvailable = true
    /// Why this device does not sync with the container in its place, while it does not: the
    /// container's identity changed and the front end's policy said stay, or its format is newer
    /// than this build's. Cloud documents stay cloud documents and keep every save in their
    /// outbox; nothing is read from or written to that container until the identity this device
    /// knows comes back or the user adopts the new one (Docs/DECISIONS.md).
    public internal(set) var containerRefusal: String?
    /// The container identity this device syncs with, and every identity in force (present and
    /// not replaced by a reset; both sides of a seeding race), as of the last identity check.
    /// Documents published under any other identity are left-overs of a reset container.
    var containerID: UUID?
    var containersInForce: Set<UUID> = []
    /// Every local record and what passes found quiet, checked by `stat` (see ``DocumentCatalog``).
    var catalog: DocumentCatalog
    /// Documents whose store changed since this library last shipped their outbox (saves here
    /// with FastSave off, or by another process of the device), and the store stamps after each
    /// document's last shipping: the autosave looks only at those that changed since.
    var storeTouched: Set<DocumentID> = []
    /// When each quiet mark's stamps were last found unchanged (see `trustedQuietMark`).
    var quietChecked: [DocumentID: ContinuousClock.Instant] = [:]
    /// Per document, the stamps of its folders in the container when a save last imported what
    /// was waiting there (compared with this device's own folder left out, ``stampsBeforeSave(_:in:)``):
    /// the next save imports only when they moved, so a save costs a few `stat`s, not a listing.
    var importedBeforeSave: [DocumentID: Container.ChangeStamps] = [:]
    /// The log format the device file says, with the identity and the bytes of the file it was
    /// read from: a save reads the file again only when it changed (one `stat`, not a read and
    /// a decode), and decodes it again only when its bytes changed.
    var deviceFileFormat: (file: FileIdentity, bytes: Data, format: LogFormat)?
    /// Whether a full pass has run in this process: until then nothing is known of which
    /// documents have logs waiting, and no arrival is imported alone.
    var fullPassDone = false
    /// Documents whose last whole import left something behind (a gap, a log waiting for
    /// another device's, a file it would not read): an arrival there may be what unblocks
    /// those, so it gets the whole pass.
    var importsLeftWaiting: Set<DocumentID> = []
    /// What the last previews showed of documents whose files were too recent for a quiet mark
    /// (the master table right after the pass).
    var previewed: [DocumentID: (viewable: Bool, modified: Date?, at: ContinuousClock.Instant)] = [:]
    /// When every record file was last checked (see ``allRecords(reusingRecentCheck:)``).
    var recordsChecked: ContinuousClock.Instant?
    var shippedStamps: [DocumentID: [FileStamp]] = [:]
    /// The device's signing key and the container's policy as last read (signed, admitted
    /// devices, encrypted): every save is sealed by it, every file read checked.
    let keys: ContainerKeys
    /// Spare stores taken since the last were made again, and the work making them
    /// (``replenishTakenSpares()``).
    var sparesTaken: Set<StoreKind> = []
    var spareWork: Task<Void, Never>?
    /// Documents this library discovered whose first log has not come yet, and when each was
    /// discovered: the log follows within milliseconds when the peer is live, and meanwhile
    /// the document stays open and no spare is made (``awaitingFirstLog()``).
    var discoveredAwaitingLog: [DocumentID: Date] = [:]

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        self.settings = configuration.settings
        self.root = configuration.root
        self.logger = configuration.logger
        keys = ContainerKeys(
            device: configuration.identity.id, keyURL: configuration.root.deviceKeyURL, containerKeyURL: configuration.root.containerKeyURL,
            trustURL: configuration.root.trustURL)
        let saved = configuration.root.savedDevice()
        if let root = saved?.signingRoot { keys.setPolicy(ContainerPolicy(root: root)) }
        if let container = configuration.container {
            var replicator = Replicator(
                container: Container(root: container, writeObserver: configuration.containerObserver, keys: keys),
                device: configuration.identity, now: configuration.now)
            // The format last seen (the identity check keeps it current).
            replicator.format = saved?.logFormat ?? .version1
            replicator.preparesNextLog = configuration.keepsSpareStores
            self.replicator = replicator
        } else {
            replicator = nil
        }
        handler = DocumentHandler(stores: configuration.stores, root: configuration.root)
        catalog = DocumentCatalog.load(configuration.root.catalogURL)
    }

    /// Replaces the settings in force (the daemon's SIGHUP).
    public func reload(settings: ResolvedSettings) { self.settings = settings }

    // MARK: Events

    /// A stream of everything that happens from now on.
    public func events() -> AsyncStream<LibraryEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: LibraryEvent.self, bufferingPolicy: .bufferingNewest(1024))
        let key = configuration.newUUID()
        subscribers[key] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(key) }
        }
        return stream
    }

    func unsubscribe(_ key: UUID) { subscribers[key] = nil }

    func emit(_ event: LibraryEvent) {
        for continuation in subscribers.values { continuation.yield(event) }
    }
}
