import Foundation
import Model
import Settings
import Storage
import Sync

/// One object of seed data for a library-style document.
public struct SeedObject: Sendable, Equatable {
    /// A key unique within the document; it becomes the object's global identifier, so every
    /// device that seeds the same key makes the same object.
    public var key: String
    public var entity: String
    public var attributes: [String: AttributeValue]

    public init(key: String, entity: String, attributes: [String: AttributeValue]) {
        self.key = key
        self.entity = entity
        self.attributes = attributes
    }
}

extension DocumentLibrary {
    /// Library style (seed 004): an app that keeps one well-known database. Every device calls
    /// this on first run; the document has a fixed UUID and its seed objects have deterministic
    /// global identifiers (as Ensembles does), so two devices that seeded it before they saw
    /// each other end with one copy of the seed objects, not two.
    public func sharedDocument(id: DocumentID, name: DocumentName, seed: [SeedObject]) async throws -> DocumentSummary {
        if let record = localRecord(id) { return await summary(of: record) }
        let useCloud = settings.useCloud && replicator != nil
        if useCloud { await checkContainerOnce() }
        let record = LocalDocumentRecord(
            id: id, name: name, store: StoreKind(rawValue: settings.store) ?? .sqlite, origin: .created,
            location: useCloud ? .cloud : .local, createdAt: configuration.now(), createdBy: identity.id,
            container: useCloud ? containerID : nil)
        let document = try await openDocument(record, create: true)
        try saveRecord(record)
        if useCloud, let replicator = cloud { _ = try? replicator.importPending(id, into: document.store) }
        let changes = seed.map { Change.insert(ObjectID.seed($0.key), entity: $0.entity, attributes: $0.attributes) }
        try save(changes, to: document)
        if useCloud { _ = try? publish(document) }
        let summary = await summary(of: record)
        emit(.documentAdded(summary))
        return summary
    }
}
