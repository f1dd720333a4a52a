import Engine
import Foundation
import Model
import Settings
import Storage
@testable import Sync
import Testing
import TestSupport

@Suite struct MovesTests {
    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func moveToCloudLetsAFreshPeerBuildTheWholeDocument(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend, settings: [.useCloud: .bool(false)])
        let created = try await a.create()
        #expect(created.location == .local)
        for index in 0..<5 { try await a.appendText(created.id, " \(index)") }
        #expect(Container(root: harness.container).documentIDs().isEmpty)
        try await a.moveToCloud(created.id)
        let b = try harness.device("B", backend: backend)
        await b.sync()
        #expect(try await b.detail(created.id).text.hasSuffix(" 0 1 2 3 4"))
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func moveToLocalRemovingTheCloudCopyMakesPeersDropIt(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let b = try harness.device("B", backend: backend)
        let created = try await a.create()
        await b.sync()
        try await a.appendText(created.id, " kept")
        let local = try await a.moveToLocal(created.id, choice: .removeCloud)
        await b.sync()
        #expect(await b.list().isEmpty)
        let row = try #require(await a.list().first)
        #expect(row.location == .local && row.id == local)
        try await a.appendText(local, " still here")
        #expect(try await a.detail(local).text.hasSuffix(" kept still here"))
    }

    /// The cloud copy's UUID is tombstoned for good; moving the local copy back to the cloud must
    /// not hand that UUID out again, or the next pass would delete the document everywhere.
    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func aDocumentRemovedFromTheCloudCanGoBackWithoutBeingDeleted(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let b = try harness.device("B", backend: backend)
        let created = try await a.create()
        await b.sync()
        try await b.appendText(created.id, " from B")
        await a.sync()
        let local = try await a.moveToLocal(created.id, choice: .removeCloud)
        await b.sync()
        #expect(await b.list().isEmpty)
        let back = try await a.moveToCloud(local)
        await a.sync()
        await b.sync()
        await a.sync()
        let rowsA = await a.list()
        #expect(rowsA.map(\.id) == [back] && rowsA.first?.location == .cloud)
        #expect(await b.list().map(\.id) == [back])
        #expect(try await b.detail(back).text.hasSuffix(" from B"))
        // And it syncs both ways under its new UUID.
        try await b.appendText(back, " again")
        await a.sync()
        #expect(try await a.detail(back).text.hasSuffix(" from B again"))
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func moveToLocalKeepingTheCloudCopyMakesASeparateDocument(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let b = try harness.device("B", backend: backend)
        let created = try await a.create()
        await b.sync()
        try await a.moveToLocal(created.id, choice: .keepCloud)
        let rows = await a.list()
        #expect(rows.count == 1)
        let local = try #require(rows.first)
        #expect(local.id != created.id && local.location == .local)
        // The cloud document lives on for B, and edits there do not reach A's local copy.
        try await b.appendText(created.id, " from B")
        await a.sync()
        #expect(try await a.detail(local.id).text.hasSuffix(" from B") == false)
        #expect(await b.list().count == 1)
    }

    @Test func savesWhileTheContainerIsGoneShipWhenItReturns() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite)
        let b = try harness.device("B", backend: .sqlite)
        let created = try await a.create()
        await b.sync()
        let aside = harness.folder.appending("container-unmounted")
        try FileManager.default.moveItem(at: harness.container, to: aside)
        let report = await a.sync()
        #expect(report.cloudAvailable == false)
        try await a.appendText(created.id, " offline edit")
        #expect(try await a.detail(created.id).text.hasSuffix(" offline edit"))
        try FileManager.default.moveItem(at: aside, to: harness.container)
        let back = await a.sync()
        #expect(back.cloudAvailable)
        #expect(back.exportedLogs == 1)
        await b.sync()
        #expect(try await b.detail(created.id).text.hasSuffix(" offline edit"))
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func aReplacedIdentityAsksThePolicy(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let asked = LockedBox<[String]>([])
        let a = try harness.device("A", backend: backend, onContainerChange: { message in asked.mutate { $0.append(message) }; return .stayLocal })
        let created = try await a.create()
        await a.sync()
        // Another account's container is mounted in its place.
        try FileManager.default.removeItem(at: harness.container)
        try FileManager.default.createDirectory(at: harness.container, withIntermediateDirectories: true)
        _ = try Container(root: harness.container).seedIdentity(device: Fixed.device(9), now: Date(), newID: Fixed.uuid(0xBEEF))
        let report = await a.sync()
        #expect(asked.value.count == 1)
        #expect(asked.value.first?.contains("identity changed") == true)
        #expect(report.problems.contains { if case .containerChanged = $0 { true } else { false } })
        #expect(report.problems.contains { $0.summary.hasSuffix("staying local") })
        #expect(report.containerError != nil)
        // Staying local detaches nothing: the document is still a cloud document, and what is
        // saved meanwhile waits here instead of going into the container it refused.
        let row = try #require(await a.list().first)
        #expect(row.id == created.id && row.location == .cloud)
        try await a.appendText(created.id, " while refused")
        _ = await a.sync()
        #expect(asked.value.count == 1, "asked once per process, not on every pass")
        #expect(Container(root: harness.container).documentIDs().isEmpty)
        await #expect(throws: EngineError.self) { try await a.delete(created.id) }
        await #expect(throws: EngineError.self) { _ = try await a.moveToLocal(created.id, choice: .removeCloud) }
        #expect(Container(root: harness.container).documentIDs().isEmpty)
        #expect(await a.list().count == 1)
    }

