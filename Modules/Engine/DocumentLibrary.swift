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
    private var subscribers: [UUID: AsyncStream<LibraryEvent>.Continuation] = [:]
    /// Problems found when opening documents, by document.
    var problems: [DocumentID: String] = [:]
    /// Documents whose graph became available in this process (for `becameViewable`).
    private var viewable: Set<DocumentID> = []
    /// What error recovery did, by document (shown once by front ends).
    public internal(set) var recoveryReports: [DocumentID: String] = [:]
    /// Documents ``withDocument(_:_:)`` is creating, so that callers who ask meanwhile wait for
    /// the same creation.
    private var creating: [DocumentID: Task<Void, any Error>] = [:]
    /// The inspected document and ping state (EnablePing).
    var ping = PingState()
    /// Whether this process has checked the container's identity (targeted passes skip it).
    var identityChecked = false
    /// Whether the last sync pass found the container usable.
    public private(set) var cloudAvailable = true
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
    /// was waiting there (this device's own folder stamped again after each flush): the next
    /// save imports only when they moved, so a save costs a few `stat`s, not a listing.
    var importedBeforeSave: [DocumentID: Container.ChangeStamps] = [:]
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

    private func unsubscribe(_ key: UUID) { subscribers[key] = nil }

    func emit(_ event: LibraryEvent) {
        for continuation in subscribers.values { continuation.yield(event) }
    }

    // MARK: Listing and lookup

    /// The master table, sorted by name.
    public func list() async -> [DocumentSummary] {
        var result: [DocumentSummary] = []
        for record in allRecords(reusingRecentCheck: true) {
            result.append(await summary(of: record))
        }
        // Natural order (TestDoc2 before TestDoc10), with keys made once (a locale-aware
        // comparison per pair took an eighth of a 10,000-document list), sorting indices (moving
        // whole summaries while sorting cost as much again).
        let keys = result.map { NaturalOrder.key($0.name) }
        let order = result.indices.sorted { lhs, rhs in
            keys[lhs] == keys[rhs] ? result[lhs].id < result[rhs].id : keys[lhs] < keys[rhs]
        }
        return order.map { result[$0] }
    }

    func summary(of record: LocalDocumentRecord) async -> DocumentSummary {
        var summary = DocumentSummary(
            id: record.id, name: record.name.rawValue, state: .closed, origin: record.origin,
            location: record.location, store: record.store, viewable: false, downloadPercent: 0,
            modified: nil, problem: problems[record.id])
        if let problem = problems[record.id] {
            summary.state = [.savingError, .editingDisabled]
            summary.problem = problem
            return summary
        }
        let open = await handler.isOpen(record.id)
        // What is known without opening the store: a quiet mark whose stamps still hold (its
        // store files among them), or, for a discovered document not imported yet, what a
        // preview just showed (too recent for a mark).
        var known: (viewable: Bool, modified: Date?, downloaded: Bool)?
        if let mark = trustedQuietMark(record, cloud?.container, reusingRecentCheck: true) {
            known = (mark.viewable, mark.modified, !mark.preview)
        } else if !open, awaitsFirstImport(record) {
            guard let seen = previewed[record.id], ContinuousClock.now - seen.at < Self.recentCheck else {
                // Listed, not viewable until a preview or an import says so.
                summary.state = [.closed, .editingDisabled, .progressAvailable]
                return summary
            }
            known = (seen.viewable, seen.modified, false)
        }
        if let known {
            summary.state = open ? .normal : .closed
            summary.viewable = known.viewable
            summary.modified = known.modified
            // A preview read the document from the container: viewable while the container is
            // there, and nothing of it on this device yet (Docs/STATES.md).
            summary.downloadPercent = known.downloaded ? 100 : 0
            summary.previewed = !known.downloaded
            if !known.downloaded { summary.state.insert(.progressAvailable) }
            if !summary.viewable { summary.state.insert(.editingDisabled) }
            return summary
        }
        do {
            let contents = try await handler.peek(record)
            summary.state = open ? .normal : .closed
            summary.viewable = !contents.graph.objects.isEmpty
            summary.modified = contents.graph.textEntry?.modified
            if record.location == .cloud, let replicator = cloud {
                let progress = replicator.progress(record.id, applied: contents.sync.applied)
                summary.downloadPercent = progress.percent
                if progress.percent < 100 { summary.state.insert(.progressAvailable) }
            } else {
                summary.downloadPercent = 100
                // A local document has nothing to sync: what it shows holds while its store
                // files keep their stamps.
                if record.location == .local, !open, let stamps = quietStamps(record, nil) {
                    catalog.setQuiet(record.id, QuietMark(
                        stamps: stamps.stamps, devices: [], applied: contents.sync.applied, viewable: summary.viewable,
                        modified: summary.modified, ownLogs: 0))
                }
            }
            if !summary.viewable { summary.state.insert(.editingDisabled) }
        } catch let error as StoreError where error.kind == .notFound && record.origin == .discovered {
            // Its first import is making the store right now (another task of this library, or
            // another process): not viewable yet, not a problem.
            summary.state = [.closed, .editingDisabled, .progressAvailable]
        } catch {
            summary.state = [.closed, .savingError, .editingDisabled]
            summary.problem = "\(error)"
        }
        return summary
    }

    /// Finds a document by name, UUID or unique UUID prefix.
    /// - Throws: ``EngineError/unknownDocument(_:)``, or ``EngineError/ambiguousName(_:candidates:)``
    ///   when several documents share the name.
    public func resolve(_ query: String) throws(EngineError) -> LocalDocumentRecord {
        // The common case without looking at every record: a UUID, or a name the catalog knows
        // for exactly one document whose record file still says so. Anything else (unknown,
        // ambiguous, a prefix, a record renamed since) looks at every record.
        if let id = DocumentID(query), let record = localRecord(id) { return record }
        // The catalog matches bytes: only an ASCII name has no other canonically equal spelling
        // (NFC and NFD), which the look at every record below compares as equal.
        if query.utf8.allSatisfy({ $0 < 0x80 }) {
            let known = catalog.candidates(named: query)
            if known.count == 1, let only = known.first, let record = localRecord(only), record.name.rawValue == query {
                return record
            }
        }
        let records = allRecords()
        if let id = DocumentID(query), let record = records.first(where: { $0.id == id }) { return record }
        let named = records.filter { $0.name.rawValue == query }
        if named.count == 1, let only = named.first { return only }
        if named.count > 1 {
            throw .ambiguousName(query, candidates: named.sorted { $0.id < $1.id }.map { ($0.name.rawValue, $0.id.description) })
        }
        let lowered = query.lowercased()
        if lowered.count >= 4, lowered.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
            let prefixed = records.filter { $0.id.description.hasPrefix(lowered) }
            if prefixed.count == 1, let only = prefixed.first { return only }
            if prefixed.count > 1 {
                throw .ambiguousName(query, candidates: prefixed.map { ($0.name.rawValue, $0.id.description) })
            }
        }
        throw .unknownDocument(query, suggestions: Suggestions.closest(to: query, among: records.map(\.name.rawValue)))
    }

    // MARK: Lifecycle

    /// Creates a document (the seed's "+" button): the next `TestDoc<N>` unless named, a new
    /// UUID, one `TextEntry` naming this device and one `ModelVersion`; made ubiquitous when
    /// UseCloud is on and a container is configured.
    ///
    /// `id` gives the new document a known UUID (``withDocument(_:_:)`` creates one that way).
    public func create(name: DocumentName? = nil, store: StoreKind? = nil, id: DocumentID? = nil) async throws -> DocumentSummary {
        // The next TestDoc<N> from the names the catalog holds, chosen and recorded under the
        // root's naming lock: `new` run several times at once on one device never repeats a
        // default name (two devices still may, told apart by UUID).
        let naming = name == nil ? try FileLock(url: root.namingLockURL) : nil
        try naming?.lock()
        defer { naming?.unlock() }
        if name == nil, !catalogHoldsEveryDocument() {
            catalog.refresh(root)  // a catalog that does not hold every document (none yet, or stale)
        }
        let name = name ?? DefaultNaming.nextName(afterNames: catalog.names(startingWith: DefaultNaming.prefix))
        let kind = store ?? StoreKind(rawValue: settings.store) ?? .sqlite
        let useCloud = settings.useCloud && replicator != nil
        if useCloud { await checkContainerOnce() }
        let record = LocalDocumentRecord(
            id: id ?? DocumentID(configuration.newUUID()), name: name, store: kind, origin: .created,
            location: useCloud ? .cloud : .local, createdAt: configuration.now(), createdBy: identity.id,
            container: useCloud ? containerID : nil)
        let changes: [Change] = [
            .insert(ObjectID(configuration.newUUID().uuidString.lowercased()), entity: Entity.textEntry, attributes: [
                Entity.TextEntry.text: .string(identity.creationText),
                Entity.TextEntry.modified: .date(modifiedNow()),
            ]),
            .insert(ObjectID.seed("model-version"), entity: Entity.modelVersion, attributes: [
                Entity.ModelVersion.version: .int(SchemaVersion.current),
            ]),
            .insert(ObjectID.seed("document-info"), entity: Entity.documentInfo, attributes: [
                Entity.DocumentInfo.name: .string(name.rawValue),
            ]),
        ]
        // The store first, then the record: another process that lists the record always
        // finds its store. The info file before the first log: never logs without an info
        // file. When the first log is the durable step, the record comes after it, off the way
        // to the peers: a process killed before the record leaves a published document that
        // its next pass discovers again (over the store it made, whose outbox that pass ships),
        // as a peer would; otherwise before the info file, so that the next pass publishes a
        // document killed in between. The info file only once the first save is committed:
        // written beside the store's making (tried: 1–3 ms sooner to the peers), a process
        // killed before the commit left every device a document that never gets a log.
        let document = try await openDocument(record, create: true)
        do {
            return try await finishCreating(record, document: document, changes: changes, useCloud: useCloud, kind: kind)
        } catch {
            // Nothing is left behind by a `new` that failed before the document reached the
            // container: no store folder without its record. One that reached it is found again
            // by the next pass, over its store, as a peer would find it.
            if replicator?.container.isPublished(record.id, by: identity.id) != true {
                await handler.close(record.id)
                try? FileManager.default.removeItem(at: root.documentDirectory(record.id))
            }
            throw error
        }
    }

    private func finishCreating(
        _ record: LocalDocumentRecord, document: OpenDocument, changes: [Change], useCloud: Bool, kind: StoreKind
    ) async throws -> DocumentSummary {
        let name = record.name
        // One durable step for the first save too, when its log ships before `new` returns
        // (Docs/RELIABILITY.md, "One durable step per save"): the commit is not synced, the
        // store's folder is before the record (so the record always finds its store after a
        // power loss, if empty: the document's own log fills it again; a spare's was synced
        // when it was made), and the store is synced if the info file or the log cannot be
        // written.
        let logIsTheDurableStep = useCloud && settings.fastSave && containerRefusal == nil && cloud?.container.isAvailable == true
        try commit(changes, to: document, ship: useCloud, flush: false, durable: !logIsTheDurableStep)
        if !logIsTheDurableStep { try saveRecord(record) }
        if useCloud {
            // Unpublished (container unwritable), the log waits in the outbox for the pass
            // that publishes the document.
            let before = replicator?.container.stamp(.documents)
            var shipped = false
            if (try? publish(document)) != nil {
                noteOwnDocumentFolder(before: before)
                if settings.fastSave { shipped = flushQuietly(document) }
            }
            if logIsTheDurableStep, !shipped {
                do {
                    try document.store.sync()
                } catch {
                    throw EngineError.storeFailed(document: name.rawValue, detail: "the new document could not be made durable: its log did not reach the container and the store could not be synced (\(error))")
                }
            }
        }
        if logIsTheDurableStep {
            if !document.madeFromSpare {
                do {
                    try AtomicFile.syncDirectory(document.store.url.deletingLastPathComponent())
                } catch {
                    throw EngineError.storeFailed(document: name.rawValue, detail: "its folder could not be synced (\(error))")
                }
            }
            try saveRecord(record)
        }
        let summary = await summary(of: record)
        emit(.documentAdded(summary))
        logger.info("created document", metadata: ["name": "\(name)", "uuid": "\(record.id)", "location": "\(record.location.rawValue)"])
        // Its folder in the container may have been the one made ahead, whatever the store was.
        if useCloud { sparesTaken.insert(kind) }
        replenishTakenSpares()
        return summary
    }

    /// After this process added one document's folder to the container's `documents/`: when
    /// the folder was as this device last acted on it just before, and holds exactly one more
    /// subfolder now, the only change is this process's own, and the next command need not
    /// look for new documents there. The link count is what makes this safe within one tick of
    /// the file system's clock: a peer's folder added in the same tick changes it too.
    func noteOwnDocumentFolder(before: FileStamp?) {
        guard let before, before.countsSubfolders, catalog.containerStamps["documents"] == before,
              let container = replicator?.container else { return }
        let after = container.stamp(.documents)
        if after.links == before.links + 1 { catalog.setContainerStamp("documents", after) }
    }

    /// The one handler (seed 003's MYDocumentHandler, without the singleton): creates the
    /// document (as ``create(name:store:id:)`` would, under this UUID) if it does not exist,
    /// opens it if it is closed, runs at once if it is open; when several callers ask while it is
    /// being created or opened, they all wait for the same creation and open, and all run.
    public func withDocument<T: Sendable>(_ id: DocumentID, _ body: @Sendable (OpenDocument) async throws -> T) async throws -> T {
        if localRecord(id) == nil {
            if let pending = creating[id] {
                try await pending.value
            } else {
                let creation = Task { _ = try await self.create(id: id) }
                creating[id] = creation
                defer { creating[id] = nil }
                try await creation.value
            }
        }
        guard let record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        let document = try await open(record)
        return try await body(document)
    }

    /// Opens a document, recovering it if the store is damaged and AttemptErrorRecovery is on.
    func open(_ record: LocalDocumentRecord, forPass: Bool = false) async throws -> OpenDocument {
        do {
            // A discovered document gets its store when something first needs it, and (outside
            // a pass, which imports next) what the container holds of it at once: whoever
            // opens it sees what `list` called viewable.
            let create = awaitsFirstImport(record)
            var firstImport: Replicator?
            if create, !forPass {
                guard let cloud, cloud.container.isAvailable else {
                    let why = containerRefusal ?? "\(replicator.map { $0.container.root.path } ?? "no container is configured") cannot be read"
                    throw EngineError.containerUnavailable(
                        "\(record.name) is not on this device yet: it was listed from the container but never opened here, and the container is unavailable (\(why)). Open it again when the container is back.")
                }
                firstImport = cloud
            }
            let document = try await openDocument(record, create: create, forPass: forPass)
            if let firstImport {
                let imported = try firstImport.importPending(record.id, into: document.store)
                document.invalidate()
                logger.info("first import", metadata: ["name": "\(record.name)", "logs": "\(imported.imported.count)"])
            }
            problems[record.id] = nil
            if record.location == .local { keepLastGoodCopy(of: document) }
            return document
        } catch let error as StoreError {
            return try await storeOpenFailed(record, error)
        }
    }

    func setCloudAvailable(_ value: Bool) {
        cloudAvailable = value
        if !value { identityChecked = false }
    }
    func closeDocument(_ id: DocumentID) async { await handler.close(id) }
    func peek(_ record: LocalDocumentRecord) async throws -> StoreContents { try await handler.peek(record) }
    func openDocument(_ record: LocalDocumentRecord, create: Bool, forPass: Bool = false) async throws -> OpenDocument {
        let document = try await handler.open(record, create: create, forPass: forPass)
        if document.madeFromSpare { sparesTaken.insert(record.store) }
        return document
    }
    /// Closes what the pass opened and nobody else uses (the inspected document stays open).
    /// A discovered document waiting for its first log stays open too, for the pass its log
    /// starts in a moment (``discoveredAwaitingLog``).
    func closeWhatThePassOpened() async {
        await handler.closeWhatPassesOpened(except: ping.inspected, awaiting: awaitingFirstLog())
    }
    func closeIfThePassOpened(_ id: DocumentID) async {
        await handler.closeIfOpenedByPass(id, except: ping.inspected, awaiting: awaitingFirstLog())
    }
    /// How many stores the handler really opened (concurrent callers share one open).
    public func storeOpenCount() async -> Int { await handler.openCountForTesting() }
    /// How many documents are open right now (zero after ``closeAll()``).
    public func openDocumentCount() async -> Int { await handler.openNow }

    /// Closes every open document (the seed's applicationWillTerminate: save and close).
    public func closeAll() async {
        // Spares being made are held open when they are done: done first, then closed too
        // (none is started now: the process is closing).
        await finishSpareWork()
        await handler.closeAll()
        saveCatalog()
        // A short-lived process exits next: let the nudges for what it wrote go out first.
        await configuration.containerObserver?.flush(timeout: .seconds(2))
    }

    /// Details of one document (honours CopyContainerOnSegue when `segue` is true). The copy is
    /// for a bug report and never keeps the document from opening: when it fails, the detail
    /// says why in `containerCopyProblem`.
    public func detail(_ id: DocumentID, segue: Bool = false) async throws -> DocumentDetail {
        guard let record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        var copyProblem: String?
        if segue, settings.copyContainerOnSegue {
            do {
                try copyContainer(to: root.copyOfContainerURL)
            } catch {
                copyProblem = "CopyContainerOnSegue: the container was not copied: \(error)"
                logger.warning("container not copied", metadata: ["error": "\(error)"])
            }
        }
        let document = try await open(record)
        let contents = try document.read()
        let summary = await summary(of: record)
        let entry = contents.graph.textEntry
        return DocumentDetail(
            summary: summary, text: entry?.text ?? "", modified: entry?.modified, graph: contents.graph, containerCopyProblem: copyProblem)
    }

    /// Replaces the document's text (and its `modified` date), saving and shipping it.
    public func setText(_ id: DocumentID, _ text: String) async throws {
        try await editText(id) { _ in text }
    }

    /// The `modified` date of a save, in whole milliseconds: a date that survives the trip
    /// through a log (seconds since 1970 as a JSON number) and back unchanged, so the writer and
    /// its peers hold the same graph. A finer date came back one rounding step off on peers.
    func modifiedNow() -> Date {
        Date(timeIntervalSince1970: (configuration.now().timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    /// Appends to the document's text. The text is read inside the save's transaction, so
    /// appends from several processes of this device all land (none overwrites another).
    /// An empty suffix is still a save (its `modified` date), with no look at the text.
    public func appendText(_ id: DocumentID, _ suffix: String) async throws {
        try await editText(id, .append(suffix)) { _ in "" }
    }

    /// Inserts `text` at `position`, counted in Unicode scalars from the start of the text as it
    /// is inside the save's transaction.
    /// - Throws: ``EngineError/outOfRange(document:detail:)`` past the end of the text.
    public func insertText(_ id: DocumentID, _ text: String, at position: Int) async throws {
        guard position >= 0 else { return try await outOfRange(id, "cannot insert at \(position)") }
        // Empty: still a save (its `modified` date), refused past the end, with no look at the text.
        try await editText(id, .insert(text, at: position)) { Self.pastTheEnd("cannot insert at \(position)", $0) }
    }

    /// Deletes `length` Unicode scalars from `position`.
    /// - Throws: ``EngineError/outOfRange(document:detail:)`` for a range past the end.
    public func deleteText(_ id: DocumentID, at position: Int, length: Int) async throws {
        let (end, overflow) = position.addingReportingOverflow(length)
        guard position >= 0, length >= 0, !overflow else { return try await outOfRange(id, "cannot delete \(length) at \(position)") }
        let detail = { (count: Int) in Self.pastTheEnd("cannot delete \(length) at \(position)", count) }
        // Nothing to remove (length 0): still a save (its `modified` date), refused past the end.
        try await editText(id, .delete(position..<end), outOfRange: detail)
    }

    /// How an edit past the end of a text of `count` Unicode scalars is refused.
    static func pastTheEnd(_ what: String, _ count: Int) -> String {
        "\(what): the text has \(count) characters (Unicode scalars)"
    }

    /// Refuses an edit whose position no text has, naming the document and the text's length.
    private func outOfRange(_ id: DocumentID, _ what: String) async throws {
        let document = try await openEditable(id)
        let count = (try document.read().graph.textEntry?.text.unicodeScalars.count) ?? 0
        throw EngineError.outOfRange(document: document.record.name.rawValue, detail: Self.pastTheEnd(what, count))
    }

    /// Saves edits of the text at known places as one save (and its `modified` date), each
    /// counted in the text as the edits before it left it: what a front end that knows where
    /// the cursor is, or a replayed trace, hands over instead of the whole text.
    /// - Throws: ``EngineError/outOfRange(document:detail:)`` for an edit past the end (nothing
    ///   is saved).
    public func editText(_ id: DocumentID, _ edits: [TextEdit.Kind]) async throws {
        try await editText(id, edits) { Self.pastTheEnd("an edit reaches past the end", $0) }
    }

    /// Saves one edit of the text at a known place (and its `modified` date): operations made
    /// from the position, no whole text read or diffed. `outOfRange` words the refusal of an
    /// edit past the end, given the text's length.
    private func editText(_ id: DocumentID, _ kind: TextEdit.Kind, outOfRange: (Int) -> String) async throws {
        try await editText(id, [kind], outOfRange: outOfRange)
    }

    private func editText(_ id: DocumentID, _ kinds: [TextEdit.Kind], outOfRange: (Int) -> String) async throws {
        let document = try await openEditable(id)
        let name = document.record.name.rawValue
        let modified = modifiedNow()
        do {
            try save(to: document) { graph in
                guard let entry = graph.textEntry else {
                    throw EngineError.storeFailed(document: name, detail: "not viewable yet: its first import has not completed")
                }
                return ([.update(entry.id, attributes: [Entity.TextEntry.modified: .date(modified)])],
                        kinds.map { TextEdit(object: entry.id, attribute: Entity.TextEntry.text, $0) })
            }
        } catch TextError.positionOutOfRange(_, let count) {
            throw EngineError.outOfRange(document: name, detail: outOfRange(count))
        }
    }

    /// Saves text the user edited from `original` (the TUI's detail). A peer's append saved
    /// meanwhile is kept rather than overwritten (``Text/TextMerge``, a three-way merge).
    @discardableResult
    public func saveEditedText(_ id: DocumentID, _ text: String, editedFrom original: String) async throws -> TextMerge.Outcome {
        var outcome = TextMerge.Outcome.mine
        try await editText(id) { current in
            let merged = TextMerge.merge(original: original, mine: text, current: current)
            outcome = merged.outcome
            return merged.text
        }
        return outcome
    }

    /// Replaces the text with `edit(current text)` in one transaction.
    private func editText(_ id: DocumentID, _ edit: (String) -> String) async throws {
        try await editText(id) { current, _ in edit(current) }
    }

    /// Replaces the text with `edit(current text, document name)`, which may throw to save nothing.
    private func editText(_ id: DocumentID, _ edit: (String, String) throws -> String) async throws {
        let document = try await openEditable(id)
        let name = document.record.name.rawValue
        let modified = modifiedNow()
        try save(to: document) { graph in
            guard let entry = graph.textEntry else {
                throw EngineError.storeFailed(document: name, detail: "not viewable yet: its first import has not completed")
            }
            return [.update(entry.id, attributes: [
                Entity.TextEntry.text: .string(try edit(entry.text, name)), Entity.TextEntry.modified: .date(modified),
            ])]
        }
    }

    func openEditable(_ id: DocumentID) async throws -> OpenDocument {
        guard let record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        return try await open(record)
    }

    /// Saves changes: one transaction, one log, shipped before returning when FastSave is on.
    func save(_ changes: [Change], to document: OpenDocument) throws {
        try save(to: document) { _ in changes }
    }

    /// Saves the changes `makeChanges` makes from the graph as it is inside the transaction.
    func save(to document: OpenDocument, _ makeChanges: (ObjectGraph) throws -> [Change]) throws {
        try save(to: document) { graph in (try makeChanges(graph), []) }
    }

    /// Saves changes and edits of texts at known places made from the graph inside the transaction.
    func save(to document: OpenDocument, _ makeSave: (ObjectGraph) throws -> (changes: [Change], edits: [TextEdit])) throws {
        let ship = document.record.location == .cloud && replicator != nil
        try commit(to: document, ship: ship, makeSave)
    }

    /// `durable`: whether the commit is synced; nil decides as a save does (not when its log
    /// ships at once).
    private func commit(_ changes: [Change], to document: OpenDocument, ship: Bool, flush: Bool = true, durable: Bool? = nil) throws {
        try commit(to: document, ship: ship, flush: flush, durable: durable) { _ in (changes, []) }
    }

    private func commit(
        to document: OpenDocument, ship: Bool, flush: Bool = true, durable: Bool? = nil,
        _ makeSave: (ObjectGraph) throws -> (changes: [Change], edits: [TextEdit])
    ) throws {
        let id = document.record.id
        if ship, let cloud {
            let stamps = cloud.container.changeStamps(id, earlier: importedBeforeSave[id])
            if importedBeforeSave[id] != stamps {
                importedBeforeSave[id] = (try? cloud.importPending(id, into: document.store)) == nil ? nil : stamps
            }
            // A device that saves is registered before its first log ships: devices prune
            // their logs only once every registered device has applied them.
            try? cloud.registerIfMissing()
        }
        // The format the device file remembers (the identity check writes it there): another
        // process of this device may have seen the container, or its move to format 2, since
        // this one last looked; without the container, what the device saw last.
        let format = root.savedDevice()?.logFormat ?? .version1
        // One durable step per save (Docs/RELIABILITY.md): a save shipped now is acknowledged
        // once its log is in the container, so its commit is not synced; the store is synced
        // instead if the log cannot be written.
        let shipsNow = ship && flush && settings.fastSave
        let logIsTheDurableStep = shipsNow && containerRefusal == nil && cloud?.container.isAvailable == true
        let committed: LocalCommit
        // The cache let go first: the save changes the texts in place (a text held twice is
        // copied whole).
        document.invalidate()
        do {
            committed = try Replicator.commit(
                document: id, device: identity, format: format, keys: keys, now: configuration.now, to: document.store,
                ship: ship, durable: durable ?? !logIsTheDurableStep, editing: makeSave)
        } catch let error as SyncError where error.kind == .saveRefused {
            throw EngineError.saveRefused(document: document.record.name.rawValue, detail: error.detail)
        }
        document.invalidate()
        quietChecked[id] = nil
        emit(.objectsDidChange(id, ChangeSummary(updated: Set(committed.log.changes.map(\.id)))))
        emit(.didSave(id, committed.summary))
        if shipsNow {
            if !flushQuietly(document), logIsTheDurableStep {
                do {
                    try document.store.sync()
                } catch {
                    throw EngineError.storeFailed(document: document.record.name.rawValue, detail: "the save could not be made durable: its log did not reach the container and the store could not be synced (\(error))")
                }
            }
        } else if ship {
            storeTouched.insert(id)
        }
        if shipsNow, let cloud { restampOwnLogs(id, container: cloud.container) }
        // The save is done and shipped: now is when the store's housekeeping can wait.
        document.store.checkpointIfDue()
    }

    /// This device's own log folder in ``importedBeforeSave`` stamped again after a save shipped
    /// into it: peers never write there, so what changed it is this device's.
    private func restampOwnLogs(_ id: DocumentID, container: Container) {
        guard var stamps = importedBeforeSave[id] else { return }
        guard let index = stamps.devices.firstIndex(of: identity.id), let documents = container.documentsFolder() else {
            // A first log made this device's folder (and so changed `logs/`): listed again next time.
            importedBeforeSave[id] = nil
            return
        }
        stamps.stamps[index + 2] = FileStamp(in: documents, id.description + "/logs/" + identity.id.description)
        importedBeforeSave[id] = stamps
    }

    /// Ships what is waiting in a document's outbox; a missing container only delays it.
    /// Returns whether the outbox is empty now (everything in it shipped).
    @discardableResult
    func flushQuietly(_ document: OpenDocument) -> Bool {
        guard let replicator = cloud else { return false }
        do {
            try replicator.flush(document.record.id, in: document.store)
            return true
        } catch {
            logger.notice("log kept in the outbox until the container is back", metadata: ["name": "\(document.record.name)", "reason": "\(error)"])
            return false
        }
    }

    /// The replicator for an action that must reach the container now (delete, moves, publish).
    /// - Throws: ``EngineError/containerUnavailable(_:)`` without a container or while this
    ///   device refuses the one in place.
    func usableCloud() throws -> Replicator {
        guard let replicator else { throw EngineError.containerUnavailable("no container is configured (--container or MULTIDOC_CONTAINER)") }
        if let containerRefusal { throw EngineError.containerUnavailable(containerRefusal) }
        return replicator
    }

    /// Ships every outbox now (shutdown). Quiet documents have none and are not opened.
    public func flushAll() async {
        for record in allRecords() where record.location == .cloud && trustedQuietMark(record, cloud?.container) == nil {
            if let document = try? await handler.open(record, create: false, forPass: true) { flushQuietly(document) }
            await closeIfThePassOpened(record.id)
        }
    }

    /// Notes that a document's store changed (the watcher saw its files): with FastSave off,
    /// the next ``shipWaitingSaves()`` looks at it.
    public func noteStoreChange(_ id: DocumentID) { storeTouched.insert(id) }

    /// Ships the outboxes of the documents whose stores changed since they were last shipped
    /// (FastSave off's autosave tick): saves made here and by other processes of the device.
    public func shipWaitingSaves() async {
        guard cloud != nil else { return }
        let touched = storeTouched
        storeTouched = []
        for id in touched.sorted() {
            guard let record = localRecord(id), record.location == .cloud else { continue }
            let before = quietStamps(record, nil)?.stamps
            if let before, shippedStamps[id] == before { continue }
            if let document = try? await handler.open(record, create: false, forPass: true) { flushQuietly(document) }
            await closeIfThePassOpened(id)
            shippedStamps[id] = quietStamps(record, nil)?.stamps
        }
    }

    /// Checks the container's identity if this process has not yet (seeding it if the container
    /// is new), so that what is published names the container it goes into.
    func checkContainerOnce() async {
        guard replicator != nil, !identityChecked else { return }
        await sync(documents: [])
    }

    func publish(_ document: OpenDocument, baseline: Bool = false) throws {
        guard replicator != nil else { return }
        let replicator = try usableCloud()
        let info = DocumentInfo(
            document: document.record.id, name: document.record.name, createdBy: document.record.createdBy,
            createdByName: identity.name, createdAt: document.record.createdAt, store: document.record.store,
            container: containerID)
        try replicator.publish(info, store: document.store, baseline: baseline)
    }

    /// Renames a document: its folder here, and (for cloud documents) on every peer.
    public func rename(_ id: DocumentID, to newName: DocumentName) async throws {
        guard var record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        guard record.name != newName else { return }
        let document = try await open(record)
        try save([.insert(ObjectID.seed("document-info"), entity: Entity.documentInfo, attributes: [
            Entity.DocumentInfo.name: .string(newName.rawValue),
        ])], to: document)
        await handler.close(id)
        try renameRecord(&record, to: newName)
    }

    /// Renames a record; its store stays in the folder it is in (``LocalDocumentRecord/folder``).
    func renameRecord(_ record: inout LocalDocumentRecord, to newName: DocumentName) throws {
        record.folder = record.storeFolder
        record.name = newName
        if record.folder == newName { record.folder = nil }
        try saveRecord(record)
    }

    /// Deletes a document: its local copy, and (for a cloud document) its content in the
    /// container plus a tombstone, so every peer drops it and it never comes back.
    public func delete(_ id: DocumentID) async throws {
        guard let record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        await handler.close(id)
        if record.location == .cloud, replicator != nil {
            let replicator = try usableCloud()
            do {
                try deleteFromContainer(id, replicator)
            } catch {
                throw EngineError.containerUnavailable("cannot delete \(record.name) from the container: \(error)")
            }
        }
        moveToTrash(record, deletedBy: "this device")
        emit(.documentRemoved(id, name: record.name.rawValue))
        logger.info("deleted document (kept in the trash)", metadata: ["name": "\(record.name)", "uuid": "\(id)"])
    }

    func removeLocalCopy(_ record: LocalDocumentRecord) {
        try? FileManager.default.removeItem(at: root.documentDirectory(record.id))
        catalog.forget(record.id)
        problems[record.id] = nil
    }

    // MARK: Records

    /// Whether a discovered document has no local store yet (its first import makes it).
    func awaitsFirstImport(_ record: LocalDocumentRecord) -> Bool {
        guard record.origin == .discovered else { return false }
        // The store, not its folder: a process killed between the two leaves the folder.
        return !configuration.stores.exists(record.store, at: root.storeURL(record))
    }

    /// Every local record (checked against the record files: one `stat` each).
    ///
    /// With `reusingRecentCheck` (the master table and the end of a pass), a check of every
    /// record file made in the last ``recentCheck`` is taken as is: `list` right after the pass
    /// that checked them. This process's own writes are in the catalog either way.
    func allRecords(reusingRecentCheck: Bool = false) -> [LocalDocumentRecord] {
        if !reusingRecentCheck || recordsChecked.map({ ContinuousClock.now - $0 >= Self.recentCheck }) ?? true {
            catalog.refresh(root)
            recordsChecked = .now
        }
        return catalog.records
    }

    /// How long a look at every record file, or at a quiet document's stamps, serves the master
    /// table without looking again (the pass a command runs just before listing).
    static let recentCheck: Duration = .seconds(2)

    /// One local record, read again if its file changed.
    func localRecord(_ id: DocumentID) -> LocalDocumentRecord? { catalog.refresh(id, root) }

    /// Writes a record and notes it in the catalog (so the watcher's event for it is known as
    /// this process's own write).
    func saveRecord(_ record: LocalDocumentRecord, durable: Bool = true) throws(EngineError) {
        // A document's first record: its folder is the spare's when there is one.
        if SpareStores(root: root, stores: configuration.stores).takeDocumentFolder(record.store, for: record.id) {
            sparesTaken.insert(record.store)
        }
        try root.save(record, durable: durable)
        catalog.wrote(record, root)
    }

    /// Whether the record file of `id` is the one this process last read or wrote: a change
    /// seen there is its own, or already known.
    public func knowsRecordFile(_ id: DocumentID) -> Bool { catalog.knows(id, root) }

    /// Whether the catalog holds a document for every folder in `Documents/`: one `stat` (a
    /// folder's link count is two more than its subfolders) and, only when that disagrees
    /// (another folder there, or a file system that does not count links), one listing.
    func catalogHoldsEveryDocument() -> Bool {
        let held = catalog.count
        let folder = DirectoryHandle(path: root.documentsDirectory.path)
        if folder?.subfolderCount == held { return true }
        let listed = folder?.entries(".")?.lazy.filter { $0.isFolderOrUnknown && DocumentID($0.name) != nil }.count ?? 0
        return listed == held
    }

    /// How many documents the catalog holds, without checking the record files (the daemon's
    /// status after each pass: passes keep the catalog current).
    public func knownDocumentCount() -> Int { catalog.count }

    /// How many documents this device has (from the catalog, checked by `stat`).
    public func documentCount() -> Int {
        catalog.refresh(root)
        return catalog.count
    }

    /// Writes the catalog for the next process, if it changed. A failed write costs that
    /// process a slower first look.
    func saveCatalog() {
        do {
            try catalog.save(root.catalogURL)
        } catch {
            logger.debug("cannot write the catalog", metadata: ["error": "\(error)"])
        }
    }

    /// Moves a document's store to the other backend (one command for the user).
    public func convert(_ id: DocumentID, to kind: StoreKind) async throws {
        guard var record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        guard record.store != kind else { return }
        let document = try await open(record)
        let directory = root.storeDirectory(record)
        let target = directory.appendingPathComponent(kind.fileName, isDirectory: false)
        let converted = try configuration.stores.convert(document.store, to: kind, at: target)
        converted.close()
        await handler.close(id)
        let oldKind = record.store
        record.store = kind
        try saveRecord(record)
        try? configuration.stores.destroy(oldKind, at: directory.appendingPathComponent(oldKind.fileName, isDirectory: false))
        logger.info("converted document", metadata: ["name": "\(record.name)", "store": "\(kind)"])
    }

    // MARK: Local ↔ cloud

    /// Makes a local document ubiquitous; a baseline is written so peers can build it whole.
    /// Returns the document's identifier in the cloud: a new one when its old UUID was deleted
    /// from the cloud before (a tombstone never expires).
    @discardableResult
    public func moveToCloud(_ id: DocumentID) async throws -> DocumentID {
        guard var record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        guard record.location == .local else { throw EngineError.alreadyInCloud(record.name.rawValue) }
        let replicator = try usableCloud()
        do { try replicator.container.checkAvailable() } catch { throw EngineError.containerUnavailable("\(error)") }
        if replicator.container.isDeleted(id) {
            // This UUID was deleted from the cloud once (by any device); publishing it again would
            // be undone by the tombstone. Ship the contents under a new UUID instead.
            let contents = try await open(record).read()
            await handler.close(id)
            let fresh = try rekeyAsLocal(record, contents: contents)
            return try await moveToCloud(fresh)
        }
        await checkContainerOnce()
        record.location = .cloud
        record.container = containerID
        try saveRecord(record)
        await handler.close(id)
        let document = try await open(record)
        try publish(document, baseline: true)
        return id
    }

    /// Makes a cloud document local, as the user chose. Returns the local document's identifier:
    /// unchanged for `.keepUsingCloud`, new otherwise (the old UUID stays with the cloud copy or
    /// its tombstone).
    @discardableResult
    public func moveToLocal(_ id: DocumentID, choice: MoveToLocalChoice) async throws -> DocumentID {
        guard let record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        guard record.location == .cloud else { throw EngineError.notInCloud(record.name.rawValue) }
        switch choice {
        case .keepUsingCloud:
            return id
        case .removeCloud:
            // The cloud copy is tombstoned for every device. The local copy must not keep that
            // UUID: a tombstone is forever, so a later move back to the cloud would be deleted on
            // the next pass. It becomes a separate document with a new UUID.
            // Without the tombstone the cloud copy would be found again and listed as discovered.
            let replicator = try usableCloud()
            let document = try await open(record)
            let contents = try document.read()
            await handler.close(id)
            do {
                try deleteFromContainer(id, replicator)
            } catch {
                throw EngineError.containerUnavailable("cannot remove \(record.name) from the container: \(error)")
            }
            return try rekeyAsLocal(record, contents: contents)
        case .keepCloud:
            // The local copy becomes a separate document with a new UUID; the cloud one stays.
            let document = try await open(record)
            // Saves still waiting in the outbox (FastSave off, or the container was away) belong
            // to the cloud copy: ship them before its local store goes, or peers never get them.
            if replicator != nil, !(try document.read().sync.outbox.isEmpty) {
                let replicator = try usableCloud()
                do {
                    try replicator.flush(id, in: document.store)
                } catch {
                    throw EngineError.containerUnavailable("cannot ship \(record.name)'s waiting saves before keeping a local copy: \(error)")
                }
                document.invalidate()
            }
            let contents = try document.read()
            await handler.close(id)
            return try rekeyAsLocal(record, contents: contents)
        }
    }

    /// Gives a document's contents a new UUID as a local document created here, and removes the
    /// old local copy. Returns the new identifier.
    ///
    /// The new document's log streams start afresh: nothing is waiting to ship, no peer's log has
    /// been applied, and this device's count is kept (at least 1) so that the baseline written
    /// when it moves to the cloud is one a fresh peer takes.
    @discardableResult
    func rekeyAsLocal(_ record: LocalDocumentRecord, contents: StoreContents) throws -> DocumentID {
        var copy = record
        copy.id = DocumentID(configuration.newUUID())
        copy.location = .local
        copy.container = nil
        copy.origin = .created
        copy.createdBy = identity.id
        try saveRecord(copy)
        let store = try configuration.stores.open(copy.store, at: root.storeURL(copy), create: true)
        var local = contents
        local.sync.outbox = [:]
        local.sync.applied = [identity.id: max(1, contents.sync.applied[identity.id] ?? 0)]
        try store.write { $0 = local }
        store.close()
        removeLocalCopy(record)
        logger.info("document has a new identity", metadata: ["name": "\(record.name)", "old": "\(record.id)", "new": "\(copy.id)"])
        return copy.id
    }

    // MARK: Copies

    /// Copies the container into `destination` for a bug report (CopyContainerOnSegue): its
    /// folders and regular files, each copy private to its user (0600, folders 0700). Links and
    /// special files (a FIFO would block the copy for ever) are not followed or read; sparse
    /// files (a peer's 1 GB hole filled the disk) and files over ``largestCopiedFile`` are not
    /// copied either. Each skipped one is returned with why, so the report can name it.
    @discardableResult
    public func copyContainer(to destination: URL) throws -> [QuarantinedFile] {
        guard let replicator else { throw EngineError.containerUnavailable("no container is configured") }
        do { try replicator.container.checkAvailable() } catch { throw EngineError.containerUnavailable("\(error)") }
        try? FileManager.default.removeItem(at: destination)
        var skipped: [QuarantinedFile] = []
        do {
            try Self.copyTree(replicator.container.root, to: destination, skipped: &skipped)
        } catch {
            throw EngineError.io(destination.path, "\(error)")
        }
        return skipped
    }

    /// The largest file a container copy takes: the largest any container file may be (a
    /// baseline); anything larger is not a container file a reader would accept.
    public static let largestCopiedFile = Container.maximumBaselineSize

    private static func copyTree(_ source: URL, to destination: URL, skipped: inout [QuarantinedFile], depth: Int = 0) throws {
        try AtomicFile.makeDirectory(destination)
        for name in try DirectoryHandle.names(at: source.path).sorted() {
            let from = source.appendingPathComponent(name, isDirectory: false), to = destination.appendingPathComponent(name, isDirectory: false)
            var info = stat()
            guard lstat(from.path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR where depth < 16: try copyTree(from, to: to, skipped: &skipped, depth: depth + 1)
            case S_IFREG:
                let size = Int64(info.st_size)
                // Allocated bytes below the size (in whole 4 KiB blocks, so a small file's
                // tail never counts): a file with holes, never written by multidoc.
                let allocated = Int64(info.st_blocks).multipliedReportingOverflow(by: 512).partialValue
                if size > Int64(largestCopiedFile) {
                    skipped.append(QuarantinedFile(url: from, reason: "\(size) bytes, over the \(largestCopiedFile)-byte limit of a copy; not copied"))
                } else if size - allocated >= 64 * 1024 {
                    skipped.append(QuarantinedFile(url: from, reason: "a sparse file (\(size) bytes, \(allocated) on disk); not copied"))
                } else {
                    try AtomicFile.write(try AtomicFile.read(from, limit: largestCopiedFile, followSymlinks: false), to: to, durability: .none)
                }
            default: skipped.append(QuarantinedFile(url: from, reason: "a link or special file, not copied"))
            }
        }
    }
}
