#if canImport(Glibc)
import Glibc
#endif
import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import Testing
import TestSupport

@Suite struct LifecycleTests {
    static let backends = EngineHarness.Backend.allCases

    @Test(arguments: backends)
    func createdDocumentFollowsTheSeed(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let first = try await a.create()
        let second = try await a.create()
        #expect(first.name == "TestDoc1")
        #expect(second.name == "TestDoc2")
        #expect(first.origin == .created)
        #expect(first.location == .cloud)
        #expect(first.viewable)
        let detail = try await a.detail(first.id)
        #expect(detail.text == "A (\(DeviceIdentity.systemModel))")
        #expect(detail.graph.objects(of: Entity.modelVersion).count == 1)
        #expect(detail.graph.objects(of: Entity.textEntry).count == 1)
        // On disk the UUID precedes the name.
        let store = harness.root("A").appendingPathComponent("Documents/\(first.id)/TestDoc1")
        #expect(FileManager.default.fileExists(atPath: store.path))
    }

    @Test(arguments: backends)
    func createdOnAIsDiscoveredThenViewableOnBAndEditsTravelBack(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let b = try harness.device("B", backend: backend == .sqlite ? .json : backend)
        let created = try await a.create()
        let events = await b.events()
        let report = await b.sync()
        #expect(report.discovered == ["TestDoc1"])
        var sawAdded = false, sawViewable = false
        for await event in events {
            if case .documentAdded(let summary) = event {
                sawAdded = true
                #expect(summary.origin == .discovered)
            }
            if case .becameViewable(let id) = event, id == created.id { sawViewable = true; break }
        }
        #expect(sawAdded && sawViewable)
        let onB = try #require(await b.list().first)
        #expect(onB.viewable && onB.downloadPercent == 100 && onB.origin == .discovered)
        try await b.appendText(created.id, " START")
        await a.sync()
        #expect(try await a.detail(created.id).text.hasSuffix(" START"))
    }