    /// A mistyped --container (any other folder) once turned every cloud document local for
    /// good; now the device just waits for the container it knows, and catches up when it is back.
    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func theRightContainerBackAfterAWrongOneLosesNothing(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let b = try harness.device("B", backend: backend)
        let created = try await a.create()
        await b.sync()
        let wrong = harness.folder.appending("wrong")
        try FileManager.default.createDirectory(at: wrong, withIntermediateDirectories: true)
        let bWrong = try harness.device("B", backend: backend, container: wrong)
        let report = await bWrong.sync()
        #expect(report.containerError != nil)
        try await bWrong.appendText(created.id, " saved while pointed elsewhere")
        #expect(Container(root: wrong).documentIDs().isEmpty, "nothing is written into the refused folder")
        let bRight = try harness.device("B", backend: backend)
        #expect(await bRight.sync().containerError == nil)
        await a.sync()
        #expect(try await a.detail(created.id).text.hasSuffix(" saved while pointed elsewhere"))
        try await a.appendText(created.id, " and back")
        await bRight.sync()
        #expect(try await bRight.detail(created.id).text.hasSuffix(" and back"))
        #expect(try #require(await bRight.list().first).location == .cloud)
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func removingTheCloudCopyWhileTheContainerIsAwayFailsAndKeepsIt(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let created = try await a.create()
        let aside = harness.folder.appending("aside")
        try FileManager.default.moveItem(at: harness.container, to: aside)
        await a.sync()
        await #expect(throws: EngineError.self) { _ = try await a.moveToLocal(created.id, choice: .removeCloud) }
        #expect(try #require(await a.list().first).location == .cloud)
        try FileManager.default.moveItem(at: aside, to: harness.container)
        await a.sync()
        let local = try await a.moveToLocal(created.id, choice: .removeCloud)
        #expect(!Container(root: harness.container).tombstones(of: created.id).isEmpty)
        #expect(local != created.id)
    }

    /// In a replicated folder a reset's new identity can arrive before the old identity file's
    /// deletion. The new one says what it replaces, so the device asks instead of taking the
    /// pair for a seeding race, even when the new UUID sorts first.
    @Test func aResetIsNoticedWhileTheOldIdentityFileIsStillThere() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let asked = LockedBox<[String]>([])
        let a = try harness.device("A", backend: .json, onContainerChange: { message in asked.mutate { $0.append(message) }; return .stayLocal })
        _ = try await a.create()
        await a.sync()
        let container = Container(root: harness.container)
        let old = try #require(try container.identity())
        let reset = ContainerIdentity(containerID: Fixed.uuid(0x1), seededBy: Fixed.device(9), seededAt: Date(), replaces: [old.containerID])
        #expect(reset.containerID.uuidString < old.containerID.uuidString, "the new identity sorts first, as in the failing case")
        try container.writeJSON(reset, to: container.identityDirectory.appendingPathComponent("\(Fixed.device(9)).json"))
        #expect(try container.identity()?.containerID == reset.containerID)
        _ = await a.sync()
        #expect(asked.value.count == 1 && asked.value.first?.contains("identity changed") == true, "\(asked.value)")
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func adoptingANewContainerKeepsDocumentsItLacksAsLocal(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend, onContainerChange: { _ in .adoptNew })
        let created = try await a.create()
        await a.sync()
        try FileManager.default.removeItem(at: harness.container)
        try FileManager.default.createDirectory(at: harness.container, withIntermediateDirectories: true)
        _ = try Container(root: harness.container).seedIdentity(device: Fixed.device(9), now: Date(), newID: Fixed.uuid(0xBEEF))
        await a.sync()
        let row = try #require(await a.list().first)
        #expect(row.id == created.id && row.location == .local)
        let next = try await a.create()
        #expect(next.location == .cloud)
        #expect(Container(root: harness.container).documentIDs() == [next.id])
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func librarySeedingOnTwoDevicesKeepsOneCopyOfTheSeedObjects(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend)
        let b = try harness.device("B", backend: backend)
        let id = DocumentID(Fixed.uuid(0x11B))
        let name = try DocumentName("Library")
        let seed = [
            SeedObject(key: "welcome", entity: Entity.textEntry, attributes: [Entity.TextEntry.text: .string("Welcome")]),
            SeedObject(key: "version", entity: Entity.modelVersion, attributes: [Entity.ModelVersion.version: .int(2)]),
        ]
        // Both seed before either sees the other's files.
        _ = try await a.sharedDocument(id: id, name: name, seed: seed)
        _ = try await b.sharedDocument(id: id, name: name, seed: seed)
        await a.sync()
        await b.sync()
        let graphA = try await a.detail(id).graph
        let graphB = try await b.detail(id).graph
        #expect(graphA == graphB)
        #expect(graphA.objects(of: Entity.textEntry).count == 1)
        #expect(graphA.objects(of: Entity.modelVersion).count == 1)
        #expect(await a.list().count == 1)
    }

