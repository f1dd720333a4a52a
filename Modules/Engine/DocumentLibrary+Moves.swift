import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import Text

// Moving documents between this device and the container.
extension DocumentLibrary {
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
}
