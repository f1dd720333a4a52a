import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import Text

// Creating and opening documents.
extension DocumentLibrary {
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
        // document killed in between. The info file is put in place only once the first save
        // is committed: a process killed before the commit must not leave every device a
        // document that never gets a log.
        //
        // When the first log is the durable step, the info file is written and synced under a
        // temporary name from here on, beside the store's opening and the first save (whose
        // log is written ahead meanwhile), in the document's folder in the container taken
        // now; once the save committed, the info file goes in place, the log right after it,
        // and the folder is synced before `new` returns.
        let infoAhead = useCloud && logCanShipNow ? startPublishing(record) : nil
        let document: OpenDocument
        do {
            document = try await openDocument(record, create: true)
        } catch {
            if let infoAhead { replicator?.abandonPublishing(record.id, infoAhead) }
            throw error
        }
        do {
            return try await finishCreating(
                record, document: document, changes: changes, useCloud: useCloud, kind: kind, infoAhead: infoAhead, newUUID: id == nil)
        } catch {
            // Nothing is left behind by a `new` that failed before the document reached the
            // container: no store folder without its record, no folder in the container without
            // an info file. One that reached it is found again by the next pass, over its store,
            // as a peer would find it.
            if replicator?.container.isPublished(record.id, by: identity.id) != true {
                await handler.close(record.id)
                try? FileManager.default.removeItem(at: root.documentDirectory(record.id))
                if let infoAhead { replicator?.abandonPublishing(record.id, infoAhead) }
            }
            throw error
        }
    }

    func finishCreating(
        _ record: LocalDocumentRecord, document: OpenDocument, changes: [Change], useCloud: Bool, kind: StoreKind, infoAhead: RecordWriteAhead?,
        newUUID: Bool
    ) async throws -> DocumentSummary {
        let name = record.name
        // One durable step for the first save too, when its log ships before `new` returns
        // (Docs/RELIABILITY.md, "One durable step per save"): the commit is not synced, the
        // store's folder is before the record (so the record always finds its store after a
        // power loss, if empty: the document's own log fills it again; a spare's was synced
        // when it was made), and the store is synced if the info file or the log cannot be
        // written.
        let logIsTheDurableStep = useCloud && logCanShipNow
        var committed = try commit(changes, to: document, ship: useCloud, flush: false, durable: !logIsTheDurableStep, writingLogAhead: infoAhead != nil && logIsTheDurableStep,
            peersMayHaveLogs: !newUUID)
        if !logIsTheDurableStep { try saveRecord(record) }
        if useCloud {
            // Unpublished (container unwritable), the log waits in the outbox for the pass
            // that publishes the document.
            let before = replicator?.container.stamp(.documents)
            var shipped = false
            // The first log, written beside its slot while the store committed (or while the
            // info file is written), put in place after the info file
            // (``Replicator/publish(_:store:baseline:writingAhead:info:)``).
            if let published = try? publish(document, writingAhead: settings.fastSave ? committed : nil, info: infoAhead) {
                committed.writeAhead = published.writeAhead
                noteOwnDocumentFolder(before: before)
                if settings.fastSave { shipped = flushQuietly(document, after: committed) }
                // The info file went in place without a sync of its folder, so that the first
                // log could follow it at once: synced now, before `new` returns.
                if infoAhead != nil, let replicator, (try? replicator.finishPublishing(record.id)) == nil { shipped = false }
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
        guard let before, before.countsSubfolders, catalog.containerStamps[.documents] == before,
              let container = replicator?.container else { return }
        let after = container.stamp(.documents)
        if after.links == before.links + 1 { catalog.setContainerStamp(.documents, after) }
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
            if create { forgetPreview(record.id) }
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

    /// A discovered document got its store: it is no longer previewed, and a preview's quiet
    /// mark (trusted for ``recentCheck`` without a look at its stamps) would say it still is.
    func forgetPreview(_ id: DocumentID) {
        previewed[id] = nil
        guard catalog.quiet(id)?.life == .previewed else { return }
        catalog.setQuiet(id, nil)
        quietChecked[id] = nil
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
}
