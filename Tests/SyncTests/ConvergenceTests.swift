import Foundation
import Model
import Storage
@testable import Sync
import Testing
import TestSupport


@Suite struct ConvergenceTests {
    /// Three devices edit one document concurrently (updates, inserts, deletes). A fresh device
    /// receives their logs shuffled, duplicated and with gaps filled late, importing after every
    /// delivery; it must end with the same graph as a device that saw everything in order.
    @Test(arguments: 0..<60)
    func shuffledDuplicatedAndLateLogsConverge(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let doc = DocumentID(Fixed.uuid(0xD0C))
        let writers = [harness.device(1, "A"), harness.device(2, "B"), harness.device(3, "C")]
        try writers[0].create(doc, name: "TestDoc1", text: "seed", now: harness.clock.now())
        var entries: [(DeviceID, UInt64)] = [(writers[0].identity.id, 1)]
        for _ in 0..<30 {
            let writer = writers[Int.random(in: 0..<3, using: &random)]
            if Bool.random(using: &random) { try writer.importPending(doc) }  // sometimes they see each other
            if Int.random(in: 0..<4, using: &random) == 0 { harness.clock.advance(0.001) }
            let object = ObjectID("o\(Int.random(in: 0..<5, using: &random))")
            let change: Change
            switch Int.random(in: 0..<10, using: &random) {
            case 0: change = .delete(object)
            case 1...3: change = .insert(object, entity: "Row", attributes: ["n": .int(Int64.random(in: 0..<100, using: &random))])
            default: change = .update(ObjectID("text-\(doc)"), attributes: ["text": .string("v\(Int.random(in: 0..<1000, using: &random))")])
            }
            let store = try writer.store(doc)
            defer { store.close() }
            let commit: LocalCommit
            do {
                commit = try writer.replicator.commit([change], document: doc, to: store, ship: true)
            } catch let error as SyncError where error.kind == .saveRefused {
                // An insert of an object this writer saw deleted: the store would not show it,
                // so nothing is saved (a writer that has not seen the delete saves it).
                continue
            }
            try writer.replicator.flush(doc, in: store)
            entries.append((writer.identity.id, commit.log.sequence))
        }
        let reference = harness.device(9, "Reference")
        try reference.importPending(doc)

        let replica = harness.folder.appending("replica")
        let fresh = harness.device(10, "Fresh", container: replica)
        var deliveries = entries + entries.filter { _ in Int.random(in: 0..<4, using: &random) == 0 }
        deliveries.shuffle(using: &random)
        let source = Container(root: harness.container), target = Container(root: replica)
        try FileManager.default.createDirectory(at: target.documentDirectory(doc), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: source.infoURL(doc, device: writers[0].identity.id), to: target.infoURL(doc, device: writers[0].identity.id))
        for (device, sequence) in deliveries {
            let destination = target.logURL(doc, device: device, sequence: sequence)
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            if !FileManager.default.fileExists(atPath: destination.path) {
                try FileManager.default.copyItem(at: source.logURL(doc, device: device, sequence: sequence), to: destination)
            }
            try fresh.importPending(doc)
        }
        #expect(try fresh.graph(doc) == reference.graph(doc), "seed \(seed) diverged; replay with arguments: [\(seed)]")
        // Every writer converges too once it has imported everything.
        for writer in writers {
            try writer.importPending(doc)
            #expect(try writer.graph(doc) == reference.graph(doc), "seed \(seed): \(writer.identity.name) diverged")
        }
    }

