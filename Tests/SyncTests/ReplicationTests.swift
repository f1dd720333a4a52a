import Foundation
import Model
import Storage
@testable import Sync
import Testing
import TestSupport

@Suite struct ReplicationTests {
    static let backends = SyncBackend.allCases
    let doc = DocumentID(Fixed.uuid(0xD0C))

    @Test(arguments: backends)
    func createdOnAIsDiscoveredAndImportedOnBAndEditsTravelBack(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "TestDoc1", text: "A (Test)", now: harness.clock.now())
        let container = Container(root: harness.container)
        #expect(container.documentIDs() == [doc])
        #expect(container.infos(doc).first?.name.rawValue == "TestDoc1")
        let report = try b.importPending(doc)
        #expect(report.imported.count == 1 && report.progress.percent == 100)
        #expect(report.summary.inserted == [ObjectID("text-\(doc)")])
        #expect(try b.text(doc) == "A (Test)")
        harness.clock.advance(1)
        try b.edit(doc, text: "A (Test) START")
        let back = try a.importPending(doc)
        #expect(back.summary.updated == [ObjectID("text-\(doc)")])
        #expect(try a.graph(doc) == b.graph(doc))
    }

    @Test(arguments: backends)
    func concurrentEditsConvergeOnTheLargerStamp(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "TestDoc1", text: "start", now: harness.clock.now())
        try b.importPending(doc)
        // Same millisecond on both: the device UUID breaks the tie (B's is larger).
        try a.edit(doc, text: "from A")
        try b.edit(doc, text: "from B")
        try a.importPending(doc)
        try b.importPending(doc)
        #expect(try a.text(doc) == "from B")
        #expect(try a.graph(doc) == b.graph(doc))
        // Later wall clock wins over device order.
        harness.clock.advance(5)
        try a.edit(doc, text: "later from A")
        try b.importPending(doc)
        #expect(try b.text(doc) == "later from A")
    }

    @Test func sameNameCreatesAtTheSameMomentStayTwoDocuments() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        let one = DocumentID(Fixed.uuid(1)), two = DocumentID(Fixed.uuid(2))
        try a.create(one, name: "Untitled", text: "A", now: harness.clock.now())
        try b.create(two, name: "Untitled", text: "B", now: harness.clock.now())
        let ids = Container(root: harness.container).documentIDs()
        #expect(Set(ids) == [one, two])
        try a.importPending(two)
        try b.importPending(one)
        #expect(try a.text(two) == "B" && b.text(one) == "A")
    }

    @Test func aDeleteLeavesATombstoneAndStragglersDoNotResurrect() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "TestDoc1", text: "x", now: harness.clock.now())
        try b.importPending(doc)
        try a.replicator.delete(doc)
        let container = Container(root: harness.container)
        #expect(container.tombstones()[doc]?.first?.deletedBy == a.identity.id)
        #expect(!container.documentIDs().contains(doc))
        // B, offline during the delete, ships an edit afterwards: the tombstone still stands.
        try b.edit(doc, text: "late edit")
        #expect(container.tombstones()[doc] != nil)
        #expect(container.tombstones(of: doc).count == 1)
    }

    /// A's last log is lost while B, ahead of A on its own logs, had not applied it. A supplies
    /// it again with a baseline whose coverage (a sum) is below what B applied: B still reads it,
    /// once, by its name, and gets A's edit; A's next compaction writes none again.
    @Test(arguments: backends)
    func aLostLastLogReachesAPeerAheadOfItsWriter(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "TestDoc1", text: "start", now: harness.clock.now())
        try b.importPending(doc)
        for index in 1...3 {
            harness.clock.advance(1)
            try b.save(doc, [.insert(ObjectID("b-\(index)"), entity: "Note", attributes: ["body": .string("from B \(index)")])])
        }
        harness.clock.advance(1)
        try a.edit(doc, text: "A's last")
        let container = Container(root: harness.container)
        let lost = container.logURL(doc, device: a.identity.id, sequence: 2)
        try FileManager.default.removeItem(at: lost)
        #expect(try b.importPending(doc).imported.isEmpty)

        // A pass's compaction writes nothing for it (a deletion on its way looks the same);
        // `container repair` on A supplies it.
        #expect(try a.replicator.compact(doc, store: try a.store(doc)).baseline == nil)
        let supplied = try #require(try a.replicator.resupplyLostLogs(doc, store: try a.store(doc)))
        #expect(supplied.lost == [2])
        let report = try b.importPending(doc)
        #expect(report.baselinesMerged == 1)
        #expect(try b.text(doc) == "A's last")
        #expect(try b.store(doc).read().sync.applied[a.identity.id] == 2)
        // Read once: the next import does not read the baselines again; A writes none again.
        #expect(try b.importPending(doc).baselinesMerged == 0)
        #expect(try a.replicator.resupplyLostLogs(doc, store: try a.store(doc)) == nil)
    }

    /// Something else in the slot of this device's next log — a file too big to be a log, or
    /// another log of that sequence — keeps the save in the outbox and says so (junk used to
    /// count as shipped, and the save never reached a peer).
    @Test(arguments: backends)
    func aSlotTakenBySomethingElseKeepsTheSaveInTheOutbox(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "TestDoc1", text: "0", now: harness.clock.now())
        let container = Container(root: harness.container)
        let slot = container.logURL(doc, device: a.identity.id, sequence: 2)
        for junk in [nil, Data("{\"format\":1}".utf8)] {
            try? FileManager.default.removeItem(at: slot)
            #expect(FileManager.default.createFile(atPath: slot.path, contents: junk ?? Data()))
            if junk == nil {
                // Sparse, one byte over what any log may be.
                let handle = try FileHandle(forWritingTo: slot)
                try handle.truncate(atOffset: UInt64(TransactionLog.maximumFileSize + 1))
                try handle.close()
            }
            let store = try a.store(doc)
            defer { store.close() }
            if try store.read().sync.outbox.isEmpty {
                try a.replicator.commit([.update(ObjectID("text-\(doc)"), attributes: ["text": .string("1")])], document: doc, to: store, ship: true)
            }
            #expect(throws: SyncError.self) { try a.replicator.flush(doc, in: store) }
            #expect(try store.read().sync.outbox.keys.sorted() == [2])
        }
    }

    @Test(arguments: backends)
    func aThirdDeviceJoiningAfterAThousandEditsGetsTheSameGraph(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "TestDoc1", text: "0", now: harness.clock.now())
        try b.importPending(doc)
        let storeA = try a.store(doc)
        defer { storeA.close() }
        for index in 1...1000 {
            harness.clock.advance(0.001)
            try a.replicator.commit([.update(ObjectID("text-\(doc)"), attributes: ["text": .string("\(index)")]),
                                     .insert(ObjectID("row-\(index % 10)"), entity: "Row", attributes: ["n": .int(Int64(index))])],
                                    document: doc, to: storeA, ship: true)
            try a.replicator.flush(doc, in: storeA)
        }
        try b.importPending(doc)
        // Both register what they applied; A writes a baseline and prunes what everyone has.
        try a.replicator.register(applied: [doc: try storeA.read().sync.applied])
        let storeB = try b.store(doc)
        try b.replicator.register(applied: [doc: try storeB.read().sync.applied])
        storeB.close()
        let compaction = try a.replicator.compact(doc, store: storeA)
        #expect(compaction.baseline != nil)
        #expect(compaction.prunedLogs == 1001)
        let container = Container(root: harness.container)
        #expect(container.logSequences(doc, device: a.identity.id).isEmpty)
        let c = harness.device(3, "C")
        let report = try c.importPending(doc)
        #expect(report.baselinesMerged == 1)
        #expect(try c.graph(doc) == a.graph(doc))
        #expect(try c.text(doc) == "1000")
        // C goes on with logs after the baseline.
        harness.clock.advance(1)
        try a.edit(doc, text: "after the baseline")
        try c.importPending(doc)
        #expect(try c.text(doc) == "after the baseline")
    }

    @Test func importingTwiceChangesNothing() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "TestDoc1", text: "x", now: harness.clock.now())
        try b.importPending(doc)
        let before = try b.store(doc).read()
        let again = try b.importPending(doc)
        #expect(again.imported.isEmpty && again.summary.isEmpty)
        #expect(try b.store(doc).read() == before)
    }

    @Test func aGapWaitsAndFillsLater() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "TestDoc1", text: "1", now: harness.clock.now())
        try a.edit(doc, text: "2")
        // B's replica of the container has log 2 but not yet log 1.
        let replica = harness.folder.appending("replica")
        let b = harness.device(2, "B", container: replica)
        try copy(doc, from: harness.container, to: replica, sequences: [2], device: a.identity.id)
        let waiting = try b.importPending(doc)
        #expect(waiting.imported.isEmpty && waiting.waitingForGap)
        #expect(waiting.progress.percent < 100)
        try copy(doc, from: harness.container, to: replica, sequences: [1], device: a.identity.id)
        let filled = try b.importPending(doc)
        #expect(filled.imported.map(\.sequence) == [1, 2])
        #expect(try b.text(doc) == "2")
        #expect(filled.progress.percent == 100)
    }

    @Test func ignoredNamesAreNeverImportedAndMalformedLogsAreQuarantined() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B"), c = harness.device(3, "C")
        try a.create(doc, name: "TestDoc1", text: "from A", now: harness.clock.now())
        let container = Container(root: harness.container)
        let logs = container.logsDirectory(doc, device: a.identity.id)
        let real = try Data(contentsOf: container.logURL(doc, device: a.identity.id, sequence: 1))
        for name in [".syncthing.0000000000000002.log.tmp", "0000000000000002.sync-conflict-20240101-120000-ABCDEF.log",
                     "~syncthing~0000000000000002.log.tmp", "0000000000000002.log~", ".tmp-0000000000000002.log"] {
            try real.write(to: logs.appendingPathComponent(name))
        }
        // C's first log is truncated.
        let cLogs = container.logsDirectory(doc, device: c.identity.id)
        try FileManager.default.createDirectory(at: cLogs, withIntermediateDirectories: true)
        try real.prefix(real.count / 2).write(to: cLogs.appendingPathComponent("0000000000000001.log"))
        let report = try b.importPending(doc)
        #expect(report.imported.map(\.sequence) == [1])
        #expect(report.quarantined.count == 1)
        #expect(report.quarantined.first?.description.contains(c.identity.id.description) == true)
        #expect(try b.text(doc) == "from A")
        #expect(container.conflictCopies(doc).count == 1)
    }

    @Test func aLogCommittedButNotShippedIsShippedOnceAfterACrash() throws {
        let harness = try SyncHarness(.sqlite)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "TestDoc1", text: "1", now: harness.clock.now())
        do {
            let store = try a.store(doc)
            try a.replicator.commit([.update(ObjectID("text-\(doc)"), attributes: ["text": .string("2")])], document: doc, to: store, ship: true)
            store.close()  // "crash" before flush
        }
        let container = Container(root: harness.container)
        #expect(container.logSequences(doc, device: a.identity.id) == [1])
        let store = try a.store(doc)
        defer { store.close() }
        #expect(try a.replicator.flush(doc, in: store).count == 1)
        #expect(try a.replicator.flush(doc, in: store).isEmpty)
        #expect(container.logSequences(doc, device: a.identity.id) == [1, 2])
        #expect(try store.read().sync.outbox.isEmpty)
    }

    private func copy(_ doc: DocumentID, from source: URL, to destination: URL, sequences: [UInt64], device: DeviceID) throws {
        let from = Container(root: source), to = Container(root: destination)
        try FileManager.default.createDirectory(at: to.logsDirectory(doc, device: device), withIntermediateDirectories: true)
        for info in try FileManager.default.contentsOfDirectory(atPath: from.documentDirectory(doc).path) where info.hasPrefix("info-") {
            let target = to.documentDirectory(doc).appendingPathComponent(info)
            if !FileManager.default.fileExists(atPath: target.path) {
                try FileManager.default.copyItem(at: from.documentDirectory(doc).appendingPathComponent(info), to: target)
            }
        }
        for sequence in sequences {
            try FileManager.default.copyItem(at: from.logURL(doc, device: device, sequence: sequence), to: to.logURL(doc, device: device, sequence: sequence))
        }
    }
}

