import Engine
import Foundation
import Model
import Testing
import TestSupport

/// What `list` says of a peer's documents holds: a document it calls downloaded is on this
/// device (it opens with the container gone), a preview says it is not, and a peer's rename
/// shows in the next list (Docs/STATES.md).
@Suite struct ListTruthTests {
    /// A few discovered documents are imported for real by the listing pass.
    @Test func aFewDiscoveredDocumentsAreDownloadedByTheList() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite), b = try harness.device("B", backend: .sqlite)
        let created = try await a.create(name: DocumentName("Notes"))
        try await a.setText(created.id, "hello")
        _ = await b.sync(firstImports: .whenNeeded)
        let row = try #require(await b.list().first)
        #expect(row.viewable && row.downloadPercent == 100 && !row.previewed)
        await b.closeAll()
        // The container goes: what was called downloaded still opens and saves.
        try FileManager.default.moveItem(at: harness.container, to: harness.folder.appending("away"))
        let again = try harness.device("B", backend: .sqlite)
        try await again.appendText(created.id, " offline")
        #expect(try await again.detail(created.id).text == "hello offline")
        await again.closeAll()
        await a.closeAll()
    }

    /// Past the limit the listing pass previews: viewable, not downloaded, and a peer's rename
    /// shows without a sync.
    @Test func manyDiscoveredDocumentsArePreviewedAndSaySo() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A"), b = try harness.device("B")
        var ids: [DocumentID] = []
        for n in 0..<(DocumentLibrary.importsBeforePreviewing + 1) {
            ids.append(try await a.create(name: DocumentName("Doc \(n)")).id)
        }
        _ = await b.sync(firstImports: .whenNeeded)
        let rows = await b.list()
        #expect(rows.count == ids.count)
        #expect(rows.allSatisfy { $0.previewed && $0.downloadPercent == 0 && $0.viewable }, "\(rows.prefix(2))")
        let first = try #require(ids.first)
        try await a.rename(first, to: DocumentName("Renamed"))
        harness.clock.advance(5)
        _ = await b.sync(firstImports: .whenNeeded)
        #expect(await b.list().contains { $0.id == first && $0.name == "Renamed" })
        // Opening one downloads it.
        _ = try await b.detail(first)
        #expect(await b.list().contains { $0.id == first && $0.downloadPercent == 100 && !$0.previewed })
        await b.closeAll()
        await a.closeAll()
    }
}