    @Test func baselinesMergeInAnyOrder() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let doc = DocumentID(Fixed.uuid(0xD0C))
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "TestDoc1", text: "x", now: harness.clock.now())
        try b.importPending(doc)
        try a.edit(doc, text: "A's")
        try b.edit(doc, text: "B's")
        let storeA = try a.store(doc), storeB = try b.store(doc)
        defer { storeA.close(); storeB.close() }
        let baselineA = Baseline(document: doc, writtenBy: a.identity.id, writtenAt: Date(), contents: try storeA.read())
        let baselineB = Baseline(document: doc, writtenBy: b.identity.id, writtenAt: Date(), contents: try storeB.read())
        var one = StoreContents(), two = StoreContents()
        Merge.merge(baselineA, into: &one)
        Merge.merge(baselineB, into: &one)
        Merge.merge(baselineB, into: &two)
        Merge.merge(baselineA, into: &two)
        #expect(one.graph == two.graph)
        #expect(one.sync.applied == two.sync.applied)
        #expect(one.graph.textEntry?.text == "B's")
    }
}

extension ConvergenceTests {
    /// A joining device takes a baseline's objects whole: it must end exactly as merging them
    /// one by one would leave it — tombstoned objects left out, attributes without a stamp
    /// stamped with the writer's zero stamp, stamps of missing attributes dropped, texts rebuilt.
    @Test func adoptingABaselineIntoAnEmptyStoreIsMergingItObjectByObject() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let doc = DocumentID(Fixed.uuid(0xD0D))
        let a = harness.device(1, "A")
        try a.create(doc, name: "TestDoc1", text: "hello", now: harness.clock.now())
        try a.edit(doc, text: "hello there")
        let store = try a.store(doc)
        defer { store.close() }
        var baseline = Baseline(document: doc, writtenBy: a.identity.id, writtenAt: Date(), contents: try store.read())
        let stamp = Stamp(wall: 1_700_000_000_000, counter: 2, device: a.identity.id)
        baseline.objects[ObjectID("row-1")] = ObjectRecord(entity: "Row", attributes: ["n": .int(1), "text": .string("one")])
        baseline.stamps[ObjectID("row-1")] = ["n": stamp]  // "text" has no stamp
        baseline.objects[ObjectID("row-2")] = ObjectRecord(entity: "Row", attributes: [:])
        baseline.stamps[ObjectID("row-2")] = ["gone": stamp]  // a stamp of an attribute it lacks
        baseline.objects[ObjectID("row-3")] = ObjectRecord(entity: "Row", attributes: ["n": .int(3)])
        baseline.stamps[ObjectID("row-3")] = ["n": stamp]
        baseline.tombstones[ObjectID("row-3")] = stamp  // deleted: never comes back, nor its stamps
        baseline.tombstones[ObjectID("row-4")] = stamp
        var adopted = StoreContents(), merged = StoreContents()
        let adoptedSummary = Merge.merge(baseline, into: &adopted)
        let mergedSummary = Merge.merge(baseline, into: &merged, adoptsWhole: false)
        #expect(adopted == merged)
        #expect(adoptedSummary == mergedSummary)
        #expect(adopted.graph.objects[ObjectID("row-3")] == nil && adopted.sync.stamps[ObjectID("row-3")] == nil)
        #expect(adopted.sync.tombstones.count == 2)
        #expect(adopted.sync.stamps[ObjectID("row-1")]?["text"] == Stamp(wall: 0, counter: 0, device: a.identity.id))
        #expect(adopted.graph.textEntry?.text == "hello there")
    }
}

@Suite struct IdentityTests {
    @Test func theFirstDeviceSeedsTheIdentityAndOthersKeepIt() throws {
        let folder = try TemporaryDirectory("identity")
        defer { folder.remove() }
        let container = Container(root: folder.url)
        #expect(try container.identity() == nil)
        let seeded = try container.seedIdentity(device: Fixed.device(1), now: Date(), newID: Fixed.uuid(0x100))
        let again = try container.seedIdentity(device: Fixed.device(2), now: Date(), newID: Fixed.uuid(0x200))
        #expect(seeded.containerID == Fixed.uuid(0x100) && again.containerID == seeded.containerID)
        #expect(try container.identities().count == 1)
    }

