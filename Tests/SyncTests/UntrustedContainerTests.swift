import Foundation
import Model
import Storage
@testable import Sync
import Testing
import TestSupport

/// Container files that lie (not garbage: well-formed files with claims out of range, from
/// strangers, or not backed by what they claim) crash nothing, erase nothing, and stop only
/// themselves. Each case failed before ContainerBounds existed.
@Suite struct UntrustedContainerTests {
    let doc = DocumentID(Fixed.uuid(0xD0C))

    func plant(_ value: some Encodable, at url: URL) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(value).write(to: url)
    }

    /// A copy of `baseline` claiming `applied`, written as device `writer`'s.
    func lyingBaseline(_ container: Container, writer: DeviceID, applied: [DeviceID: UInt64], objects: Bool) throws -> URL {
        var contents = StoreContents()
        contents.sync.applied = applied
        var baseline = Baseline(document: doc, writtenBy: writer, writtenAt: Date(timeIntervalSince1970: 1_700_000_000), contents: contents)
        if !objects { baseline.objects = [:] }
        let url = container.baselinesDirectory(doc).appendingPathComponent("\(writer)-1.json")
        try plant(baseline, at: url)
        return url
    }

    @Test func baselinesClaimingTheLargestSequenceCrashNothingAndAreNotUsed() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "Doc", text: "from A", now: harness.clock.now())
        let container = Container(root: harness.container)
        let stranger = DeviceID(Fixed.uuid(0x5757))
        for index in 0..<2 {
            var contents = StoreContents()
            contents.sync.applied = [stranger: .max, DeviceID(Fixed.uuid(0x5758 + index)): .max]
            let baseline = Baseline(document: doc, writtenBy: stranger, writtenAt: harness.clock.now(), contents: contents)
            try plant(baseline, at: container.baselinesDirectory(doc).appendingPathComponent("lie-\(index).json"))
        }
        #expect(container.baselines(doc).isEmpty)
        #expect(Baseline(document: doc, writtenBy: stranger, writtenAt: harness.clock.now(), contents: {
            var contents = StoreContents()
            contents.sync.applied = [stranger: .max, a.identity.id: .max]
            return contents
        }()).coverage == .max)
        let report = try b.importPending(doc)
        #expect(try b.text(doc) == "from A")
        #expect(report.progress.percent == 100)
        // A log named past the last sequence is not a log.
        #expect(Container.sequence(fromLogName: "9999999999999999.log") == nil)
        #expect(Container.sequence(fromLogName: "0000000000000001.log") == 1)
    }

    @Test func aBaselineOfNothingClaimingEverythingIsNotUsedAndPrunesNothing() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B"), c = harness.device(3, "C")
        try a.create(doc, name: "Doc", text: "one", now: harness.clock.now())
        for text in ["two", "three", "four"] {
            harness.clock.advance(1)
            try a.edit(doc, text: text)
        }
        try b.importPending(doc)
        let container = Container(root: harness.container)
        // Everyone says they have everything, and a baseline of nothing says it covers it all.
        for device in [a, b] {
            try device.replicator.register(applied: [doc: [a.identity.id: 4]])
        }
        let lie = try lyingBaseline(container, writer: b.identity.id, applied: [a.identity.id: 4], objects: false)
        #expect(a.replicator.prune(doc, registry: RegistrySnapshot(container)) == 0)
        #expect(container.logSequences(doc, device: a.identity.id) == [1, 2, 3, 4])
        // A newcomer still builds the document from the logs, and is told about the baseline.
        let report = try c.importPending(doc)
        #expect(try c.text(doc) == "four")
        #expect(report.quarantined.contains { $0.url == lie && $0.reason.contains("does not hold") })
    }

    @Test func aTombstoneFromADeviceThatNeverRegisteredDeletesNothing() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "Doc", text: "kept", now: harness.clock.now())
        let container = Container(root: harness.container)
        let stranger = DeviceID(Fixed.uuid(0x5757))
        try plant(DocumentTombstone(document: doc, deletedBy: stranger, deletedAt: harness.clock.now()),
                  at: container.tombstoneURL(doc, device: stranger))
        let scan = container.applyTombstones()
        #expect(scan.deleted.isEmpty)
        #expect(scan.problems.contains { $0.reason.contains("never registered") })
        #expect(container.documentIDs() == [doc])
        // A device that deletes registers first, so its tombstone counts.
        try a.replicator.delete(doc)
        #expect(container.isRegistered(a.identity.id))
        #expect(container.applyTombstones().deleted == [doc])
    }

    @Test func aPeerClockYearsAheadWaitsAndCannotWrapTheCounter() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "Doc", text: "start", now: harness.clock.now())
        try b.importPending(doc)
        // A log stamped ten years ahead with the counter at its maximum.
        let future = UInt64(harness.clock.now().timeIntervalSince1970 * 1000) + 10 * 365 * 86_400_000
        let log = TransactionLog(
            document: doc, device: a.identity.id, sequence: 2, stamp: Stamp(wall: future, counter: .max, device: a.identity.id),
            committedAt: harness.clock.now(), deviceName: "A",
            changes: [LoggedChange(op: .update, id: ObjectID("text-\(doc)"), entity: Entity.textEntry, attributes: ["text": .string("from the future")])])
        let container = Container(root: harness.container)
        _ = try container.writeLog(log.encoded(), document: doc, device: a.identity.id, sequence: 2)
        let report = try b.importPending(doc)
        #expect(report.imported.isEmpty)
        #expect(report.quarantined.contains { $0.reason.contains("ahead of this device's clock") })
        #expect(try b.text(doc) == "start")
        // B's own saves go on, and win.
        harness.clock.advance(1)
        try b.edit(doc, text: "B's save")
        #expect(try b.text(doc) == "B's save")

        // The clock itself: a stamp observed at the counter's maximum is still followed.
        var clock = HybridLogicalClock()
        let device = DeviceID(Fixed.uuid(1))
        clock.observe(Stamp(wall: 5_000, counter: .max, device: DeviceID(Fixed.uuid(2))))
        let next = clock.tick(now: 4_000, device: device)
        #expect(next > Stamp(wall: 5_000, counter: .max, device: DeviceID(Fixed.uuid(2))))
    }

    @Test func aSaveWhoseLogPeersWouldRefuseIsRefusedBeforeItIsCommitted() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "Doc", text: "small", now: harness.clock.now())
        let store = try a.store(doc)
        defer { store.close() }
        let before = try store.read()
        let huge = String(repeating: "x", count: TransactionLog.maximumFileSize + 1)
        #expect {
            try a.replicator.commit([.update(ObjectID("text-\(doc)"), attributes: ["text": .string(huge)])], document: doc, to: store, ship: true)
        } throws: { error in
            (error as? SyncError)?.kind == .saveRefused && "\(error)".contains("MiB")
        }
        #expect(try store.read() == before)
    }

    @Test func aGarbageIdentityFileBesideAGoodOneStopsNothing() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let container = Container(root: harness.container)
        let seeded = try container.seedIdentity(device: DeviceID(Fixed.uuid(1)), now: harness.clock.now(), newID: Fixed.uuid(0xC0))
        try Data("not json".utf8).write(to: container.identityDirectory.appendingPathComponent("zzz.json"))
        #expect(try container.identities().map(\.containerID) == [seeded.containerID])
        // Alone, a damaged identity is an error: nothing is seeded beside it.
        try FileManager.default.removeItem(at: container.identityDirectory.appendingPathComponent("\(DeviceID(Fixed.uuid(1))).json"))
        #expect(throws: SyncError.self) { try container.identities() }
    }

    @Test func typedNamesRefuseWhatTheRootUsesBidiControlsAndUUIDs() throws {
        for bad in ["document.json", "Document.JSON", "invoice\u{202E}txt.exe", "a\u{2066}b", "9f2c1e4a-1b2c-4d5e-8f90-123456789abc"] {
            #expect(throws: DocumentNameError.self, "\(bad.debugDescription)") { try DocumentName(typed: bad) }
        }
        for good in ["TestDoc1", "Notes 2026", "résumé", "9f2c1e4a"] {
            #expect(try DocumentName(typed: good).rawValue == good)
        }
        // What peers and earlier versions wrote is still read.
        #expect(try DocumentName("document.json").rawValue == "document.json")
    }
}
