import Crypto
import Foundation
import Model
import Storage
@testable import Sync
import Testing
import TestSupport

/// A signed (and encrypted) container: only admitted devices write (Docs/SECURITY.md). Every
/// forgery here is well-formed and signed, by a key that is not admitted, under another name,
/// by a removed device, or sealed with another key: none is ever applied, and each is reported
/// with its path, its claimed writer and why.
@Suite struct SigningTests {
    let doc = DocumentID(Fixed.uuid(0xD0C))
    let other = DocumentID(Fixed.uuid(0xD0D))
    let containerID = Fixed.uuid(0xC0)
    let format = LogFormat(version: 2, container: Fixed.uuid(0xC0))
    static let passphrase = "correct horse battery staple"

    /// A signed container seeded and signed by A, B admitted by A. `encrypt`: sealed too.
    struct Signed {
        let harness: SyncHarness
        let a: SyncDevice
        let b: SyncDevice
        let root: SigningRoot
    }

    func signed(_ backend: SyncBackend, encrypt: Bool = false) throws -> Signed {
        let harness = try SyncHarness(backend)
        let a = harness.device(1, "A", format: format, keys: ContainerKeys(device: Fixed.device(1), key: .generate()))
        let b = harness.device(2, "B", format: format, keys: ContainerKeys(device: Fixed.device(2), key: .generate()))
        _ = try a.replicator.container.checkIdentity(
            remembered: nil, canSeed: { true }, device: a.identity.id, now: harness.clock.now(), newID: containerID)
        let root = try a.replicator.container.sign(container: containerID, now: harness.clock.now())
        if encrypt { _ = try a.replicator.container.encrypt(passphrase: Self.passphrase, now: harness.clock.now(), costLog2: 10) }
        try a.replicator.register(applied: [:])
        // B sees the container signed, asks to join (its registry entry), and A admits it.
        #expect(b.replicator.container.loadTrust(container: containerID, remembered: nil).root == root)
        if encrypt { #expect(try b.replicator.container.unlock(passphrase: Self.passphrase)) }
        try b.replicator.register(applied: [:])
        let request = try #require(a.replicator.container.joinRequests().first)
        #expect(request.device == b.identity.id)
        #expect(request.fingerprint == (try b.replicator.container.keys?.signingKey().fingerprint))
        try a.replicator.container.writeAdmission(admit: [AdmittedDevice(device: request.device, key: request.key)], remove: [])
        b.replicator.container.loadTrust(container: containerID, remembered: root)
        #expect(b.replicator.container.keys?.policy.admitted[b.identity.id] != nil)
        #expect(a.replicator.container.joinRequests().isEmpty)
        return Signed(harness: harness, a: a, b: b, root: root)
    }

    /// A device whose key nobody admitted, that knows the container's root (anyone can read it).
    func stranger(_ signed: Signed, _ n: Int = 9) -> SyncDevice {
        let keys = ContainerKeys(device: Fixed.device(n), key: .generate())
        keys.setPolicy(ContainerPolicy(root: signed.root))
        return signed.harness.device(n, "Stranger\(n)", format: format, keys: keys)
    }

    func text(_ document: DocumentID, _ value: String) -> [Change] {
        [.insert(ObjectID("text-\(document)"), entity: Entity.textEntry, attributes: ["text": .string(value)])]
    }

    @Test(arguments: [SyncBackend.sqlite, .json])
    func savesOfAdmittedDevicesTravelAndEveryFileIsSigned(backend: SyncBackend) throws {
        let signed = try signed(backend)
        defer { signed.harness.folder.remove() }
        try signed.a.create(doc, name: "Plans", text: "from A", now: signed.harness.clock.now())
        try signed.b.importPending(doc)
        #expect(try signed.b.text(doc) == "from A")
        try signed.b.edit(doc, text: "from A and B")
        try signed.a.importPending(doc)
        #expect(try signed.a.text(doc) == "from A and B")
        // Every file but the identity file written before signing is a signed envelope.
        let files = FileManager.default.enumerator(at: signed.harness.container, includingPropertiesForKeys: [.isRegularFileKey])?
            .compactMap { $0 as? URL }.filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true } ?? []
        #expect(files.count >= 8)
        for file in files where file.path.contains("/documents/") || file.path.contains("/devices/") || file.lastPathComponent.hasPrefix("admitted.") {
            let envelope = try ContainerEnvelope(decoding: Array(try Data(contentsOf: file)), maximumPayload: 1 << 20)
            #expect(envelope.isSigned, "\(file.path) is not signed")
        }
    }