    @Test func twoDevicesSeedingAtOnceAgreeOnTheSmallestUUID() throws {
        let left = try TemporaryDirectory("identity"), right = try TemporaryDirectory("identity")
        defer { left.remove(); right.remove() }
        // Each seeds its own empty replica; then the replication engine brings the other's file.
        let a = try Container(root: left.url).seedIdentity(device: Fixed.device(1), now: Date(), newID: Fixed.uuid(0x900))
        let b = try Container(root: right.url).seedIdentity(device: Fixed.device(2), now: Date(), newID: Fixed.uuid(0x100))
        try FileManager.default.copyItem(at: left.appending("identity/\(Fixed.device(1)).json"), to: right.appending("identity/\(Fixed.device(1)).json"))
        try FileManager.default.copyItem(at: right.appending("identity/\(Fixed.device(2)).json"), to: left.appending("identity/\(Fixed.device(2)).json"))
        let onA = try Container(root: left.url).identity(), onB = try Container(root: right.url).identity()
        #expect(onA == onB)
        #expect(onA?.containerID == b.containerID && a.containerID != b.containerID)
    }

    @Test func aNewerFormatIsRefused() throws {
        let folder = try TemporaryDirectory("identity")
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.appending("identity"), withIntermediateDirectories: true)
        try Data(#"{"containerID":"11111111-2222-3333-4444-555555555555","format":7,"seededAt":0,"seededBy":"11111111-2222-3333-4444-555555555555"}"#.utf8)
            .write(to: folder.appending("identity/x.json"))
        let error = #expect(throws: SyncError.self) { try Container(root: folder.url).identity() }
        #expect(error?.kind == .unknownFormat(found: 7, supported: Container.formatVersion))
    }

    @Test func aMissingContainerIsUnavailable() throws {
        let container = Container(root: URL(fileURLWithPath: "/nonexistent/multidoc-container"))
        #expect(!container.isAvailable)
        let error = #expect(throws: SyncError.self) { try container.identity() }
        #expect(error?.kind == .containerUnavailable)
        #expect(error?.description.contains("/nonexistent/multidoc-container") == true)
    }
}

@Suite struct LogDecodingTests {
    let doc = DocumentID(Fixed.uuid(0xD0C))
    let device = Fixed.device(1)

    func validLog() throws -> Data {
        try TransactionLog(document: doc, device: device, sequence: 3, stamp: Stamp(wall: 1, counter: 0, device: device),
                           committedAt: Date(timeIntervalSince1970: 1), deviceName: "A",
                           changes: [LoggedChange(op: .update, id: ObjectID("t"), entity: "TextEntry", attributes: ["text": .string("x")])]).encoded()
    }

    @Test func aValidLogDecodesAndLiesAreRefused() throws {
        let data = try validLog()
        #expect(try TransactionLog.decode(data, document: doc, device: device, sequence: 3).sequence == 3)
        #expect(throws: LogDecodingError.self) { try TransactionLog.decode(data, document: doc, device: device, sequence: 4) }
        #expect(throws: LogDecodingError.self) { try TransactionLog.decode(data, document: doc, device: Fixed.device(2), sequence: 3) }
        #expect(throws: LogDecodingError.self) { try TransactionLog.decode(data, document: DocumentID(Fixed.uuid(1)), device: device, sequence: 3) }
    }