    @Test(arguments: [EngineHarness.Backend.sqlite, .json])
    func copyContainerOnSegueCopiesIntoTheDeviceRoot(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: backend, settings: [.copyContainerOnSegue: .bool(true)])
        let created = try await a.create()
        _ = try await a.detail(created.id, segue: true)
        let copy = harness.root("A").appendingPathComponent("Documents/copyOfCloudContainer/documents/\(created.id)")
        #expect(FileManager.default.fileExists(atPath: copy.path))
    }
}

@Suite struct RecoveryTests {
    private func damage(_ url: URL, kind: StoreKind) throws {
        switch kind {
        case .sqlite:
            let data = try Data(contentsOf: url)
            try data.prefix(100).write(to: url)
        case .json:
            try Data("{ this is not json".utf8).write(to: url)
        }
    }

    private func storeURL(_ harness: EngineHarness, _ device: String, _ summary: DocumentSummary) -> URL {
        harness.root(device).appendingPathComponent("Documents/\(summary.id)/\(summary.name)/\(summary.store.fileName)")
    }

    @Test(arguments: [StoreKind.sqlite, .json])
    func withRecoveryOffADamagedStoreIsReportedAndTheRestKeepsWorking(kind: StoreKind) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: kind == .sqlite ? .sqlite : .json)
        let broken = try await a.create()
        let fine = try await a.create()
        await a.closeAll()
        try damage(storeURL(harness, "A", broken), kind: kind)
        await #expect(throws: EngineError.self) { try await a.detail(broken.id) }
        let rows = await a.list()
        let row = try #require(rows.first { $0.id == broken.id })
        #expect(row.state.contains(.savingError) && row.state.contains(.editingDisabled))
        #expect(row.problem?.contains("AttemptErrorRecovery") == true)
        try await a.appendText(fine.id, " ok")
        #expect(try await a.detail(fine.id).text.hasSuffix(" ok"))
    }

    @Test(arguments: [StoreKind.sqlite, .json])
    func withRecoveryOnACloudDocumentIsRebuiltFromTheContainer(kind: StoreKind) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let backend: EngineHarness.Backend = kind == .sqlite ? .sqlite : .json
        let a = try harness.device("A", backend: backend)
        let created = try await a.create()
        try await a.appendText(created.id, " precious")
        await a.closeAll()
        try damage(storeURL(harness, "A", created), kind: kind)
        let recovering = try harness.device("A", backend: backend, settings: [.attemptErrorRecovery: .bool(true)])
        let detail = try await recovering.detail(created.id)
        #expect(detail.text.hasSuffix(" precious"))
        let report = try #require(await recovering.recoveryReports[created.id])
        #expect(report.contains("rebuilt"))
        let damagedCopies = try FileManager.default.contentsOfDirectory(atPath: storeURL(harness, "A", created).deletingLastPathComponent().path)
            .filter { $0.hasPrefix("damaged-") && !$0.hasSuffix(".journal") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        #expect(damagedCopies.count == 1, "one damaged store kept, with its side files")
    }

    @Test func withRecoveryOnALocalDocumentFallsBackToItsLastGoodCopy() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite, settings: [.useCloud: .bool(false), .attemptErrorRecovery: .bool(true)])
        let created = try await a.create()
        try await a.setText(created.id, "good")
        await a.closeAll()
        _ = try await a.detail(created.id)  // a clean open keeps a last good copy
        await a.closeAll()
        try damage(storeURL(harness, "A", created), kind: .sqlite)
        let detail = try await a.detail(created.id)
        #expect(detail.text == "good")
        #expect(await a.recoveryReports[created.id]?.contains("last good copy") == true)
    }
}