    @Test(arguments: [SyncBackend.sqlite, .json])
    func forgedLogTombstoneBaselineAndInfoFromAKeyNotAdmittedAreNeverApplied(backend: SyncBackend) throws {
        let signed = try signed(backend)
        defer { signed.harness.folder.remove() }
        try signed.a.create(doc, name: "Plans", text: "from A", now: signed.harness.clock.now())
        let stranger = stranger(signed)
        try stranger.replicator.register(applied: [:])
        // A log rewriting the text, a baseline claiming everything, an info file and a tombstone.
        try stranger.save(doc, text(doc, "forged"))
        let store = try stranger.store(doc)
        try stranger.replicator.writeBaseline(doc, from: store)
        try stranger.replicator.publish(
            DocumentInfo(document: other, name: try DocumentName("Forged"), createdBy: stranger.identity.id, createdByName: "Stranger",
                         createdAt: signed.harness.clock.now(), store: backend.kind), store: store, baseline: false)
        store.close()
        let container = signed.b.replicator.container
        try stranger.replicator.container.writeJSON(
            DocumentTombstone(document: doc, deletedBy: stranger.identity.id, deletedAt: signed.harness.clock.now()),
            to: container.tombstoneURL(doc, device: stranger.identity.id))

        let report = try signed.b.importPending(doc)
        #expect(try signed.b.text(doc) == "from A")
        let refusedLog = report.quarantined.first { $0.url.path.contains("/logs/\(stranger.identity.id)/") }
        #expect(refusedLog?.reason.contains("not admitted") == true, "\(report.quarantined)")
        #expect(refusedLog?.reason.contains(stranger.identity.id.description) == true, "the report names the claimed writer")
        #expect(!container.baselines(doc).contains { $0.baseline.writtenBy == stranger.identity.id })
        #expect(container.infos(other).isEmpty)
        let tombstones = container.applyTombstones()
        #expect(!tombstones.deleted.contains(doc))
        #expect(tombstones.problems.contains { $0.url.lastPathComponent.hasPrefix(doc.description) && $0.reason.contains("not admitted") })
        #expect(FileManager.default.fileExists(atPath: container.documentDirectory(doc).path), "a forged tombstone removed the document")
        // A device joining later still finds the document: a forged tombstone's name hides nothing.
        let found = container.discover(known: [], only: nil, inForce: [containerID], deleted: tombstones.deleted)
        #expect(found.found.map(\.document) == [doc])
        // The stranger never counts for pruning: its registry entry is a request to join, not a record.
        #expect(!container.deviceRecords().contains { $0.device == stranger.identity.id })
        #expect(container.joinRequests().contains { $0.device == stranger.identity.id })
    }

    @Test(arguments: [SyncBackend.sqlite, .json])
    func aSignedFileCopiedUnderAnotherNameIsRefused(backend: SyncBackend) throws {
        let signed = try signed(backend)
        defer { signed.harness.folder.remove() }
        let a = signed.a, b = signed.b
        try a.create(doc, name: "Plans", text: "one", now: signed.harness.clock.now())
        try a.create(other, name: "Other", text: "other", now: signed.harness.clock.now())
        let container = b.replicator.container
        let log1 = container.logURL(doc, device: a.identity.id, sequence: 1)
        // Replayed as A's next log of the same document, as A's log of another document, as B's.
        let replays = [
            container.logURL(doc, device: a.identity.id, sequence: 2),
            container.logURL(other, device: a.identity.id, sequence: 2),
            container.logURL(doc, device: b.identity.id, sequence: 1),
        ]
        for url in replays {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: log1, to: url)
        }
        // A's info file replayed as the other document's, under B's name.
        let infoCopy = container.infoURL(other, device: b.identity.id)
        try FileManager.default.copyItem(at: container.infoURL(doc, device: a.identity.id), to: infoCopy)

