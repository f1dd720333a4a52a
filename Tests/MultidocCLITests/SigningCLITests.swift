import Foundation
import Testing
import TestSupport

/// A signed and an encrypted container as users run them: `container upgrade --sign`,
/// `device list`, `device admit`, `device remove`, `container upgrade --encrypt`,
/// `container unlock`, on both backends.
@Suite(.serialized, .offThePool) struct SigningCLITests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("cli-sign") }

    func state(of device: String, on root: String) throws -> String? {
        let entries = try #require(try deviceList(on: root)["devices"] as? [[String: Any]])
        return entries.first { $0["fingerprint"] as? String == device }?["state"] as? String
    }

    @Test(arguments: ["sqlite", "json"])
    func admissionAndRemovalThroughTheCLI(store: String) throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--store", store], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "one"], root: rootA).status == 0)
        #expect(try notesText(on: rootB) == "one")

        let signing = try multidoc(["container", "upgrade", "--sign"], root: rootA)
        #expect(signing.status == 0, "\(signing.stderr)")
        #expect(signing.stdout.contains("signed"))
        let fingerprintB = try #require(try deviceList(on: rootB)["thisFingerprint"] as? String)

        // B is not admitted: it says so, and what it saves waits.
        let waiting = try multidoc(["edit", "Notes", "--append", " two"], root: rootB)
        #expect(waiting.status == 0, "\(waiting.stderr)")
        #expect(waiting.stderr.contains("not admitted"), "\(waiting.stderr)")
        let refused = try multidoc(["sync"], root: rootA)
        #expect(refused.stderr.contains("not admitted"), "\(refused.stderr)")
        #expect(try notesText(on: rootA) == "one")
        #expect(try state(of: fingerprintB, on: rootA) == "asks to join")

        // A wrong fingerprint admits nobody; the right one admits B, and what B saved arrives.
        let wrong = try multidoc(["device", "admit", "0000-0000-0000-0000"], root: rootA)
        #expect(wrong.status == 15, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("no device asking to join"), "\(wrong.stderr)")
        let admit = try multidoc(["device", "admit", fingerprintB], root: rootA)
        #expect(admit.status == 0, "\(admit.stderr)")
        #expect(try state(of: fingerprintB, on: rootA) == "admitted")
        #expect(try notesText(on: rootA) == "one two")
        #expect(try multidoc(["edit", "Notes", "--append", " three"], root: rootB).status == 0)
        #expect(try notesText(on: rootA) == "one two three")

        // Removed, B keeps its key, but nothing it signs from now on is taken.
        let remove = try multidoc(["device", "remove", fingerprintB], root: rootA)
        #expect(remove.status == 0, "\(remove.stderr)")
        #expect(try multidoc(["edit", "Notes", "--append", " four"], root: rootB).status == 0)
        #expect(try notesText(on: rootA) == "one two three")
        #expect(try state(of: fingerprintB, on: rootA) == "removed")
        let verify = try multidoc(["container", "verify"], root: rootA)
        #expect(verify.status == 9)
        #expect(verify.stdout.contains("removed from the container"), "\(verify.stdout)")
        // A device may not remove itself.
        let fingerprintA = try #require(try deviceList(on: rootA)["thisFingerprint"] as? String)
        #expect(try multidoc(["device", "remove", fingerprintA], root: rootA).status == 15)
    }

    /// A, root of a signed container holding "Notes", and B admitted to it. Returns B's fingerprint.
    func signedPair() throws -> String {
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "one"], root: rootA).status == 0)
        #expect(try notesText(on: rootB) == "one")
        #expect(try multidoc(["container", "upgrade", "--sign"], root: rootA).status == 0)
        // B asks to join on its next pass.
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        let fingerprintB = try #require(try deviceList(on: rootB)["thisFingerprint"] as? String)
        #expect(try multidoc(["device", "admit", fingerprintB], root: rootA).status == 0)
        return fingerprintB
    }

    /// The container identity `root` syncs with, as its device.json says.
    func containerID(of root: String) throws -> String {
        let device = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/device.json"))) as? [String: Any]
        return try #require(device?["containerID"] as? String)
    }

    func identityFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: container + "/identity").filter { $0.hasSuffix(".json") }.sorted()
    }

    @Test func anUnsignedIdentityFileStopsNoDeviceOfASignedContainer() throws {
        defer { folder.remove() }
        _ = try signedPair()
        let id = try containerID(of: rootA).lowercased()
        let forged = container + "/identity/00000000-0000-0000-0000-00000000bad0.json"
        for format in [2, 99] {
            let json = #"{"containerID":"\#(id)","format":\#(format),"replaces":["\#(id)"],"seededAt":0,"seededBy":"00000000-0000-0000-0000-00000000bad0"}"#
            try Data(json.utf8).write(to: URL(fileURLWithPath: forged))
            let files = try identityFiles()
            for root in [rootA, rootB] {
                let sync = try multidoc(["sync"], root: root)
                #expect(sync.status == 0, "format \(format): \(sync.stderr)")
                #expect(sync.stderr.contains("00000000bad0.json"), "the forged file is reported: \(sync.stderr)")
                #expect(try containerID(of: root).lowercased() == id)
            }
            let adopt = try multidoc(["container", "adopt"], root: rootB)
            #expect(adopt.status == 0, "\(adopt.stderr)")
            #expect(try identityFiles() == files, "a device seeded a new container")
            #expect(try containerID(of: rootB).lowercased() == id)
        }
        // Without any identity file, a device that saw the container signed stays with it.
        for name in try identityFiles() { try FileManager.default.removeItem(atPath: container + "/identity/" + name) }
        #expect(try multidoc(["sync"], root: rootB).status == 7)
        let adopt = try multidoc(["container", "adopt"], root: rootB)
        #expect(adopt.status != 0)
        #expect(adopt.stderr.contains("does not seed an unsigned one"), "\(adopt.stderr)")
        #expect(try identityFiles().isEmpty, "nothing is changed")
        #expect(try containerID(of: rootB).lowercased() == id)
    }

    @Test func admissionTakesTheWholeFingerprintAndNameClashesAreFlagged() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        #expect(try multidoc(["container", "upgrade", "--sign"], root: rootA).status == 0)
        let fingerprintB = try #require(try deviceList(on: rootB)["thisFingerprint"] as? String)
        // Both roots carry this host's name: B asks to join under the root's name.
        let entries = try #require(try deviceList(on: rootA)["devices"] as? [[String: Any]])
        let request = try #require(entries.first { $0["fingerprint"] as? String == fingerprintB })
        #expect((request["warning"] as? String)?.contains("admitted device") == true, "\(request)")
        let listed = try multidoc(["device", "list"], root: rootA)
        #expect(listed.stdout.contains("careful"), "\(listed.stdout)")
        for short in [String(fingerprintB.prefix(4)), String(fingerprintB.prefix(14))] {
            let admit = try multidoc(["device", "admit", short], root: rootA)
            #expect(admit.status == 15, "\(admit.stderr)")
            #expect(admit.stderr.contains("whole fingerprint"), "\(admit.stderr)")
            #expect(try state(of: fingerprintB, on: rootA) == "asks to join")
        }
        #expect(try multidoc(["device", "admit", fingerprintB.replacingOccurrences(of: "-", with: "")], root: rootA).status == 0)
        #expect(try state(of: fingerprintB, on: rootA) == "admitted")
    }

    @Test func junkAtADevicesNextLogStallsNoSave() throws {
        defer { folder.remove() }
        _ = try signedPair()
        #expect(try multidoc(["edit", "Notes", "--append", " two"], root: rootB).status == 0)
        #expect(try notesText(on: rootA) == "one two")
        // Junk at each device's next log slot.
        let documents = try FileManager.default.contentsOfDirectory(atPath: container + "/documents").filter { !$0.hasPrefix(".") }
        let logs = container + "/documents/" + (try #require(documents.first)) + "/logs"
        for device in try FileManager.default.contentsOfDirectory(atPath: logs) where !device.hasPrefix(".") {
            let names = try FileManager.default.contentsOfDirectory(atPath: logs + "/" + device).filter { $0.hasSuffix(".log") && !$0.hasPrefix(".") }
            guard let last = names.compactMap({ UInt64($0.dropLast(4)) }).max() else { continue }
            let next = String(repeating: "0", count: 16 - String(last + 1).count) + String(last + 1) + ".log"
            try Data("junk".utf8).write(to: URL(fileURLWithPath: logs + "/" + device + "/" + next))
        }
        let a = try multidoc(["edit", "Notes", "--append", " three"], root: rootA)
        #expect(a.status == 0, "\(a.stderr)")
        let b = try multidoc(["edit", "Notes", "--append", " four"], root: rootB)
        #expect(b.status == 0, "\(b.stderr)")
        #expect(try notesText(on: rootA) == "one two three four")
        #expect(try notesText(on: rootB) == "one two three four")
        #expect(try multidoc(["edit", "Notes", "--append", " five"], root: rootA).status == 0)
        #expect(try notesText(on: rootB) == "one two three four five")
    }

    @Test(arguments: ["sqlite", "json"])
    func anEncryptedContainerNeedsThePassphrase(store: String) throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--store", store], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "the launch code is 1234"], root: rootA).status == 0)
        #expect(try notesText(on: rootB) == "the launch code is 1234")
        let passphraseFile = folder.appending("passphrase").path
        try Data("correct horse\n".utf8).write(to: URL(fileURLWithPath: passphraseFile))

        let encrypt = try multidoc(["container", "upgrade", "--encrypt", "--passphrase-file", passphraseFile], root: rootA)
        #expect(encrypt.status == 0, "\(encrypt.stderr)")
        #expect(encrypt.stdout.contains("encrypted"))
        let files = FileManager.default.enumerator(atPath: container)?.allObjects as? [String] ?? []
        for file in files {
            guard let data = FileManager.default.contents(atPath: container + "/" + file) else { continue }
            #expect(data.range(of: Data("launch code".utf8)) == nil, "\(file) holds the text in cleartext")
        }

        // B without the key is told so; a wrong passphrase changes nothing; the right one unlocks.
        let locked = try multidoc(["sync"], root: rootB)
        #expect(locked.stderr.contains("container unlock"), "\(locked.stderr)")
        let wrong = try ProductRunner.run(
            "multidoc", ["container", "unlock", "--root", rootB, "--container", container], environment: ["MULTIDOC_PASSPHRASE": "wrong horse"])
        #expect(wrong.status == 15, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("wrong passphrase"))
        let unlock = try multidoc(["container", "unlock", "--passphrase-file", passphraseFile], root: rootB)
        #expect(unlock.status == 0, "\(unlock.stderr)")
        // `container dump` shows a sealed file's header, never its content.
        let info = try #require(files.filter { $0.contains("/info-") }.sorted().first)
        let dump = try multidoc(["container", "dump", container + "/" + info])
        #expect(dump.status == 0, "\(dump.stderr)")
        #expect(dump.stdout.contains("sealed with the container key") && dump.stdout.contains("\"encrypted\" : true"), "\(dump.stdout)")
        let fingerprintB = try #require(try deviceList(on: rootB)["thisFingerprint"] as? String)
        #expect(try multidoc(["device", "admit", fingerprintB], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--append", " and B"], root: rootB).status == 0)
        #expect(try notesText(on: rootA) == "the launch code is 1234 and B")
        #expect(try notesText(on: rootB) == "the launch code is 1234 and B")
        // Every file is now signed by an admitted device (each re-signed its own): nothing to report.
        let verify = try multidoc(["container", "verify"], root: rootA)
        #expect(verify.status == 0, "\(verify.stdout)")
    }

    /// A removed device comes back as a new device with a key of its own: it asks to join under
    /// the new fingerprint, is admitted, and what it saves arrives. The root may not take a new
    /// identity (the container would be left without the device that admits the others).
    @Test func aRemovedDeviceComesBackWithANewIdentityAndIsAdmittedAgain() throws {
        defer { folder.remove() }
        let old = try signedPair()
        #expect(try multidoc(["device", "remove", old], root: rootA).status == 0)
        let renewed = try multidoc(["device", "new-identity", "--yes", "--json"], root: rootB)
        #expect(renewed.status == 0, "\(renewed.stderr)")
        let fingerprint = try #require((try json(renewed) as? [String: Any])?["fingerprint"] as? String)
        #expect(fingerprint != old)
        #expect(try deviceList(on: rootB)["thisFingerprint"] as? String == fingerprint)
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        #expect(try state(of: fingerprint, on: rootA) == "asks to join")
        #expect(try state(of: old, on: rootA) == "removed")
        let admit = try multidoc(["device", "admit", fingerprint], root: rootA)
        #expect(admit.status == 0, "\(admit.stderr)")
        #expect(try multidoc(["edit", "Notes", "--append", " back"], root: rootB).status == 0)
        #expect(try notesText(on: rootA) == "one back")

        let rootRenewed = try multidoc(["device", "new-identity", "--yes"], root: rootA)
        #expect(rootRenewed.status == 15, "\(rootRenewed.stderr)")
        #expect(rootRenewed.stderr.contains("as the root"), "\(rootRenewed.stderr)")
        #expect(try multidoc(["edit", "Notes", "--append", " still"], root: rootA).status == 0)
        #expect(try notesText(on: rootB) == "one back still")
    }

    /// A device key that cannot be read is named, with the way out, instead of a bare "none";
    /// a damaged device file says what to do too.
    @Test func aDamagedKeyOrDeviceFileIsNamedWithTheWayOut() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--device-name", "A"], root: rootA).status == 0)
        let key = URL(fileURLWithPath: rootA).appendingPathComponent("device.key")
        try Data("garbage".utf8).write(to: key)
        let list = try multidoc(["device", "list"], root: rootA)
        #expect(list.stdout.contains(key.path) && list.stdout.contains("move it aside"), "\(list.stdout)")
        let json = try #require(try self.json(try multidoc(["device", "list", "--json"], root: rootA)) as? [String: Any])
        #expect((json["keyProblem"] as? String)?.contains("device key unusable") == true, "\(json)")
        try FileManager.default.removeItem(at: key)
        #expect(try deviceList(on: rootA)["keyProblem"] == nil)

        try Data("{bad".utf8).write(to: URL(fileURLWithPath: rootA).appendingPathComponent("device.json"))
        let damaged = try multidoc(["list"], root: rootA)
        #expect(damaged.status != 0)
        #expect(damaged.stderr.contains("from a backup") && damaged.stderr.contains("move it aside"), "\(damaged.stderr)")
    }
}