    @Test func aPassReportsItsProgressDocumentByDocument() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .json)
        for _ in 0..<3 { _ = try await a.create() }
        let b = try harness.device("B", backend: .json)
        let seen = LockedBox<[SyncProgress]>([])
        let report = await b.sync(progress: { progress in seen.mutate { $0.append(progress) } })
        #expect(seen.value.map(\.done) == [1, 2, 3])
        #expect(seen.value.allSatisfy { $0.total == 3 })
        #expect(seen.value.last?.importedLogs == report.importedLogs && report.importedLogs == 3)
    }

    @Test func handlerOpensOnceForManyConcurrentCallers() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite)
        let created = try await a.create()
        await a.closeAll()
        let before = await a.storeOpenCount()
        let texts = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 {
                group.addTask { try await a.withDocument(created.id) { try $0.read().graph.textEntry?.text ?? "" } }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(texts.count == 50)
        #expect(Set(texts).count == 1)
        #expect(await a.storeOpenCount() - before == 1)
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func handlerCreatesAMissingDocumentOnceForManyConcurrentCallers(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let id = DocumentID(UUID(uuidString: "0D0C0000-0000-4000-8000-000000000001") ?? UUID())
        let texts = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<40 {
                group.addTask { try await a.withDocument(id) { try $0.read().graph.textEntry?.text ?? "" } }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(texts.count == 40)
        #expect(Set(texts) == ["A (\(a.identity.model))"])
        let rows = await a.list()
        #expect(rows.map(\.id) == [id])
        #expect(rows.first?.name == "TestDoc1")
    }

    /// Two libraries on one root are two processes of one device (the CLI and the daemon, say):
    /// appends that race must all land, none overwriting another.
    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func racingAppendsFromTwoProcessesAllLand(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let first = try harness.device("A", backend: backend)
        let created = try await first.create()
        let second = try harness.device("A", backend: backend)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (label, library) in [("x", first), ("y", second)] {
                group.addTask {
                    for index in 0..<15 { try await library.appendText(created.id, " <\(label)\(index)>") }
                }
            }
            try await group.waitForAll()
        }
        let text = try await first.detail(created.id).text
        for label in ["x", "y"] {
            for index in 0..<15 { #expect(text.components(separatedBy: "<\(label)\(index)>").count == 2, "<\(label)\(index)> in \(text)") }
        }
    }

    /// The seed's notifications: objects did change and did save on the writer; on the peer,
    /// the document is added (discovered), imported with the inserted and then the updated
    /// object IDs and the writer's name, becomes viewable, and is removed when deleted.
    @Test(.timeLimit(.minutes(1)), arguments: [EngineHarness.Backend.sqlite, .json])
    func notificationsSayWhatChangedAndWhereFrom(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let b = try harness.device("B", backend: backend)
        var onA = await a.events().makeAsyncIterator()
        var onB = await b.events().makeAsyncIterator()
        let created = try await a.create()
        let entry = try #require(try await a.detail(created.id).graph.textEntry?.id)
        await b.sync()
        try await a.appendText(created.id, " more")
        await b.sync()
        try await a.delete(created.id)
        await b.sync()

        var seenA: [LibraryEvent] = []
        while let event = await onA.next() {
            seenA.append(event)
            if case .documentRemoved(created.id, _) = event { break }
        }
        #expect(seenA.contains { if case .documentAdded(let row) = $0 { row.id == created.id && row.origin == .created } else { false } })
        #expect(seenA.contains(.objectsDidChange(created.id, ChangeSummary(updated: [entry]))))
        #expect(seenA.contains(.didSave(created.id, ChangeSummary(updated: [entry]))))

        var seenB: [LibraryEvent] = []
        while let event = await onB.next() {
            seenB.append(event)
            if case .documentRemoved(created.id, _) = event { break }
        }
        #expect(seenB.contains { if case .documentAdded(let row) = $0 { row.id == created.id && row.origin == .discovered } else { false } })
        #expect(seenB.contains { if case .didImport(created.id, let summary, let from) = $0 { summary.inserted.contains(entry) && from == ["A"] } else { false } })
        #expect(seenB.contains(.didImport(created.id, ChangeSummary(updated: [entry]), from: ["A"])))
        #expect(seenB.contains(.becameViewable(created.id)))
    }

    /// One document is never listed twice under two spellings of its path (seed: NSURL+NPAssisting).
    @Test func aRootReachedThroughALinkIsTheSameRoot() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .json)
        let created = try await a.create()
        let link = harness.folder.appending("link-to-A")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: harness.root("A"))
        let setup = try DeviceSetup(rootPath: link.path + "/./", containerPath: harness.container.path, flags: [.deviceName: .text("A")], environment: [:], createRoot: false)
        #expect(setup.root.url.path == harness.root("A").resolvingSymlinksInPath().path)
        var logger = Logger(label: "test")
        logger.logLevel = .critical
        let again = setup.makeLibrary(stores: StoreProvider.standard(), logger: logger)
        #expect(await again.list().map(\.id) == [created.id])
    }

    @Test func copyContainerOnSegueWithoutAContainerStillOpensTheDetail() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .json, settings: [.copyContainerOnSegue: .bool(true)], noContainer: true)
        let created = try await a.create()
        let detail = try await a.detail(created.id, segue: true)
        #expect(detail.text == "A (\(a.identity.model))")
        #expect(detail.containerCopyProblem?.contains("no container") == true)
    }

    @Test func namesAndPrefixesResolveAndAmbiguityIsRefused() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A")
        let b = try harness.device("B")
        let name = try DocumentName("Untitled")
        let one = try await a.create(name: name)
        let two = try await b.create(name: name)
        await a.sync()
        await b.sync()
        #expect(await a.list().count == 2)
        #expect(await b.list().count == 2)
        await #expect(throws: EngineError.self) { try await a.resolve("Untitled") }
        do {
            _ = try await a.resolve("Untitled")
        } catch {
            #expect(error.description.contains(String(one.id.description.prefix(8))))
            #expect(error.description.contains(String(two.id.description.prefix(8))))
        }
        #expect(try await a.resolve(one.id.description).id == one.id)
        #expect(try await a.resolve(String(two.id.description.prefix(12))).id == two.id)
        await #expect(throws: EngineError.unknownDocument("nope")) { try await a.resolve("nope") }
    }

    @Test(arguments: backends)
    func deletedWhileThePeerIsOffStaysDeleted(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let created = try await a.create()
        do {
            let b = try harness.device("B", backend: backend)
            await b.sync()
            #expect(await b.list().count == 1)
            await b.closeAll()
        }
        try await a.delete(created.id)
        #expect(await a.list().isEmpty)
        // B runs again: the document is gone, and stays gone after more passes.
        let b = try harness.device("B", backend: backend)
        let report = await b.sync()
        #expect(report.removed == ["TestDoc1"])
        await b.sync()
        #expect(await b.list().isEmpty)
        await a.sync()
        #expect(await a.list().isEmpty)
    }

    /// A log missing while a later one of its device is there is a stall once the later one has
    /// been in this replica for a minute (by the time it arrived, not the writer's file time);
    /// the same gap is the same problem on every pass.
    @Test func aLogMissingForAMinuteIsReportedAsAStall() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A")
        let b = try harness.device("B")
        let created = try await a.create(name: try DocumentName("Gappy"))
        for index in 1...3 { try await a.appendText(created.id, " \(index)") }
        let logs = try #require(FileManager.default.enumerator(atPath: harness.container.path)?.allObjects as? [String])
            .filter { $0.hasSuffix(".log") }.sorted()
        try FileManager.default.removeItem(atPath: harness.container.path + "/" + logs[1])
        let early = await b.sync()
        #expect(!early.problems.contains { if case .stalled = $0 { true } else { false } }, "\(early.problems)")
        // The harness's clock starts in 2023: bring it to two minutes after the files arrived.
        harness.clock.advance(Date().timeIntervalSince(harness.clock.now()) + 120)
        let late = await b.sync()
        let stalls = late.problems.filter { if case .stalled = $0 { true } else { false } }
        #expect(stalls.count == 1, "\(late.problems)")
        #expect(stalls.first?.description.contains("waits for log 2 of device") == true, "\(stalls)")
        #expect(stalls.first?.description.contains("container repair") == true)
        #expect((await b.sync()).problems.filter { if case .stalled = $0 { true } else { false } } == stalls)
    }

    /// A deleted document stays in the trash for 30 days, restorable as a new document; after
    /// that it is gone (the next deletion clears what expired).
    @Test func theTrashKeepsADeletedDocumentThirtyDays() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite)
        let kept = try await a.create(name: try DocumentName("Kept"))
        try await a.setText(kept.id, "still here")
        let expiring = try await a.create(name: try DocumentName("Expiring"))
        try await a.delete(expiring.id)
        harness.clock.advance(Double(DocumentLibrary.trashDays) * 86_400 + 60)
        try await a.delete(kept.id)
        #expect(await a.trash().map(\.name) == ["Kept"])
        let restored = try await a.restore("Kept")
        #expect(restored.id != kept.id)
        #expect(try await a.detail(restored.id).text == "still here")
        #expect(await a.trash().isEmpty)
    }

    @Test func renameTravelsToPeers() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A")
        let b = try harness.device("B")
        let created = try await a.create()
        await b.sync()
        try await a.rename(created.id, to: try DocumentName("Groceries"))
        await b.sync()
        #expect(await b.list().map(\.name) == ["Groceries"])
        // The store stays in its folder (a rename never moves it) and still opens under the new name.
        #expect(FileManager.default.fileExists(atPath: harness.root("B").appendingPathComponent("Documents/\(created.id)/\(created.name)").path))
        #expect(try await b.detail(created.id).summary.name == "Groceries")
    }

    @Test func convertKeepsEverything() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite)
        let created = try await a.create()
        try await a.setText(created.id, "héllo 日本 🎉")
        try await a.convert(created.id, to: .json)
        let row = try #require(await a.list().first)
        #expect(row.store == .json)
        #expect(try await a.detail(created.id).text == "héllo 日本 🎉")
        try await a.appendText(created.id, "!")
        let b = try harness.device("B", backend: .sqlite)
        await b.sync()
        #expect(try await b.detail(created.id).text == "héllo 日本 🎉!")
    }
}
