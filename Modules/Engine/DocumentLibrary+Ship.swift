import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import Text

// Shipping saves, publishing, renaming and deleting documents.
extension DocumentLibrary {
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

    /// `writingAhead`: a save of the document whose log is written beside its slot while the
    /// info file is; returned (``Published/writeAhead``) for the flush that puts it in place.
    /// `info`: the info file ``startPublishing(_:)`` wrote ahead.
    @discardableResult
    func publish(_ document: OpenDocument, baseline: Bool = false, writingAhead commit: LocalCommit? = nil, info: RecordWriteAhead? = nil) throws -> Published {
        guard replicator != nil else { return Published() }
        let replicator = try usableCloud()
        return Published(writeAhead: try replicator.publish(self.info(of: document.record), store: document.store, baseline: baseline, writingAhead: commit, info: info))
    }

    /// Starts publishing a new document while its store is made and its first save commits:
    /// its folder in the container taken, its info file written under a temporary name
    /// (``Replicator/startPublishing(_:)``). Nil when the container cannot take it now (the
    /// info file is then written when the document is published).
    func startPublishing(_ record: LocalDocumentRecord) -> RecordWriteAhead? {
        guard let replicator = try? usableCloud() else { return nil }
        let before = replicator.container.stamp(.documents)
        guard let ahead = try? replicator.startPublishing(info(of: record)) else { return nil }
        noteOwnDocumentFolder(before: before)
        return ahead
    }

    private func info(of record: LocalDocumentRecord) -> DocumentInfo {
        DocumentInfo(
            document: record.id, name: record.name, createdBy: record.createdBy, createdByName: identity.name,
            createdAt: record.createdAt, store: record.store, container: containerID)
    }

    /// What ``publish(_:baseline:writingAhead:info:)`` started: the log it writes ahead.
    struct Published {
        var writeAhead: LogWriteAhead?
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
}
