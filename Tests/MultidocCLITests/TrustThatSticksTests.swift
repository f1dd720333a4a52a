import Foundation
import Model
@testable import Sync
import Testing
import Text
import TestSupport

/// Trust that sticks (Docs/SECURITY.md): a removal, an encryption and a root stay what they were
/// whatever someone with write access to the folder does later. Real processes on one
/// container; the attacker's files are made by ``Forger``.
@Suite(.serialized, .offThePool) struct TrustThatSticksTests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("cli-trust") }

    var rootC: String { folder.appending("C").path }
    var rootD: String { folder.appending("D").path }
    var identity: String { container + "/identity" }

    func fingerprint(_ root: String) throws -> String { try #require(try deviceList(on: root)["thisFingerprint"] as? String) }

    /// Each device's state as `device list` on `root` shows it, by fingerprint.
    func states(on root: String) throws -> [String: String] {
        let entries = try #require(try deviceList(on: root)["devices"] as? [[String: Any]])
        var states: [String: String] = [:]
        for entry in entries {
            if let fingerprint = entry["fingerprint"] as? String, let state = entry["state"] as? String {
                states[fingerprint] = state.replacingOccurrences(of: "this device, ", with: "")
            }
        }
        return states
    }

    func containerID(of root: String) throws -> UUID {
        let device = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/device.json"))) as? [String: Any]
        return try #require((device?["containerID"] as? String).flatMap { UUID(uuidString: $0) })
    }

    func documentID(_ name: String, on root: String) throws -> DocumentID {
        let show = try multidoc(["show", name, "--json"], root: root)
        let object = try #require(try json(show) as? [String: Any])
        return try #require((object["uuid"] as? String).flatMap(DocumentID.init))
    }

    func names(_ folder: String) -> Set<String> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".") })
    }

    /// A, root of a signed container holding "Notes" ("one"), and B admitted. Returns A's and B's fingerprints.
    func signedPair() throws -> (a: String, b: String) {
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "one"], root: rootA).status == 0)
        #expect(try notesText(on: rootB) == "one")
        #expect(try multidoc(["container", "upgrade", "--sign"], root: rootA).status == 0)
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        let b = try fingerprint(rootB)
        #expect(try multidoc(["device", "admit", b], root: rootA).status == 0)
        return (try fingerprint(rootA), b)
    }

    /// `root` syncs (asking to join) and `admitter` admits it. Returns its first sync.
    @discardableResult
    func join(_ root: String, admittedBy admitter: String) throws -> ProductRunner.Result {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let first = try multidoc(["sync"], root: root)
        #expect(first.status == 0, "\(first.stderr)")
        let admit = try multidoc(["device", "admit", try fingerprint(root)], root: admitter)
        #expect(admit.status == 0, "\(admit.stderr)")
        return first
    }

    // 1. A removal can be undone without any key.

    @Test func aRemovalStaysWhenTheFolderIsPutBackAsItWas() throws {
        defer { folder.remove() }
        let (a, b) = try signedPair()
        #expect(try multidoc(["edit", "Notes", "--append", " two"], root: rootB).status == 0)
        #expect(try notesText(on: rootA) == "one two")
        let yesterday = folder.appending("identity-yesterday").path
        try FileManager.default.copyItem(atPath: identity, toPath: yesterday)
        #expect(try multidoc(["device", "remove", b], root: rootA).status == 0)
        let withRemoval = names(identity)
        #expect(try multidoc(["edit", "Notes", "--append", " evil"], root: rootB).status == 0)

        // Yesterday's identity/ put back: the removal record is gone.
        try FileManager.default.removeItem(atPath: identity)
        try FileManager.default.copyItem(atPath: yesterday, toPath: identity)
        #expect(try multidoc(["sync"], root: rootA).status == 0)
        #expect(try notesText(on: rootA) == "one two")
        #expect(try states(on: rootA)[b] == "removed")
        #expect(names(identity).isSuperset(of: withRemoval), "A writes back the records it accepted: \(names(identity))")

        // A device meeting the container now sees the removal too.
        let first = try join(rootC, admittedBy: rootA)
        #expect(first.stderr.contains("first contact") && first.stderr.contains(a), "\(first.stderr)")
        #expect(try notesText(on: rootC) == "one two")
        #expect(try states(on: rootC)[b] == "removed")
    }

    @Test func aFloodOfRecordsHidesNoRemoval() throws {
        defer { folder.remove() }
        let (_, b) = try signedPair()
        #expect(try multidoc(["device", "remove", b], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--append", " evil"], root: rootB).status == 0)
        // 4,100 junk records whose names sort between A's admission of B and its removal of B.
        let deviceA = try #require(names(identity).first { $0.hasPrefix("admitted.") }?.split(separator: ".")[1])
        for number in 10_000..<14_100 {
            try Data("junk".utf8).write(to: URL(fileURLWithPath: "\(identity)/admitted.\(deviceA).\(number)"))
        }
        let first = try join(rootC, admittedBy: rootA)
        #expect(first.stderr.contains("more trust records not taken"), "the flood is reported in one line: \(first.stderr.suffix(600))")
        #expect(first.stderr.split(separator: "\n").count < 60, "\(first.stderr.split(separator: "\n").count) lines")
        #expect(try states(on: rootC)[b] == "removed")
        #expect(try notesText(on: rootC) == "one")
        #expect(try notesText(on: rootA) == "one")
    }

    @Test func twoDevicesThatRemovedEachOtherAreDecidedAlikeWhateverLiesBeside() throws {
        defer { folder.remove() }
        let (_, b) = try signedPair()
        try join(rootC, admittedBy: rootA)
        let c = try fingerprint(rootC)
        // B removes C, and C removes B before it sees B's record.
        #expect(try multidoc(["device", "remove", c], root: rootB).status == 0)
        let deviceA = try deviceID(rootA)
        let bRecords = names(identity).filter { $0.hasPrefix("admitted.") && !$0.hasPrefix("admitted.\(deviceA)") }
        let aside = folder.appending("aside").path
        try FileManager.default.createDirectory(atPath: aside, withIntermediateDirectories: true)
        for name in bRecords { try FileManager.default.moveItem(atPath: "\(identity)/\(name)", toPath: "\(aside)/\(name)") }
        #expect(try multidoc(["device", "remove", b], root: rootC).status == 0)
        for name in bRecords { try FileManager.default.moveItem(atPath: "\(aside)/\(name)", toPath: "\(identity)/\(name)") }

        // Two newcomers, one before and one after a junk admission record (signed by a key
        // nobody admitted) is added, see the same: the senior remover's removal stands.
        try FileManager.default.createDirectory(atPath: rootD, withIntermediateDirectories: true)
        #expect(try multidoc(["sync"], root: rootD).status == 0)
        let before = try states(on: rootD)
        let stranger = Forger(container: container, device: DeviceID(UUID()))
        try stranger.admissionRecord(of: try containerID(of: rootA), number: 1, admit: [AdmittedDevice(device: stranger.device, key: stranger.publicKey)])
        let rootE = folder.appending("E").path
        try FileManager.default.createDirectory(atPath: rootE, withIntermediateDirectories: true)
        #expect(try multidoc(["sync"], root: rootE).status == 0)
        let after = try states(on: rootE)
        #expect(before[b] == after[b] && before[c] == after[c], "before \(before), after \(after)")
        #expect(before[b] == "admitted" && before[c] == "removed", "\(before)")
        let onA = try states(on: rootA)
        #expect(onA[b] == "admitted" && onA[c] == "removed", "\(onA)")
    }

    func deviceID(_ root: String) throws -> String {
        let device = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/device.json"))) as? [String: Any]
        return try #require(device?["id"] as? String)
    }

    // 2. A removed device still writes.

    @Test func aRemovedDeviceRewritesNothingItWroteBefore() throws {
        defer { folder.remove() }
        let (_, b) = try signedPair()
        // B admits C (its admission record 1), and saves " two" (its log 1 of Notes).
        try FileManager.default.createDirectory(atPath: rootC, withIntermediateDirectories: true)
        #expect(try multidoc(["sync"], root: rootC).status == 0)
        #expect(try multidoc(["device", "admit", try fingerprint(rootC)], root: rootB).status == 0)
        #expect(try multidoc(["edit", "Notes", "--append", " two"], root: rootB).status == 0)
        #expect(try notesText(on: rootA) == "one two")
        #expect(try multidoc(["device", "remove", b], root: rootA).status == 0)

        // With its old key, B rewrites its admission record to admit a key of its own, and its
        // log to say something else; the names and numbers are the ones it had.
        let thief = try Forger(container: container, stealingFrom: rootB)
        let id = try containerID(of: rootA)
        let accomplice = Forger(container: container, device: DeviceID(UUID()))
        let cKey = try Forger(container: container, stealingFrom: rootC)
        try thief.admissionRecord(of: id, number: 1, admit: [
            AdmittedDevice(device: cKey.device, key: cKey.publicKey), AdmittedDevice(device: accomplice.device, key: accomplice.publicKey)])
        let notes = try documentID("Notes", on: rootA)
        let logs = try #require(thief.container.logSequences(notes, device: thief.device).first)
        try thief.rewriteLog(of: id, document: notes, sequence: logs) { log in
            for index in log.changes.indices {
                log.changes[index].texts = log.changes[index].texts?.mapValues { operations in
                    operations.map { (operation: TextOperation) -> TextOperation in
                        guard case .insert(let original) = operation else { return operation }
                        var insertion = original
                        insertion.scalars = insertion.scalars.map { _ in "X" }
                        return .insert(insertion)
                    }
                }
            }
        }
        try join(rootD, admittedBy: rootA)
        for root in [rootA, rootD] {
            #expect(try states(on: root)[accomplice.fingerprint] == nil, "a key the removed device admitted after its removal is trusted")
            let shown = try notesText(on: root)
            #expect(shown?.contains("XXXX") == false, "the rewritten log was read: \(String(describing: shown))")
        }
        #expect(try notesText(on: rootA) == "one two")
    }

    // 3. Encryption can be switched off by deleting one file.

    @Test func encryptionStaysOnWhenItsRecordIsDeletedAndTheWritersDateCountsForNothing() throws {
        defer { folder.remove() }
        _ = try signedPair()
        let passphrase = folder.appending("passphrase").path
        try Data("correct horse\n".utf8).write(to: URL(fileURLWithPath: passphrase))
        #expect(try multidoc(["container", "upgrade", "--encrypt", "--passphrase-file", passphrase], root: rootA).status == 0)
        #expect(try multidoc(["container", "unlock", "--passphrase-file", passphrase], root: rootB).status == 0)
        let record = try #require(names(identity).first { $0.hasPrefix("encryption.") })
        try FileManager.default.removeItem(atPath: "\(identity)/\(record)")

        #expect(try multidoc(["edit", "Notes", "--append", " the vault code"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--append", " is 4711"], root: rootB).status == 0)
        #expect(try notesText(on: rootA) == "one the vault code is 4711")
        let files = FileManager.default.enumerator(atPath: container)?.allObjects as? [String] ?? []
        for file in files {
            guard let data = FileManager.default.contents(atPath: container + "/" + file) else { continue }
            // Whole phrases: a key or a signature in base64 may hold a short word by chance.
            #expect(data.range(of: Data("the vault code".utf8)) == nil && data.range(of: Data(" is 4711".utf8)) == nil, "\(file) holds text in the clear")
        }
        #expect(names(identity).contains(record), "the encryption record is written back")

        // C's key is admitted, and whoever took it holds no container key: a clear tombstone it
        // dates 1970 deletes nothing.
        try FileManager.default.createDirectory(atPath: rootC, withIntermediateDirectories: true)
        #expect(try multidoc(["container", "unlock", "--passphrase-file", passphrase], root: rootC).status == 0)
        try join(rootC, admittedBy: rootA)
        let forger = try Forger(container: container, stealingFrom: rootC)
        try forger.clearTombstone(of: try containerID(of: rootA), document: try documentID("Notes", on: rootA), writtenAt: 0)
        #expect(try multidoc(["sync"], root: rootA).status == 0)
        #expect(try notesText(on: rootA) == "one the vault code is 4711")
        #expect(try notesText(on: rootB) == "one the vault code is 4711")
    }

    // 5. Trust on first use can be captured.

    @Test func aSecondRootIsAnAlarmAndANewcomerWaitsForTheUser() throws {
        defer { folder.remove() }
        let (a, _) = try signedPair()
        let id = try containerID(of: rootA)
        // An attacker's signing record dated 1970, admitting copies of A's and B's keys.
        let attacker = Forger(container: container, device: DeviceID(UUID()))
        try attacker.signingRecord(of: id, signedAt: Date(timeIntervalSince1970: 0))
        let keyA = try Forger(container: container, stealingFrom: rootA), keyB = try Forger(container: container, stealingFrom: rootB)
        try attacker.admissionRecord(of: id, number: 1, admit: [
            AdmittedDevice(device: keyA.device, key: keyA.publicKey), AdmittedDevice(device: keyB.device, key: keyB.publicKey)])

        for root in [rootA, rootB] {
            let sync = try multidoc(["sync"], root: root)
            #expect(sync.status == 0, "\(sync.stderr)")
            #expect(sync.stderr.contains("another key") && sync.stderr.contains(attacker.fingerprint), "\(sync.stderr)")
        }
        // A device meeting the container now trusts neither root until told which.
        try FileManager.default.createDirectory(atPath: rootC, withIntermediateDirectories: true)
        let undecided = try multidoc(["sync"], root: rootC)
        #expect(undecided.status == 15, "\(undecided.stderr)")
        #expect(undecided.stderr.contains("container trust"), "\(undecided.stderr)")
        #expect(try multidoc(["container", "trust", attacker.fingerprint.prefix(9).description], root: rootC).status == 15)
        let trust = try multidoc(["container", "trust", a], root: rootC)
        #expect(trust.status == 0, "\(trust.stderr)")
        #expect(try multidoc(["device", "admit", try fingerprint(rootC)], root: rootA).status == 0)
        #expect(try notesText(on: rootC) == "one")
        #expect(try states(on: rootC)[attacker.fingerprint] == nil)

        // One told ahead (`init --expect-root`) needs no second step.
        let initD = try multidoc(["init", "--root", rootD, "--container", container, "--no-input", "--expect-root", a])
        #expect(initD.status == 0, "\(initD.stderr)")
        #expect(try multidoc(["sync"], root: rootD).status == 0)
        #expect(try states(on: rootD)[a] == "admitted (root)")
        // Expecting a root that signs nothing here: nothing is trusted.
        let rootE = folder.appending("E").path
        #expect(try multidoc(["init", "--root", rootE, "--container", container, "--no-input", "--expect-root", "0123456789abcdef"]).status == 0)
        #expect(try multidoc(["sync"], root: rootE).status == 15)
        #expect(try multidoc(["init", "--root", rootE, "--no-input", "--expect-root", "0123"]).status != 0)
    }

    // 8. What is withheld comes back or vanishes.

    @Test func aDeletedDocumentsFolderPutBackStaysDeletedAndAReplacedInfoFileIsWrittenAgain() throws {
        defer { folder.remove() }
        _ = try signedPair()
        #expect(try multidoc(["new", "Plans"], root: rootA).status == 0)
        #expect(try multidoc(["new", "Gone"], root: rootA).status == 0)
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        let gone = try documentID("Gone", on: rootA), plans = try documentID("Plans", on: rootA), notes = try documentID("Notes", on: rootA)
        let saved = folder.appending("gone-folder").path
        try FileManager.default.copyItem(atPath: "\(container)/documents/\(gone)", toPath: saved)
        #expect(try multidoc(["rm", "Gone"], root: rootA).status == 0)
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        // The tombstones go and the folder comes back; Plans' info file is replaced by Notes'.
        for name in names(container + "/tombstones") { try FileManager.default.removeItem(atPath: "\(container)/tombstones/\(name)") }
        try FileManager.default.copyItem(atPath: saved, toPath: "\(container)/documents/\(gone)")
        let deviceA = try deviceID(rootA)
        let plansInfo = "\(container)/documents/\(plans)/info-\(deviceA).json"
        try FileManager.default.removeItem(atPath: plansInfo)
        try FileManager.default.copyItem(atPath: "\(container)/documents/\(notes)/info-\(deviceA).json", toPath: plansInfo)

        // A, which made both, stays away: B, which holds them, puts things right.
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        try join(rootC, admittedBy: rootB)
        let listed = try multidoc(["list", "--json"], root: rootC)
        let rows = try #require(try json(listed) as? [[String: Any]])
        let listedNames = Set(rows.compactMap { $0["name"] as? String })
        #expect(listedNames == ["Notes", "Plans"], "\(listedNames)")
    }
}