        let first = try b.importPending(doc)
        let second = try b.importPending(other)
        let reasons = (first.quarantined + second.quarantined).map(\.reason)
        #expect(reasons.contains { $0.contains("claims sequence 1 but is named 2") }, "\(reasons)")
        #expect(reasons.contains { $0.contains("names document") }, "\(reasons)")
        #expect(reasons.contains { $0.contains("claims device") }, "\(reasons)")
        #expect(try b.text(doc) == "one")
        #expect(try b.text(other) == "other")
        #expect(container.infos(other).map(\.name.rawValue) == ["Other"])
    }

    @Test(arguments: [SyncBackend.sqlite, .json])
    func aRemovedDevicesLaterFilesAreRefusedWhateverTheyClaim(backend: SyncBackend) throws {
        let signed = try signed(backend)
        defer { signed.harness.folder.remove() }
        let a = signed.a, b = signed.b
        try a.create(doc, name: "Plans", text: "one", now: signed.harness.clock.now())
        try b.importPending(doc)
        try b.edit(doc, text: "one two")
        try a.importPending(doc)
        #expect(try a.text(doc) == "one two")
        // A removes B, keeping what it had of B's: log 1.
        let bKey = try #require(a.replicator.container.keys?.policy.admitted[b.identity.id])
        try a.replicator.container.writeAdmission(
            admit: [], remove: [Removal(device: b.identity.id, key: bKey.key, logs: [doc: 1], admissions: 0)])
        #expect(a.replicator.container.keys?.policy.admitted[b.identity.id] == nil)
        // B, still holding its key, saves again and tries to admit a friend.
        try b.edit(doc, text: "one two three")
        let friend = ContainerKeys(device: Fixed.device(7), key: .generate())
        try b.replicator.container.writeAdmission(
            admit: [AdmittedDevice(device: Fixed.device(7), key: Data(try friend.signingKey().publicKey))], remove: [])
        let report = try a.importPending(doc)
        #expect(try a.text(doc) == "one two")
        #expect(report.quarantined.contains { $0.reason.contains("removed") && $0.reason.contains(b.identity.id.description) }, "\(report.quarantined)")
        a.replicator.container.loadTrust(container: containerID, remembered: signed.root)
        #expect(a.replicator.container.keys?.policy.admitted[Fixed.device(7)] == nil, "a removed device admitted a friend")

        // A device admitted later takes B's log 1 (written before the removal) and not log 2.
        let c = signed.harness.device(3, "C", format: format, keys: ContainerKeys(device: Fixed.device(3), key: .generate()))
        c.replicator.container.loadTrust(container: containerID, remembered: nil)
        try c.replicator.register(applied: [:])
        let request = try #require(a.replicator.container.joinRequests().first { $0.device == c.identity.id })
        try a.replicator.container.writeAdmission(admit: [AdmittedDevice(device: request.device, key: request.key)], remove: [])
        c.replicator.container.loadTrust(container: containerID, remembered: signed.root)
        try c.importPending(doc)
        #expect(try c.text(doc) == "one two")
    }

    @Test(arguments: [SyncBackend.sqlite, .json])
    func anEncryptedContainerHidesContentAndRefusesWhatItsKeyDoesNotOpen(backend: SyncBackend) throws {
        let signed = try signed(backend, encrypt: true)
        defer { signed.harness.folder.remove() }
        let a = signed.a, b = signed.b
        try a.create(doc, name: "Secret Plans", text: "the launch code is 1234", now: signed.harness.clock.now())
        try b.importPending(doc)
        #expect(try b.text(doc) == "the launch code is 1234")
        // No name or text in cleartext anywhere in the container.
        let files = FileManager.default.enumerator(at: signed.harness.container, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        for file in files {
            guard let data = try? Data(contentsOf: file) else { continue }
            #expect(data.range(of: Data("launch code".utf8)) == nil, "\(file.path) holds the text in cleartext")
            #expect(data.range(of: Data("Secret Plans".utf8)) == nil, "\(file.path) holds the name in cleartext")
        }
        // Tampered ciphertext, its checksum made again (anyone can): the signature no longer holds.
        try a.edit(doc, text: "the launch code is 5678")
        let url = a.replicator.container.logURL(doc, device: a.identity.id, sequence: 2)
        var bytes = Array(try Data(contentsOf: url))
        let checksumAt = bytes.count - ContainerEnvelope.signatureLength - ContainerEnvelope.checksumLength
        bytes[checksumAt - 8] ^= 0x01
        bytes.replaceSubrange(checksumAt..<(checksumAt + ContainerEnvelope.checksumLength), with: ContainerEnvelope.checksum(bytes[..<checksumAt]))
        try Data(bytes).write(to: url)
        let tampered = try b.importPending(doc)
        #expect(tampered.quarantined.contains { $0.reason.contains("bad signature") }, "\(tampered.quarantined)")
        // Damaged without a new checksum: named as damage, not as a forgery.
        bytes[checksumAt - 8] ^= 0x02
        try Data(bytes).write(to: url)
        let damaged = try b.importPending(doc)
        #expect(damaged.quarantined.contains { $0.reason.contains("damaged: checksum mismatch") }, "\(damaged.quarantined)")
        #expect(try b.text(doc) == "the launch code is 1234")
        // An admitted device sealing with another key: signed correctly, refused all the same.
        try #require(b.replicator.container.keys).remember(SymmetricKey(size: .bits256), for: containerID)
        try b.edit(doc, text: "sealed with the wrong key")
        let wrongKey = try a.importPending(doc)
        #expect(wrongKey.quarantined.contains { $0.reason.contains("does not open with the container key") }, "\(wrongKey.quarantined)")
        #expect(try a.text(doc) == "the launch code is 5678")
    }

    @Test(arguments: [SyncBackend.sqlite, .json])
    func aWrongPassphraseOpensNothingAndWritesNothing(backend: SyncBackend) throws {
        let signed = try signed(backend, encrypt: true)
        defer { signed.harness.folder.remove() }
        try signed.a.create(doc, name: "Plans", text: "secret", now: signed.harness.clock.now())
        let c = signed.harness.device(3, "C", format: format, keys: ContainerKeys(device: Fixed.device(3), key: .generate()))
        c.replicator.container.loadTrust(container: containerID, remembered: nil)
        #expect(throws: SyncError.self) { try c.replicator.container.unlock(passphrase: "wrong horse") }
        #expect(!c.replicator.container.holdsContainerKey)
        let report = try c.importPending(doc)
        #expect(try c.text(doc) == nil)
        #expect(report.quarantined.contains { $0.reason.contains("does not hold the container key") }, "\(report.quarantined)")
        #expect(throws: SyncError.self) { try c.save(doc, text(doc, "from C")) }
        #expect(throws: SyncError.self) { try c.replicator.register(applied: [:]) }
        #expect(try c.replicator.container.unlock(passphrase: Self.passphrase))
        try c.importPending(doc)
        #expect(try c.text(doc) == "secret")
    }

    @Test func plantedTrustRecordsCrashNothing() throws {
        let signed = try signed(.memory)
        defer { signed.harness.folder.remove() }
        let container = signed.a.replicator.container
        // A name numbered at the very end, garbage, a huge file, a folder: none is taken, and none
        // stops the next admission.
        for (name, bytes) in [
            ("admitted.\(signed.a.identity.id).\(UInt64.max)", [UInt8](repeating: 0, count: 10)),
            ("admitted.\(signed.a.identity.id).7", Array("MDC2 garbage".utf8)),
            ("signing.\(Fixed.device(9))", [UInt8](repeating: 0xFF, count: 100_000)),
            ("encryption.\(Fixed.device(9))", Array("{}".utf8)),
        ] {
            try Data(bytes).write(to: container.identityDirectory.appendingPathComponent(name))
        }
        try FileManager.default.createDirectory(at: container.identityDirectory.appendingPathComponent("admitted.x.1"), withIntermediateDirectories: true)
        let loaded = container.loadTrust(container: containerID, remembered: signed.root)
        #expect(loaded.root == signed.root)
        #expect(loaded.problems.count >= 3, "\(loaded.problems)")
        #expect(container.keys?.policy.admitted.count == 2)
        // A name numbered past what a device writes is not where the next record counts from.
        try container.writeAdmission(admit: [], remove: [])
    }

    @Test(arguments: [SyncBackend.sqlite, .json])
    func unsignedFilesInASignedContainerAreRefused(backend: SyncBackend) throws {
        let signed = try signed(backend)
        defer { signed.harness.folder.remove() }
        try signed.a.create(doc, name: "Plans", text: "one", now: signed.harness.clock.now())
        // A device that does not sign (an old build, or a forger without a key) writes format 1.
        let unsigned = signed.harness.device(2, "B-unsigned", format: .version1)
        try unsigned.save(doc, text(doc, "unsigned"))
        try unsigned.replicator.container.writeJSON(
            DocumentTombstone(document: doc, deletedBy: signed.b.identity.id, deletedAt: signed.harness.clock.now()),
            to: unsigned.replicator.container.tombstoneURL(doc, device: signed.b.identity.id))
        let report = try signed.a.importPending(doc)
        #expect(report.quarantined.contains { $0.reason.contains("unsigned") }, "\(report.quarantined)")
        #expect(try signed.a.text(doc) == "one")
        #expect(!signed.a.replicator.container.applyTombstones().deleted.contains(doc))
        // An unsigned identity file cannot take the election from the signed container.
        try unsigned.replicator.container.writeJSON(
            ContainerIdentity(containerID: Fixed.uuid(0x01), seededBy: Fixed.device(2), seededAt: signed.harness.clock.now()),
            to: signed.a.replicator.container.identityDirectory.appendingPathComponent("\(Fixed.device(2)).json"))
        #expect(try signed.a.replicator.container.identity()?.containerID == containerID)
    }
}