/// A value behind a lock, for closures that tests hand to the engine.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.lock(); defer { lock.unlock() }; return stored }
    func mutate(_ body: (inout Value) -> Void) { lock.lock(); body(&stored); lock.unlock() }
}

@Suite struct UseCloudTests {
    @Test func turningUseCloudOnMovesLocalDocumentsAndOffAsksForEachCloudDocument() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let offline = try harness.device("A", backend: .sqlite, settings: [.useCloud: .bool(false)])
        let local = try await offline.create()
        #expect(local.location == .local)
        await offline.closeAll()
        let online = try harness.device("A", backend: .sqlite, settings: [.useCloud: .bool(true)])
        let movedUp = await online.applyUseCloud { _ in .keepUsingCloud }
        #expect(movedUp.map(\.movedTo) == [.cloud])
        let peer = try harness.device("B", backend: .json)
        await peer.sync()
        #expect(await peer.list().map(\.id) == [local.id])
        await online.closeAll()
        let asked = LockedBox<[String]>([])
        let offAgain = try harness.device("A", backend: .sqlite, settings: [.useCloud: .bool(false)])
        let movedDown = await offAgain.applyUseCloud { summary in
            asked.mutate { $0.append(summary.name) }
            return .removeCloud
        }
        #expect(asked.value == ["TestDoc1"])
        #expect(movedDown.map(\.movedTo) == [.local])
        await peer.sync()
        #expect(await peer.list().isEmpty)
        #expect(await offAgain.list().first?.location == .local)
        await offAgain.closeAll()
        // On again: the document goes back to the cloud under a new UUID, and the peer gets it.
        let onAgain = try harness.device("A", backend: .sqlite, settings: [.useCloud: .bool(true)])
        #expect(await onAgain.applyUseCloud { _ in .keepUsingCloud }.map(\.movedTo) == [.cloud])
        await onAgain.sync()
        let rows = await onAgain.list()
        #expect(rows.count == 1 && rows.first?.location == .cloud && rows.first?.id != local.id)
        await peer.sync()
        #expect(await peer.list().map(\.id) == rows.map(\.id))
    }
}
