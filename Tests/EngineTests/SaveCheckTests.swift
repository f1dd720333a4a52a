@testable import Engine
import Foundation
import Model
import Sync
import Testing
import TestSupport

/// The check before a save (is anything of a peer waiting?) costs a few `stat` calls when
/// nothing arrived: the stamps it trusted still match the container's, so it imports nothing
/// and lists no folder. A device's own saves, and logs imported as they arrived, keep them
/// matching.
@Suite struct SaveCheckTests {
    /// Whether the next save of `id` on `library` would import (and so list the document's
    /// folders) before saving: the stamps it trusts differ from the container's.
    static func wouldImportBeforeSave(_ library: DocumentLibrary, _ id: DocumentID, container: Container) async -> Bool {
        await library.importedBeforeSave[id] != library.stampsBeforeSave(id, in: container)
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .memory])
    func aSaveAfterManyOwnSavesDoesNotImport(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let container = Container(root: harness.container)
        let id = try await a.create(name: try DocumentName("Mine")).id
        // The first saves make this device's log folder (a new folder under `logs/`).
        try await a.appendText(id, "one")
        try await a.appendText(id, " two")
        let before = try await a.detail(id).text
        let trusted = await a.importedBeforeSave[id]
        for index in 0..<20 {
            #expect(await !Self.wouldImportBeforeSave(a, id, container: container), "before own save \(index)")
            try await a.insertText(id, "x", at: 0)
            // The save imported nothing first: the stamps it trusts are those of before.
            #expect(await a.importedBeforeSave[id] == trusted, "own save \(index)")
        }
        #expect(try await a.detail(id).text == String(repeating: "x", count: 20) + before)
        await a.closeAll()
    }

    /// The log's file is made as a save begins, before the save knows whether it writes a log:
    /// a save refused (an edit past the end of the text) leaves no file of it in the container.
    @Test func aRefusedSaveLeavesNoFileMadeForItsLog() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite)
        let container = Container(root: harness.container)
        let id = try await a.create(name: try DocumentName("Refused")).id
        try await a.appendText(id, " one")
        let folder = container.logsDirectory(id, device: a.identity.id).path
        let before = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        for _ in 0..<3 {
            await #expect(throws: EngineError.self) { try await a.insertText(id, "x", at: 1_000_000) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == before)
        #expect(!before.contains { $0.hasPrefix(".") }, "\(before)")
        await a.closeAll()
    }

    /// B imports A's logs as they arrive: the next save of B does not list the folders again.
    @Test func logsImportedOnArrivalNeedNoImportBeforeTheNextSave() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite)
        let b = try harness.device("B", backend: .sqlite)
        let container = Container(root: harness.container)
        let id = try await a.create(name: try DocumentName("Shared")).id
        await b.sync()
        try await b.appendText(id, " b0")
        try await b.appendText(id, " b1")
        for round in 0..<3 {
            let before = Set(container.logSequences(id, device: a.identity.id))
            try await a.appendText(id, " a\(round)")
            let new = Set(container.logSequences(id, device: a.identity.id)).subtracting(before)
            let report = await b.sync(documents: [id], arrivals: [id: [a.identity.id: new]])
            #expect(report.importedOnArrival == 1)
            #expect(await !Self.wouldImportBeforeSave(b, id, container: container), "round \(round)")
            try await b.appendText(id, " b\(round + 2)")
        }
        #expect(try await b.detail(id).text.hasSuffix(" a2 b4"))
        // A log that arrived unannounced is still seen before the save.
        try await a.appendText(id, " late")
        #expect(await Self.wouldImportBeforeSave(b, id, container: container))
        try await b.appendText(id, " b5")
        #expect(try await b.detail(id).text.hasSuffix(" late b5"))
        await a.closeAll()
        await b.closeAll()
    }
}
