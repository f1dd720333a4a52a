import Engine
import Foundation
import Model
import Settings
import Storage
import Synchronization
import Testing
import TestSupport

/// The one live-sync service: it learns of changes from the watchers, never from polling, and
/// its own writes never wake it.
@Suite(.timeLimit(.minutes(1))) struct LiveSyncTests {
    /// Counts passes and hands each over to whoever waits for a condition on them.
    final class Passes: Sendable {
        private let state = Mutex<[LiveSync.Pass]>([])
        private let stream: AsyncStream<Void>
        private let continuation: AsyncStream<Void>.Continuation

        init() { (stream, continuation) = AsyncStream.makeStream(of: Void.self) }

        func add(_ pass: LiveSync.Pass) {
            state.withLock { $0.append(pass) }
            continuation.yield()
        }

        var all: [LiveSync.Pass] { state.withLock { $0 } }

        /// Waits (on passes, not on time) until `condition` holds for the passes so far.
        func wait(until condition: ([LiveSync.Pass]) -> Bool) async {
            if condition(all) { return }
            for await _ in stream where condition(all) { return }
        }
    }

    /// A safety net that never fires during a test: only the watchers can start passes.
    static let noRescan = LiveSync.Configuration(rescanInterval: .seconds(3600), autosaveInterval: .seconds(3600), settle: .milliseconds(20))

    /// Starts the service on `library`, counting its passes; returns once its first pass ran.
    static func start(
        _ library: DocumentLibrary, _ configuration: LiveSync.Configuration = noRescan
    ) async -> (live: LiveSync, passes: Passes, running: Task<Void, any Error>) {
        let passes = Passes()
        let live = LiveSync(library: library, configuration: configuration) { pass in
            passes.add(pass)
            return .goOn
        }
        let running = Task { try await live.run() }
        await passes.wait { $0.count == 1 }
        return (live, passes, running)
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func ownWritesNeverStartAPassButAPeersLogDoes(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let b = try harness.device("B", backend: backend)
        let shared = try await a.create(name: try DocumentName("Shared"))
        await b.sync()
        let (live, passes, running) = await Self.start(b)

        // B's own writes: a new document (record, store, info file, log), a save (store files and
        // a log), a rename (record, store folder, log). None of them is a reason for a pass.
        let mine = try await b.create(name: try DocumentName("Mine"))
        try await b.appendText(mine.id, " more")
        try await b.rename(mine.id, to: try DocumentName("Renamed"))
        try await b.appendText(shared.id, " from B")

        // A peer's save is: its log lands in the container and B imports it in a targeted pass.
        let events = await b.events()
        try await a.appendText(shared.id, " from A")
        for await event in events {
            if case .didImport(let id, _, _) = event, id == shared.id { break }
        }
        await passes.wait { $0.contains { $0.report.importedLogs > 0 } }
        live.stop()
        try await running.value
        let all = passes.all
        #expect(all.count == 2, "passes: \(all.map { $0.documents.map { "\($0.count) document(s)" } ?? "full" })")
        #expect(all.last?.documents == [shared.id], "the peer's log asked for a pass on its document only")
        #expect(try await b.detail(shared.id).text.hasSuffix(" from B from A"))
        await a.closeAll()
        await b.closeAll()
    }

    /// Another process of the device creating a document is seen through the device's
    /// `Documents/`: a targeted pass on that document, which publishes nothing twice.
    @Test func anotherProcessesNewDocumentIsATargetedPass() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let b = try harness.device("B", backend: .sqlite)
        let other = try harness.device("B", backend: .sqlite, uuidBase: 0x900000)  // a second process of device B
        await b.sync()
        let (live, passes, running) = await Self.start(b)
        let created = try await other.create(name: try DocumentName("FromOther"))
        await other.closeAll()
        await passes.wait { $0.contains { $0.documents == [created.id] } }
        live.stop()
        try await running.value
        #expect(await b.list().contains { $0.id == created.id && $0.viewable })
        await b.closeAll()
    }

    /// With FastSave off in another process, its saves wait in the outbox; the service ships
    /// them on its autosave tick without a pass over every document.
    @Test func theAutosaveTickShipsAnotherProcessesWaitingSave() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let b = try harness.device("B", backend: .sqlite)
        let other = try harness.device("B", backend: .sqlite, settings: [.fastSave: .bool(false)], uuidBase: 0x900000)
        let a = try harness.device("A", backend: .sqlite)
        let created = try await b.create(name: try DocumentName("Slow"))
        await a.sync()
        let (live, passes, running) = await Self.start(
            b, .init(rescanInterval: .seconds(3600), autosaveInterval: .milliseconds(100), settle: .milliseconds(20)))
        let events = await a.events()
        try await other.appendText(created.id, " saved slowly")
        await other.closeAll()
        // A imports it once B's service shipped it: A's own sync passes until it arrives.
        var arrived = false
        let watcher = Task {
            for await event in events { if case .didImport(let id, _, _) = event, id == created.id { return true } }
            return false
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while !arrived, ContinuousClock.now < deadline {
            await a.sync(documents: [created.id])
            arrived = try await a.detail(created.id).text.hasSuffix(" saved slowly")
            if !arrived { try await Task.sleep(for: .milliseconds(20)) }
        }
        watcher.cancel()
        #expect(arrived, "B's service never shipped the other process's save")
        live.stop()
        try await running.value
        #expect(passes.all.count == 1, "shipping a waiting save is not a sync pass")
        await a.closeAll()
        await b.closeAll()
    }
}
