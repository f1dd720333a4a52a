import Model

extension DocumentLibrary {
    /// The record of a document known by its UUID (MultidocKit's look-ups).
    /// - Throws: ``EngineError/unknownDocument(_:suggestions:)``.
    package func resolveRecord(_ id: DocumentID) throws(EngineError) -> LocalDocumentRecord {
        guard let record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        return record
    }

    /// The master table's row of one document.
    /// - Throws: ``EngineError/unknownDocument(_:suggestions:)``.
    package func summary(_ id: DocumentID) async throws(EngineError) -> DocumentSummary {
        await summary(of: try resolveRecord(id))
    }
}

extension DocumentLibrary {
    /// Every document's name, from the records alone (no store opened).
    package func recordNames() -> [DocumentID: String] {
        Dictionary(allRecords(reusingRecentCheck: true).map { ($0.id, $0.name.rawValue) }) { first, _ in first }
    }
}
