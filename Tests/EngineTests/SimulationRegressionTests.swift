import Engine
import Foundation
import Model
import Settings
import Storage
import Sync
import Testing
import TestSupport

/// Bugs the reliability simulation (Tests/ReliabilityTests) found, pinned down one by one.
@Suite struct SimulationRegressionTests {
    /// With FastSave off a new document's first log waits in the outbox. Keeping a local copy
    /// (keep-cloud) used to drop the cloud copy's store with that log in it: peers listed the
    /// document forever without being able to open it.
    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func keepingALocalCopyShipsTheCloudCopysWaitingSaves(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend, settings: [.fastSave: .bool(false)])
        let b = try harness.device("B", backend: backend)
        let created = try await a.create()
        try await a.appendText(created.id, " saved before the move")
        let local = try await a.moveToLocal(created.id, choice: .keepCloud)
        #expect(local != created.id)
        await b.sync()
        let row = try #require(await b.list().first { $0.id == created.id })
        #expect(row.viewable)
        #expect(try await b.detail(created.id).text.hasSuffix(" saved before the move"))
        #expect(try await a.detail(local).text.hasSuffix(" saved before the move"))
    }

    /// A `modified` date with more than millisecond precision came back from a log one rounding
    /// step off, so the writer and its peers held different graphs for the same save.
    @Test(arguments: [EngineHarness.Backend.sqlite, .json, .memory])
    func theWriterAndItsPeersHoldTheSameModifiedDate(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let b = try harness.device("B", backend: backend)
        harness.clock.advance(36.130_123_4)
        let created = try await a.create()
        harness.clock.advance(1.234_567_8)
        try await a.setText(created.id, "edited")
        await b.sync()
        let onA = try await a.detail(created.id)
        let onB = try await b.detail(created.id)
        #expect(onA.modified == onB.modified)
        #expect(onA.graph == onB.graph)
    }
}
