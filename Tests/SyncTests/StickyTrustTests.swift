import Foundation
import Model
import Storage
@testable import Sync
import Testing
import TestSupport

/// Trust that sticks (Docs/SECURITY.md, "What a writer without a key cannot do"): what a writer
/// without an admitted key puts in the folder neither replaces a signed container, nor stops
/// its devices, nor stalls a device's saves, nor stops its root from admitting.
extension SigningTests {
    /// Writes `bytes` at `url` as a writer into the folder does (no key, no checks).
    func plant(_ bytes: some DataProtocol, at url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }

    /// An identity file as a writer without a key writes it: plain JSON.
    func unsignedIdentity(_ identity: ContainerIdentity) throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return try encoder.encode(identity)
    }

    /// Every identity file (`identity/*.json`) in the container.
    func identityFiles(_ container: Container) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: container.identityDirectory.path).filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test(arguments: [Int?.none, 99])
    func anUnsignedIdentityFileReplacingASignedContainerIsPassedOver(format: Int?) throws {
        let signed = try signed(.memory)
        defer { signed.harness.folder.remove() }
        let b = signed.b, container = b.replicator.container
        let forged = container.identityDirectory.appendingPathComponent("\(Fixed.device(9)).json")
        try plant(try unsignedIdentity(ContainerIdentity(
            format: format ?? Container.formatVersion, containerID: containerID, seededBy: Fixed.device(9),
            seededAt: signed.harness.clock.now(), replaces: [containerID])), at: forged)
        let before = try identityFiles(container)
        for device in [signed.a, b] {
            let outcome = try device.replicator.container.checkIdentity(
                remembered: containerID, canSeed: { true }, device: device.identity.id, now: signed.harness.clock.now(), newID: Fixed.uuid(0xBAD))
            guard case .agreed(let current, _, _) = outcome.check else {
                Issue.record("the signed container lost the election: \(outcome.check)")
                continue
            }
            #expect(current == containerID)
            #expect(outcome.passedOver.contains { $0.url.lastPathComponent == forged.lastPathComponent }, "\(outcome.passedOver)")
        }
        #expect(try identityFiles(container) == before, "a device seeded a new container")
        // Adopting changes nothing either: the signed container is the one in force.
        let adopted = try container.adopt(replacing: containerID, device: b.identity.id, now: signed.harness.clock.now(), newID: Fixed.uuid(0xBAD))
        #expect(adopted.identity.containerID == containerID)
        #expect(try identityFiles(container) == before)
    }

    @Test func aDeviceThatSawTheContainerSignedSeedsNoUnsignedOneInItsPlace() throws {
        let signed = try signed(.memory)
        defer { signed.harness.folder.remove() }
        let b = signed.b, container = b.replicator.container
        // A writer removes the identity files: the folder looks never seeded.
        for name in try identityFiles(container) { try FileManager.default.removeItem(at: container.identityDirectory.appendingPathComponent(name)) }
        let outcome = try container.checkIdentity(
            remembered: containerID, canSeed: { true }, device: b.identity.id, now: signed.harness.clock.now(), newID: Fixed.uuid(0xBAD))
        guard case .changed(_, let found, _) = outcome.check else {
            Issue.record("seeded over a signed container: \(outcome.check)")
            return
        }
        #expect(found == nil)
        let refusal = #expect(throws: SyncError.self) {
            try container.adopt(replacing: containerID, device: b.identity.id, now: signed.harness.clock.now(), newID: Fixed.uuid(0xBAD))
        }
        #expect(refusal?.description.contains("does not seed an unsigned one") == true, "\(String(describing: refusal))")
        #expect(try identityFiles(container).isEmpty, "nothing is changed")
    }

    @Test func onlyTheRootResetsASignedContainerAndItsDevicesFollow() throws {
        let signed = try signed(.memory)
        defer { signed.harness.folder.remove() }
        let a = signed.a, b = signed.b
        let before = try identityFiles(b.replicator.container)
        #expect(throws: SyncError.self) { try b.replicator.container.reset(device: b.identity.id, now: signed.harness.clock.now(), newID: Fixed.uuid(0xC1)) }
        #expect(try identityFiles(b.replicator.container) == before, "a device that is not the root reset the container")
        let reset = try a.replicator.container.reset(device: a.identity.id, now: signed.harness.clock.now(), newID: Fixed.uuid(0xC1))
        #expect(reset.replaces?.contains(containerID) == true)
        // B, which remembers the signed container, takes the root's reset and the new root.
        let outcome = try b.replicator.container.checkIdentity(
            remembered: containerID, canSeed: { true }, device: b.identity.id, now: signed.harness.clock.now(), newID: Fixed.uuid(0xBAD))
        guard case .changed(_, let found, _) = outcome.check else {
            Issue.record("the root's reset was not seen: \(outcome.check)")
            return
        }
        #expect(found == Fixed.uuid(0xC1))
        let loaded = b.replicator.container.loadTrust(container: Fixed.uuid(0xC1), remembered: signed.root)
        #expect(loaded.root?.key == signed.root.key)
        #expect(loaded.root?.container == Fixed.uuid(0xC1))
    }

    @Test(arguments: [SyncBackend.sqlite, .json])
    func aFileSquattingADevicesNextLogIsSteppedOverByWriterAndReaders(backend: SyncBackend) throws {
        let signed = try signed(backend)
        defer { signed.harness.folder.remove() }
        let a = signed.a, b = signed.b, container = a.replicator.container
        try a.create(doc, name: "Plans", text: "one", now: signed.harness.clock.now())
        // Junk at A's next slot, and a log signed by a key that is not A's at the one after.
        try plant(Array("MDC2 junk".utf8), at: container.logURL(doc, device: a.identity.id, sequence: 2))
        try a.edit(doc, text: "one two")
        #expect(container.hasLog(doc, device: a.identity.id, sequence: 3))
        let stranger = stranger(signed)
        try stranger.edit(doc, text: "forged")
        try FileManager.default.copyItem(
            at: container.logURL(doc, device: stranger.identity.id, sequence: 1), to: container.logURL(doc, device: a.identity.id, sequence: 4))
        let store = try a.store(doc)
        try a.replicator.commit([.update(ObjectID("text-\(doc)"), attributes: ["text": .string("one two three")])], document: doc, to: store, ship: true)
        let flushed = try a.replicator.flushReporting(doc, in: store)
        store.close()
        #expect(flushed.written.map(\.lastPathComponent) == [Container.logFileName(5)])
        #expect(flushed.steppedOver.map(\.url.lastPathComponent) == [Container.logFileName(4)], "\(flushed.steppedOver)")

        let report = try b.importPending(doc)
        #expect(try b.text(doc) == "one two three")
        #expect(report.gaps.isEmpty, "\(report.gaps)")
        let skipped = report.quarantined.filter { $0.url.path.contains("/logs/\(a.identity.id)/") }
        #expect(skipped.count == 2 && skipped.allSatisfy { $0.reason.contains("stepped over") }, "\(report.quarantined)")
        // The junk gone, a device reading from the start finds no gap either.
        try FileManager.default.removeItem(at: container.logURL(doc, device: a.identity.id, sequence: 2))
        let c = signed.harness.device(3, "C", format: format, keys: ContainerKeys(device: Fixed.device(3), key: .generate()))
        c.replicator.container.loadTrust(container: containerID, remembered: signed.root)
        let fresh = try c.importPending(doc)
        #expect(try c.text(doc) == "one two three", "\(fresh.quarantined) \(fresh.gaps)")
        #expect(fresh.gaps.isEmpty, "\(fresh.gaps)")
    }

    @Test func junkAdmissionNumbersDoNotStopTheRootFromAdmitting() throws {
        let signed = try signed(.memory)
        defer { signed.harness.folder.remove() }
        let a = signed.a, container = a.replicator.container
        for number in ["1099511627776", "\(Container.maximumAdmissionNumber)", "2", "3"] {
            try plant(Array("junk".utf8), at: container.identityDirectory.appendingPathComponent("admitted.\(a.identity.id).\(number)"))
        }
        let joiner = signed.harness.device(3, "C", format: format, keys: ContainerKeys(device: Fixed.device(3), key: .generate()))
        joiner.replicator.container.loadTrust(container: containerID, remembered: signed.root)
        try joiner.replicator.register(applied: [:])
        let request = try #require(container.joinRequests().first { $0.device == joiner.identity.id })
        try container.writeAdmission(admit: [AdmittedDevice(device: request.device, key: request.key)], remove: [])
        let loaded = container.loadTrust(container: containerID, remembered: signed.root)
        #expect(container.keys?.policy.admitted[joiner.identity.id] != nil)
        #expect(loaded.problems.contains { $0.url.lastPathComponent.hasSuffix(".1099511627776") && $0.reason.contains("outside") }, "\(loaded.problems)")
    }

    /// A device that synced before the container was encrypted may read the clear logs it could
    /// read then; a file merely named like a far later log (planted before it learned of the
    /// encryption) does not stretch that to logs nobody has written yet.
    @Test func theClearLogsADeviceMayReadStopAtTheLogsItCouldRead() throws {
        let signed = try signed(.memory)
        defer { signed.harness.folder.remove() }
        let a = signed.a, b = signed.b, container = b.replicator.container
        try a.create(doc, name: "Plans", text: "one", now: signed.harness.clock.now())
        try plant(Array("MDC2 junk".utf8), at: container.logURL(doc, device: a.identity.id, sequence: 99_999))
        // B learns the root and what is there, then the encryption.
        container.loadTrust(container: containerID, remembered: signed.root)
        _ = try a.replicator.container.encrypt(passphrase: Self.passphrase, now: signed.harness.clock.now(), costLog2: 10)
        container.loadTrust(container: containerID, remembered: signed.root)
        let floor = try #require(container.keys?.policy.clearLogs[LearnedTrust.clearLogKey(doc.uuid, a.identity.id)])
        #expect(floor == 1, "the floor stops at A's one readable log, not at the planted name: \(floor)")
    }
}
