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
        // `container verify` believes it no more than imports do (named as its coverage says,
        // so that only what it holds is wrong): it names it, and a gap it claims to cover stays
        // named.
        let named = container.baselinesDirectory(doc).appendingPathComponent("\(b.identity.id)-4.json")
        try FileManager.default.moveItem(at: lie, to: named)
        try FileManager.default.removeItem(at: container.logURL(doc, device: a.identity.id, sequence: 3))
        let problems = container.verify().problems
        #expect(problems.contains { $0.url == named && $0.reason.contains("baseline not used: it claims log 4") && $0.reason.contains("does not hold") }, "\(problems)")
        let after = container.logURL(doc, device: a.identity.id, sequence: 4)
        #expect(problems.contains { $0.url == after && $0.reason.contains("logs 3…3 of this device are missing") }, "\(problems)")
    }

    /// A baseline under a device nobody has seen, claiming a thousand of A's logs (A wrote two)
    /// and holding nothing: no device takes it (a new one built the document empty from it,
    /// the peers then registered A:1000, and A pruned the logs it has), and sync and verify
    /// name it.
    @Test func aBaselineClaimingLogsNobodyWroteIsNotUsedByAnyDevice() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B"), c = harness.device(3, "C")
        try a.create(doc, name: "Doc", text: "one", now: harness.clock.now())
        harness.clock.advance(1)
        try a.edit(doc, text: "one two")
        try b.importPending(doc)
        let container = Container(root: harness.container)
        let stranger = DeviceID(Fixed.uuid(0x5757))
        var contents = StoreContents()
        contents.sync.applied = [a.identity.id: 1000]
        let lie = container.baselinesDirectory(doc).appendingPathComponent("\(stranger)-1000.json")
        try plant(Baseline(document: doc, writtenBy: stranger, writtenAt: harness.clock.now(), contents: contents), at: lie)

        // A device joining now builds the document from A's logs, and is told about the baseline.
        let joined = try c.importPending(doc)
        #expect(try c.text(doc) == "one two")
        #expect(joined.baselinesMerged == 0)
        #expect(joined.quarantined.contains { $0.url == lie && $0.reason.contains("claims log 1000 of device \(a.identity.id)") }, "\(joined.quarantined)")
        // The peers keep what they applied, and so does A.
        for device in [a, b, c] {
            let report = try device.importPending(doc)
            #expect(report.quarantined.contains { $0.url == lie }, "\(device.identity.name)")
            #expect(try device.store(doc).read().sync.applied[a.identity.id] == 2, "\(device.identity.name)")
            try device.replicator.register(applied: [doc: try device.store(doc).read().sync.applied])
        }
        // Nobody registered A:1000, and A prunes nothing on the baseline's word.
        #expect(container.deviceRecords().allSatisfy { $0.applied[doc]?[a.identity.id] == 2 })
        #expect(a.replicator.prune(doc, registry: RegistrySnapshot(container)) == 0)
        #expect(container.logSequences(doc, device: a.identity.id) == [1, 2])
        #expect(a.replicator.standingGaps(doc).isEmpty)
        #expect(container.verify().problems.contains { $0.url == lie && $0.reason.contains("claims log 1000") })
    }

    /// A never takes a claim about its own logs beyond what it wrote: not from a baseline under
    /// its own name, not from a peer's registry entry (which then counts for nothing in its
    /// pruning, and is named). Its next save follows its last one, and peers apply it.
    @Test func aDeviceBelievesNoClaimAboutItsOwnLogsBeyondWhatItWrote() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B"), c = harness.device(3, "C")
        try a.create(doc, name: "Doc", text: "one", now: harness.clock.now())
        harness.clock.advance(1)
        try a.edit(doc, text: "one two")
        try b.importPending(doc)
        let container = Container(root: harness.container)
        var contents = StoreContents()
        contents.sync.applied = [a.identity.id: 1000]
        let lie = container.baselinesDirectory(doc).appendingPathComponent("\(a.identity.id)-1000.json")
        try plant(Baseline(document: doc, writtenBy: a.identity.id, writtenAt: harness.clock.now(), contents: contents), at: lie)
        let report = try a.importPending(doc)
        #expect(report.quarantined.contains { $0.url == lie && $0.reason.contains("claims log 1000 of this device, which wrote 2") }, "\(report.quarantined)")
        #expect(try a.store(doc).read().sync.applied[a.identity.id] == 2)
        harness.clock.advance(1)
        try a.edit(doc, text: "one two three")
        #expect(container.logSequences(doc, device: a.identity.id) == [1, 2, 3])
        // (A peer takes a device's word about its own logs: the file goes before B looks.)
        try FileManager.default.removeItem(at: lie)
        try b.importPending(doc)
        #expect(try b.text(doc) == "one two three")

        // A peer's registry entry claiming A:1000 (C never applied a thing) is not believed
        // when A prunes behind B's baseline, and the pass names it.
        try a.replicator.register(applied: [doc: [a.identity.id: 3]])
        try b.replicator.register(applied: [doc: [a.identity.id: 3]])
        try c.replicator.register(applied: [doc: [a.identity.id: 1000]])
        try b.replicator.writeBaseline(doc, from: try b.store(doc))
        let registry = RegistrySnapshot(container)
        #expect(a.replicator.prune(doc, registry: registry) == 0)
        #expect(container.logSequences(doc, device: a.identity.id) == [1, 2, 3])
        #expect(registry.refusedClaims.map(\.url) == [container.deviceRecordURL(c.identity.id)])
        #expect(registry.refusedClaims.first?.reason.contains("claims log 1000") == true)
        #expect(container.verify().problems.contains { $0.url == container.deviceRecordURL(c.identity.id) && $0.reason.contains("claims log 1000") })
        // Once C says what it has, A prunes what everyone has.
        try c.importPending(doc)
        try c.replicator.register(applied: [doc: try c.store(doc).read().sync.applied])
        #expect(a.replicator.prune(doc, registry: RegistrySnapshot(container)) == 3)
    }

    /// A device prunes only once its own registry entry says what it wrote: a device joining
    /// later believes a baseline's claim about pruned logs on that entry's word.
    @Test func aDeviceThatNeverRegisteredPrunesNothing() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B"), c = harness.device(3, "C")
        try a.create(doc, name: "Doc", text: "one", now: harness.clock.now())
        try b.importPending(doc)
        try b.replicator.register(applied: [doc: try b.store(doc).read().sync.applied])
        try b.replicator.writeBaseline(doc, from: try b.store(doc))
        let container = Container(root: harness.container)
        #expect(a.replicator.prune(doc, registry: RegistrySnapshot(container)) == 0)
        try a.replicator.register(applied: [doc: [a.identity.id: 1]])
        #expect(a.replicator.prune(doc, registry: RegistrySnapshot(container)) == 1)
        // B's baseline stands for A's pruned log on A's registry entry's word.
        let joined = try c.importPending(doc)
        #expect(joined.baselinesMerged == 1)
        #expect(try c.text(doc) == "one")
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

    /// A device whose replicator reads `clock` instead of the harness's.
    private func device(_ harness: SyncHarness, _ n: Int, _ name: String, clock: TestClock) -> SyncDevice {
        var device = harness.device(n, name)
        device.replicator = Replicator(container: Container(root: harness.container), device: device.identity, now: { clock.now() })
        return device
    }

    /// One wrong clock cuts no device off: a save stamped a year ahead is applied as written by a
    /// device whose clock is right and by one whose clock is a year behind; once the writer's clock
    /// is right its later saves follow at once (none waits behind the first), and every device
    /// ends with the same text.
    @Test func aSaveStampedAYearAheadIsAppliedAlikeByEveryDevice() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let year: TimeInterval = 365 * 86_400
        let aClock = TestClock(harness.clock.now().addingTimeInterval(year))
        let cClock = TestClock(harness.clock.now().addingTimeInterval(-year))
        let a = device(harness, 1, "A", clock: aClock), b = harness.device(2, "B"), c = device(harness, 3, "C", clock: cClock)
        try b.create(doc, name: "Doc", text: "start", now: harness.clock.now())
        try a.importPending(doc)
        try a.edit(doc, text: "A, a year ahead")
        for reader in [b, c] {
            let report = try reader.importPending(doc)
            #expect(report.quarantined.isEmpty, "\(report.quarantined)")
            #expect(report.isComplete)
            #expect(try reader.text(doc) == "A, a year ahead")
        }
        // A's clock is set right: its next save is imported at once, though stamped after the first.
        aClock.advance(-year + 60)
        try a.edit(doc, text: "A, clock right")
        for reader in [b, c] {
            let report = try reader.importPending(doc)
            #expect(report.imported.count == 1 && report.isComplete)
            #expect(try reader.text(doc) == "A, clock right")
        }
        // A save made after seeing A's wins everywhere, whatever its maker's clock says.
        try c.edit(doc, text: "C, a year behind")
        for device in [a, b] { try device.importPending(doc) }
        #expect(try [a, b, c].map { try $0.text(doc) } == Array(repeating: "C, a year behind", count: 3))
    }

    /// A stamp past the latest wall any device writes is read as that wall by every reader alike
    /// (nothing waits, nothing wraps), and later saves still win over it.
    @Test func aStampPastTheLatestWallIsReadAlikeAndCannotWrapTheCounter() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        let late = device(harness, 3, "C", clock: TestClock(harness.clock.now().addingTimeInterval(-3 * 365 * 86_400)))
        try a.create(doc, name: "Doc", text: "start", now: harness.clock.now())
        try b.importPending(doc)
        try late.importPending(doc)
        let log = TransactionLog(
            document: doc, device: a.identity.id, sequence: 2, stamp: Stamp(wall: .max - 5, counter: .max, device: a.identity.id),
            committedAt: harness.clock.now(), deviceName: "A",
            changes: [LoggedChange(op: .update, id: ObjectID("text-\(doc)"), entity: Entity.textEntry, attributes: ["text": .string("from the future")])])
        let container = Container(root: harness.container)
        _ = try container.writeLog(log.encoded(), document: doc, device: a.identity.id, sequence: 2)
        let read = try container.readLog(doc, device: a.identity.id, sequence: 2)
        #expect(read.stamp == Stamp(wall: ContainerBounds.maximumWall, counter: 0, device: a.identity.id))
        for reader in [b, late] {
            let report = try reader.importPending(doc)
            #expect(report.imported.count == 1 && report.quarantined.isEmpty)
            #expect(try reader.text(doc) == "from the future")
        }
        // B's own saves go on, and win on every device.
        harness.clock.advance(1)
        try b.edit(doc, text: "B's save")
        try late.importPending(doc)
        #expect(try b.text(doc) == "B's save")
        #expect(try late.text(doc) == "B's save")

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
