import Engine
import Foundation
import Model
import Sync
import Testing
import TestSupport

/// The short way of an edit from a peer: logs the watcher saw arrive are imported without
/// listing the document's folders when they continue what the device applied, and the whole
/// targeted pass runs whenever that is not the whole story.
@Suite struct ArrivedLogTests {
    /// A and B share a document; A saved `saves` more appends after B last synced. Returns the
    /// document and the sequences of A's new logs.
    static func shared(
        _ harness: EngineHarness, backend: EngineHarness.Backend, saves: Int
    ) async throws -> (a: DocumentLibrary, b: DocumentLibrary, id: DocumentID, new: [UInt64]) {
        let a = try harness.device("A", backend: backend)
        let b = try harness.device("B", backend: backend)
        let created = try await a.create(name: try DocumentName("Shared"))
        await b.sync()
        let container = Container(root: harness.container)
        let before = Set(container.logSequences(created.id, device: a.identity.id))
        for index in 0..<saves { try await a.appendText(created.id, " a\(index)") }
        let new = container.logSequences(created.id, device: a.identity.id).filter { !before.contains($0) }.sorted()
        #expect(new.count == saves)
        return (a, b, created.id, new)
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .json, .memory])
    func arrivedLogsThatContinueTheSequenceAreImportedOnArrival(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let (a, b, id, new) = try await Self.shared(harness, backend: backend, saves: 2)
        let report = await b.sync(documents: [id], arrivals: [id: [a.identity.id: Set(new)]])
        #expect(report.importedLogs == 2)
        #expect(report.importedOnArrival == 2)
        #expect(try await b.detail(id).text == (try await a.detail(id).text))
        // Told again (the event came twice): nothing left to do, nothing imported twice.
        let again = await b.sync(documents: [id], arrivals: [id: [a.identity.id: Set(new)]])
        #expect(again.importedLogs == 0)
        #expect(try await b.detail(id).text == (try await a.detail(id).text))
        await a.closeAll()
        await b.closeAll()
    }

    /// The watcher's event for the first of two logs was lost: the second does not continue
    /// what B applied, so the pass lists the folder and imports both.
    @Test func anArrivalPastAMissedLogRunsTheWholePass() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let (a, b, id, new) = try await Self.shared(harness, backend: .sqlite, saves: 2)
        let report = await b.sync(documents: [id], arrivals: [id: [a.identity.id: [new[1]]]])
        #expect(report.importedOnArrival == 0)
        #expect(report.importedLogs == 2)
        #expect(try await b.detail(id).text.hasSuffix(" a0 a1"))
        await a.closeAll()
        await b.closeAll()
    }

    /// Told of the first of two new logs only (the second's event not handled yet): the second
    /// is there, so the whole pass takes both rather than leaving it for the next event.
    @Test func aLaterLogAlreadyThereIsTakenByTheWholePass() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let (a, b, id, new) = try await Self.shared(harness, backend: .sqlite, saves: 2)
        let report = await b.sync(documents: [id], arrivals: [id: [a.identity.id: [new[0]]]])
        #expect(report.importedOnArrival == 0)
        #expect(report.importedLogs == 2)
        #expect(try await b.detail(id).text.hasSuffix(" a0 a1"))
        await a.closeAll()
        await b.closeAll()
    }

    /// Logs delivered out of order: the later ones wait behind a gap; the missing one's arrival
    /// then brings them all in, though their own events came and went.
    @Test func aLogThatFillsAGapBringsInTheLogsWaitingBehindIt() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let (a, b, id, new) = try await Self.shared(harness, backend: .sqlite, saves: 3)
        let container = Container(root: harness.container)
        let first = container.logURL(id, device: a.identity.id, sequence: new[0])
        let aside = harness.folder.appending("in-transit.log")
        try FileManager.default.moveItem(at: first, to: aside)
        let waiting = await b.sync(documents: [id], arrivals: [id: [a.identity.id: [new[1], new[2]]]])
        #expect(waiting.importedLogs == 0, "the later logs wait behind the gap")
        try FileManager.default.moveItem(at: aside, to: first)
        let filled = await b.sync(documents: [id], arrivals: [id: [a.identity.id: [new[0]]]])
        #expect(filled.importedOnArrival == 0)
        #expect(filled.importedLogs == 3)
        #expect(try await b.detail(id).text.hasSuffix(" a0 a1 a2"))
        // Nothing waits any more: the next edit is imported as it arrives again.
        try await a.appendText(id, " a3")
        let next = try #require(container.logSequences(id, device: a.identity.id).max())
        #expect(await b.sync(documents: [id], arrivals: [id: [a.identity.id: [next]]]).importedOnArrival == 1)
        await a.closeAll()
        await b.closeAll()
    }

    /// A process that has not run a full pass yet does not know which documents have logs
    /// waiting: it imports nothing on arrival alone.
    @Test func noArrivalIsImportedAloneBeforeTheFirstFullPass() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let (a, b, id, new) = try await Self.shared(harness, backend: .sqlite, saves: 1)
        await b.closeAll()
        let restarted = try harness.device("B", backend: .sqlite)
        let report = await restarted.sync(documents: [id], arrivals: [id: [a.identity.id: Set(new)]])
        #expect(report.importedOnArrival == 0)
        #expect(report.importedLogs == 1)
        await a.closeAll()
        await restarted.closeAll()
    }

    /// An arrived log that cannot be read is not skipped or trusted: the pass imports what
    /// comes before it and quarantines it, as a listing import does.
    @Test func aDamagedArrivedLogIsQuarantinedByTheWholePass() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let (a, b, id, new) = try await Self.shared(harness, backend: .sqlite, saves: 2)
        let damaged = Container(root: harness.container).logURL(id, device: a.identity.id, sequence: new[1])
        try Data("not a log".utf8).write(to: damaged)
        let report = await b.sync(documents: [id], arrivals: [id: [a.identity.id: Set(new)]])
        #expect(report.importedOnArrival == 0)
        #expect(report.importedLogs == 1)
        #expect(report.quarantined.contains { $0.url.lastPathComponent == damaged.lastPathComponent })
        #expect(try await b.detail(id).text.hasSuffix(" a0"))
        await a.closeAll()
        await b.closeAll()
    }

    /// A document this device has not imported yet is built by the pass (from baselines and
    /// every log), never from the arrived log alone.
    @Test func aDocumentNotImportedYetGetsTheWholePass() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite)
        let b = try harness.device("B", backend: .sqlite)
        await b.sync()
        let created = try await a.create(name: try DocumentName("Fresh"))
        try await a.appendText(created.id, " more")
        let last = Container(root: harness.container).logSequences(created.id, device: a.identity.id).max() ?? 0
        let report = await b.sync(documents: [created.id], arrivals: [created.id: [a.identity.id: [last]]])
        #expect(report.importedOnArrival == 0)
        #expect(try await b.detail(created.id).text == (try await a.detail(created.id).text))
        await a.closeAll()
        await b.closeAll()
    }
}