    @Test func thousandsOfDamagedInputsNeverCrash() throws {
        var random = SeededGenerator(seed: 42)
        let valid = try validLog()
        var accepted = 0
        for round in 0..<3000 {
            var data: Data
            switch round % 4 {
            case 0: data = Data((0..<Int.random(in: 0..<300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
            case 1: data = valid.prefix(Int.random(in: 0..<valid.count, using: &random))
            case 2:
                data = valid
                for _ in 0..<Int.random(in: 1..<5, using: &random) {
                    data[Int.random(in: 0..<data.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            default:
                let shapes = [#"{}"#, #"[]"#, #"{"format":1}"#, #"null"#, #"{"changes":[{"op":"explode"}]}"#, #""text""#]
                data = Data(shapes[Int.random(in: 0..<shapes.count, using: &random)].utf8)
            }
            if (try? TransactionLog.decode(data, document: doc, device: device, sequence: 3)) != nil { accepted += 1 }
        }
        // Only byte flips inside string values can still be valid logs.
        #expect(accepted < 300)
    }

    @Test func deeplyNestedJSONIsRefusedWithoutCrashing() {
        let depth = 100_000
        let data = Data((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
        #expect(throws: LogDecodingError.self) { try TransactionLog.decode(data, document: doc, device: device, sequence: 1) }
    }
}

@Suite struct WatcherTests {
    @Test func aFileInAFolderCreatedAfterTheWatcherStartedIsReported() async throws {
        let folder = try TemporaryDirectory("watch")
        defer { folder.remove() }
        let watcher = try ContainerWatcher(root: folder.url)
        defer { watcher.stop() }
        let target = folder.appending("documents/x/logs/y/0000000000000001.log")
        let found = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in watcher.events {
                    if case .changed(let url) = event, url.path.hasSuffix("0000000000000001.log") { return true }
                }
                return false
            }
            group.addTask {
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data("x".utf8).write(to: target)
                try await Task.sleep(for: .seconds(10))
                return false
            }
            let first = try await group.next() ?? false
            group.cancelAll()
            watcher.stop()
            return first
        }
        #expect(found)
    }

    /// A watcher with a handler hands it every event on its own thread, in order.
    @Test(.timeLimit(.minutes(1)))
    func aHandlerHearsEachFileAsItLands() async throws {
        let folder = try TemporaryDirectory("watch-handler")
        defer { folder.remove() }
        let (heard, hear) = AsyncStream.makeStream(of: ContainerWatcher.Event.self)
        let watcher = try ContainerWatcher(root: folder.url) { hear.yield($0) }
        defer { watcher.stop() }
        try Data("1".utf8).write(to: folder.appending("first.log"))
        try Data("2".utf8).write(to: folder.appending("second.log"))
        var names: [String] = []
        for await event in heard {
            guard case .changed(let url) = event else { continue }
            if names.last != url.lastPathComponent { names.append(url.lastPathComponent) }
            if url.lastPathComponent == "second.log" { break }
        }
        #expect(names == ["first.log", "second.log"])
    }

    /// Links are never followed: a loop in the container (which Syncthing copies between hosts
    /// as it is) once sent the watcher into endless recursion, and the daemon ignored SIGTERM.
    @Test(.timeLimit(.minutes(1)))
    func linkLoopsAreNotFollowed() async throws {
        let folder = try TemporaryDirectory("watch-loop")
        defer { folder.remove() }
        let documents = folder.appending("documents")
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: documents.appendingPathComponent("self").path, withDestinationPath: ".")
        try FileManager.default.createSymbolicLink(atPath: documents.appendingPathComponent("up").path, withDestinationPath: "..")
        let watcher = try ContainerWatcher(root: folder.url)
        defer { watcher.stop() }
        // A folder that arrives with a loop inside is reported once, file by file.
        let staged = folder.appending("staged")
        try FileManager.default.createDirectory(at: staged.appendingPathComponent("logs"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: staged.appendingPathComponent("logs/loop").path, withDestinationPath: "..")
        try Data("x".utf8).write(to: staged.appendingPathComponent("logs/0000000000000001.log"))
        try FileManager.default.moveItem(at: staged, to: documents.appendingPathComponent("arrived"))
        var seen: [String] = []
        for await event in watcher.events {
            guard case .changed(let url) = event else { continue }
            seen.append(url.path)
            if url.path.hasSuffix("arrived") { break }
        }
        #expect(seen.contains { $0.hasSuffix("arrived/logs/0000000000000001.log") }, "\(seen)")
        #expect(!seen.contains { $0.contains("/loop/") }, "\(seen)")
    }
}