/// A device's registry grows by about 100 bytes a document: at 20,000 documents it is still
/// read by every peer (it once outgrew the 1 MiB record limit near 10,000, and peers ignored
/// it), and a device refuses to write one larger than readers accept.
@Suite struct LargeRegistryTests {
    @Test func aRegistryOfTwentyThousandDocumentsIsRead() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        var applied: [DocumentID: [DeviceID: UInt64]] = [:]
        for index in 0..<20_000 { applied[DocumentID(Fixed.uuid(0x10_0000 + index))] = [a.identity.id: 3] }
        try a.replicator.register(applied: applied)
        let container = Container(root: harness.container)
        let records = container.deviceRecords()
        #expect(records.count == 1)
        #expect(records.first?.applied.count == 20_000)
        #expect(container.verify().problems.isEmpty)
    }
}

@Suite struct BaselineCadenceTests {
    /// A baseline costs what the document holds: a document of 1,000 objects waits for 10
    /// uncovered logs (one per 100 objects), not for the threshold of 2, then gets one.
    @Test func aLargeDocumentsBaselineWaitsForLogsInProportionToItsSize() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let doc = DocumentID(Fixed.uuid(0xCAD))
        let a = harness.device(1, "A", baselineThreshold: 2)
        try a.create(doc, name: "TestDoc1", text: "x", now: harness.clock.now())
        try a.save(doc, (0..<1_000).map { .insert(ObjectID("row-\($0)"), entity: "Row", attributes: ["n": .int(Int64($0))]) })
        let store = try a.store(doc)
        defer { store.close() }
        #expect(try store.read().graph.objects.count > 1_000)
        // Two logs so far (the creation, the rows): past the threshold, short of ten.
        #expect(try a.replicator.compact(doc, store: store).baseline == nil)
        for index in 3...9 {
            harness.clock.advance(0.001)
            try a.save(doc, [.update(ObjectID("row-\(index)"), attributes: ["n": .int(-1)])])
            #expect(try a.replicator.compact(doc, store: store).baseline == nil, "after \(index) logs")
        }
        harness.clock.advance(0.001)
        try a.save(doc, [.update(ObjectID("row-10"), attributes: ["n": .int(-1)])])
        #expect(try a.replicator.compact(doc, store: store).baseline != nil)
    }
}

