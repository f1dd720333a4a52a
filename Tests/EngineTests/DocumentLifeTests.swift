import Engine
import Foundation
import Model
import Storage
import Testing
import TestSupport

/// A document's life (Docs/STATES.md): every move the enum allows and refuses, and what the
/// listing says of documents in each state a user meets.
@Suite struct DocumentLifeTests {
    typealias Life = DocumentLife

    /// Every legal move, and only these: anything missing here must throw.
    static let legal: [Life: [Life.Event: Life]] = [
        .listed: [.previewRead: .previewed, .partlyApplied: .downloading, .fullyApplied: .downloaded,
                  .storeUnreadable: .unreadable, .tombstoned: .deleted],
        .previewed: [.previewRead: .previewed, .partlyApplied: .downloading, .fullyApplied: .downloaded,
                     .storeUnreadable: .unreadable, .tombstoned: .deleted],
        .downloading: [.partlyApplied: .downloading, .fullyApplied: .downloaded, .storeDamaged: .damaged,
                       .storeUnreadable: .unreadable, .tombstoned: .trashed],
        .downloaded: [.partlyApplied: .downloading, .fullyApplied: .downloaded, .storeDamaged: .damaged,
                      .storeUnreadable: .unreadable, .tombstoned: .trashed],
        .damaged: [.partlyApplied: .downloading, .fullyApplied: .downloaded, .storeDamaged: .damaged,
                   .storeUnreadable: .unreadable, .tombstoned: .trashed],
        .unreadable: [.partlyApplied: .downloading, .fullyApplied: .downloaded, .storeDamaged: .damaged,
                      .storeUnreadable: .unreadable, .tombstoned: .trashed],
        .trashed: [.leftTrash: .deleted],
        .deleted: [:],
    ]

    @Test(arguments: Life.allCases)
    func everyMoveIsLegalOrRefusedWithItsStateAndEvent(life: Life) throws {
        let moves = try #require(Self.legal[life])
        for event in Life.Event.allCases {
            if let expected = moves[event] {
                #expect(try life.after(event) == expected, "\(life) after \(event)")
            } else {
                #expect(throws: Life.IllegalMove(life: life, event: event), "\(life) after \(event)") { try life.after(event) }
            }
        }
    }

    @Test func aPreviewNeverStandsForADownload() throws {
        for life in Life.allCases where life.holdsStore {
            #expect(throws: Life.IllegalMove.self) { try life.after(.previewRead) }
        }
        #expect(!Life.previewed.isDownloaded && !Life.previewed.holdsStore)
        #expect(try Life.start(.discovered).after(.previewRead) == .previewed)
        #expect(Life.start(.created) == .downloaded)
        let refused = Life.IllegalMove(life: .downloaded, event: .previewRead)
        #expect(refused.description.contains("downloaded") && refused.description.contains("previewRead"))
    }

    /// What the listing says: downloaded for a few discovered documents (the listing pass
    /// imports them), previewed (never downloaded) past the limit, damaged for a broken store,
    /// trashed and deleted once deleted.
    @Test func theListingSaysEachDocumentsLife() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A"), b = try harness.device("B")
        var ids: [DocumentID] = []
        for n in 0..<(DocumentLibrary.importsBeforePreviewing + 1) {
            ids.append(try await a.create(name: DocumentName("Doc \(n)")).id)
        }
        // Files older than a quiet mark's two seconds (backdated, not waited for): the previews
        // leave marks, which the list right after trusts without a look.
        try Self.backdate(harness.container, by: 3)
        _ = await b.sync(firstImports: .whenNeeded)
        let rows = await b.list()
        #expect(rows.allSatisfy { $0.life == .previewed && $0.previewed && $0.downloadPercent == 0 })
        #expect(rows.allSatisfy { $0.life != .downloaded })
        let first = try #require(ids.first), last = try #require(ids.last)
        _ = try await b.detail(first)
        #expect(await b.list().first { $0.id == first }?.life == .downloaded)
        #expect(await b.life(of: first) == .downloaded)
        // A previewed document deleted by a peer leaves nothing here: deleted, not trashed.
        try await a.delete(last)
        harness.clock.advance(5)
        _ = await b.sync(firstImports: .whenNeeded)
        #expect(await b.life(of: last) == .deleted)
        // A downloaded one goes to the trash.
        try await a.delete(first)
        harness.clock.advance(5)
        _ = await b.sync(firstImports: .whenNeeded)
        #expect(await b.life(of: first) == .trashed)
        await b.closeAll()
        await a.closeAll()
    }

    @Test func aDamagedStoreIsListedDamagedAndAFewDiscoveredOnesDownloaded() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .json), b = try harness.device("B", backend: .json)
        let broken = try await a.create(name: DocumentName("Broken"))
        try await a.setText(broken.id, "hello")
        _ = await b.sync(firstImports: .whenNeeded)
        #expect(await b.list().first { $0.id == broken.id }?.life == .downloaded)
        await a.closeAll()
        let store = harness.root("A").appendingPathComponent("Documents/\(broken.id)/\(broken.name)/\(broken.store.fileName)")
        try Data("{ this is not json".utf8).write(to: store)
        await #expect(throws: EngineError.self) { try await a.detail(broken.id) }
        let row = try #require(await a.list().first { $0.id == broken.id })
        #expect(row.life == .damaged && row.problem != nil)
        await b.closeAll()
        await a.closeAll()
    }

    /// Sets the modification time of everything under `folder` (and itself) `seconds` back.
    static func backdate(_ folder: URL, by seconds: TimeInterval) throws {
        let past = Date(timeIntervalSinceNow: -seconds)
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        for case let url as URL in walker?.allObjects ?? [] {
            try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: url.path)
        }
        try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: folder.path)
    }
}
