import Foundation
import Testing
import TestSupport

// The container through the CLI: refused, unlistable or wrong, reset, holding bad or lost files, shared by a copied root.
extension CLITests {
    @Test func aContainerOfAnUnknownFormatIsRefused() throws {
        defer { folder.remove() }
        let identity = folder.appending("container/identity")
        try FileManager.default.createDirectory(at: identity, withIntermediateDirectories: true)
        let future = #"{"containerID":"11111111-2222-3333-4444-555555555555","format":99,"seededAt":0,"seededBy":"11111111-2222-3333-4444-555555555555"}"#
        try Data(future.utf8).write(to: identity.appendingPathComponent("11111111-2222-3333-4444-555555555555.json"))
        let result = try multidoc(["container", "status"], root: rootA)
        #expect(result.status == 8)
        #expect(result.stderr.contains("format version 99"))
        // Every command that syncs refuses it too, and writes nothing into it.
        for arguments in [["list"], ["new", "Later"], ["sync"]] {
            let refused = try multidoc(arguments, root: rootA)
            #expect(refused.status == 8, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.contains("format version 99"), "\(arguments): \(refused.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appending("container/documents").path))
    }

    /// A container whose `identity/` cannot be listed (a file where the folder belongs, which
    /// stops root too; mode 000 does the same for other users) is not an empty container:
    /// nothing is seeded into it, and verify and sync fail with one line naming the folder.
    @Test func aContainerItCannotListIsNotTakenForAnEmptyOne() throws {
        defer { folder.remove() }
        let identity = folder.appending("container/identity")
        try Data("x".utf8).write(to: identity)
        for arguments in [["container", "verify"], ["sync"], ["sync", "--json"]] {
            let result = try multidoc(arguments, root: rootA)
            #expect(result.status == 7, "\(arguments): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("multidoc: error: \(identity.path): "), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("not a folder"), "\(arguments): \(result.stderr)")
        }
        #expect(try Data(contentsOf: identity) == Data("x".utf8))
    }

    /// `sync` that could not ship a save (a file where this device's log folder belongs, as a
    /// damaged or read-only container does to root; a full disk by RLIMIT_FSIZE) exits 10 and
    /// names the document in `--json`'s `unshipped`; once the container takes it, 0.
    @Test func syncFailsWhenSavesCouldNotBeShipped() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Doc"], root: rootA).status == 0)
        let documents = folder.appending("container/documents")
        let document = try #require(try FileManager.default.contentsOfDirectory(atPath: documents.path).first)
        let logs = documents.appendingPathComponent("\(document)/logs")
        let device = try #require(try FileManager.default.contentsOfDirectory(atPath: logs.path).first)
        let ownLogs = logs.appendingPathComponent(device)
        let aside = folder.appending("aside")
        try FileManager.default.moveItem(at: ownLogs, to: aside)
        try Data("x".utf8).write(to: ownLogs)
        #expect(try multidoc(["edit", "Doc", "--append", " more", "--fast-save", "off"], root: rootA).status == 0)
        let plain = try multidoc(["sync"], root: rootA)
        #expect(plain.status == 10, "\(plain.stdout) \(plain.stderr)")
        #expect(plain.stderr.contains("Doc's saves were not shipped"), "\(plain.stderr)")
        #expect(plain.stderr.contains("a file is where this folder belongs"), "\(plain.stderr)")
        let json = try multidoc(["sync", "--json"], root: rootA)
        #expect(json.status == 10)
        #expect((try self.json(json) as? [String: Any])?["unshipped"] as? [String] == ["Doc"], "\(json.stdout)")
        // A full disk: with the folder back, a log larger than the file-size limit cannot be
        // written (the edit's own pass could not ship it either).
        let big = String(repeating: "y", count: 96 * 1024)
        #expect(try multidoc(["edit", "Doc", "--append", big, "--fast-save", "off"], root: rootA).status == 0)
        try FileManager.default.removeItem(at: ownLogs)
        try FileManager.default.moveItem(at: aside, to: ownLogs)
        let full = try ProductRunner.run("multidoc", ["sync", "--json", "--root", rootA, "--container", container], fileSizeLimit: 64 * 1024)
        #expect(full.status == 10, "\(full.stderr)")
        #expect((try self.json(full) as? [String: Any])?["unshipped"] as? [String] == ["Doc"], "\(full.stdout)")
        // With room again: shipped, exit 0, nothing unshipped.
        let shipped = try multidoc(["sync", "--json"], root: rootA)
        #expect(shipped.status == 0, "\(shipped.stderr)")
        #expect((try self.json(shipped) as? [String: Any])?["unshipped"] as? [String] == [])
        let onB = try #require(try self.json(try multidoc(["show", "Doc", "--json"], root: rootB)) as? [String: Any])
        #expect((onB["text"] as? String)?.hasSuffix(big) == true)
    }

    /// A mistyped --container is refused for what it is, and detaches nothing: with the right
    /// one back, edits flow both ways again, including the one saved meanwhile.
    @Test func aWrongContainerDetachesNothing() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Shared", "--device-name", "A"], root: rootA).status == 0)
        // `sync` makes B's local copy (`list` would only preview it).
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        #expect(try multidoc(["list"], root: rootB).stdout.contains("Shared"))
        let wrong = folder.appending("wrong").path
        try FileManager.default.createDirectory(atPath: wrong, withIntermediateDirectories: true)
        let sync = try ProductRunner.run("multidoc", ["sync", "--root", rootB, "--container", wrong])
        #expect(sync.status == 7, "\(sync.stderr)")
        #expect(sync.stderr.contains("identity changed") && sync.stderr.contains("container adopt"), "\(sync.stderr)")
        let edit = try ProductRunner.run("multidoc", ["edit", "Shared", "--append", " meanwhile", "--root", rootB, "--container", wrong])
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: wrong)) ?? []).isEmpty, "nothing written into the wrong folder")
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        let show = try #require(try json(try multidoc(["show", "Shared", "--json"], root: rootA)) as? [String: Any])
        #expect((show["text"] as? String)?.hasSuffix(" meanwhile") == true)
        #expect(try multidoc(["edit", "Shared", "--append", " and on"], root: rootA).status == 0)
        let onB = try #require(try json(try multidoc(["show", "Shared", "--json"], root: rootB)) as? [String: Any])
        #expect((onB["text"] as? String)?.hasSuffix(" meanwhile and on") == true)
        #expect(onB["location"] as? String == "cloud")
    }

    @Test func aResetContainerIsAdoptedOnlyWhenTheUserSaysSo() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Before"], root: rootA).status == 0)
        #expect(try multidoc(["list"], root: rootB).stdout.contains("Before"))
        let reset = try multidoc(["container", "reset", "--yes"], root: rootA)
        #expect(reset.status == 0, "\(reset.stderr)")
        // A's document was in the old container: it is a local document now, not lost.
        let rowsA = try #require(try json(try multidoc(["list", "--json"], root: rootA)) as? [[String: Any]])
        #expect(rowsA.map { $0["location"] as? String } == ["local"])
        #expect(try multidoc(["new", "After"], root: rootA).status == 0)
        // B notices, says how to go on, and syncs nothing until told.
        let noticed = try multidoc(["list"], root: rootB)
        #expect(noticed.stderr.contains("identity changed") && noticed.stderr.contains("multidoc container adopt"), "\(noticed.stderr)")
        #expect(!noticed.stdout.contains("After"))
        #expect(try multidoc(["container", "adopt"], root: rootB).status == 0)
        let rowsB = try #require(try json(try multidoc(["list", "--json"], root: rootB)) as? [[String: Any]])
        let locations = Dictionary(uniqueKeysWithValues: rowsB.compactMap { row in (row["name"] as? String).map { ($0, row["location"] as? String) } })
        #expect(locations == ["Before": "local", "After": "cloud"], "\(rowsB)")
    }

    /// Times no clock holds crash nothing: container folders dated in the year 2400 (a
    /// replication engine keeps a peer's file times; nanoseconds since 1970 overflowed) and a
    /// log whose `modified` date is 10^300 seconds away (its milliseconds overflowed the
    /// catalog's line).
    @Test func timesBeyondAnyClockCrashNothing() throws {
        defer { folder.remove() }
        // A container of format 1, whose logs are JSON this test can edit.
        try FileManager.default.createDirectory(atPath: container + "/identity", withIntermediateDirectories: true)
        try Data(#"{"format":1,"containerID":"0000c001-0000-4000-8000-000000000000","seededBy":"0000d009-0000-4000-8000-000000000000","seededAt":1}"#.utf8)
            .write(to: URL(fileURLWithPath: container + "/identity/0000d009-0000-4000-8000-000000000000.json"))
        #expect(try multidoc(["new", "Far"], root: rootA).status == 0)
        let logs = try #require(FileManager.default.enumerator(atPath: container)?.allObjects as? [String]).filter { $0.hasSuffix(".log") }
        for log in logs {
            let url = URL(fileURLWithPath: container + "/" + log)
            let text = try String(contentsOf: url, encoding: .utf8)
            let changed = text.replacingOccurrences(of: #""date"\s*:\s*[-0-9.eE+]+"#, with: #""date":1e300"#, options: .regularExpression)
            #expect(changed != text, "the log holds a date to change: \(text)")
            try Data(changed.utf8).write(to: url)
        }
        let far = try #require(Calendar(identifier: .gregorian).date(from: DateComponents(year: 2400, month: 1, day: 1)))
        let folders = try #require(FileManager.default.enumerator(atPath: container)?.allObjects as? [String])
        for path in folders + [""] where !path.hasSuffix(".log") && !path.hasSuffix(".json") {
            try FileManager.default.setAttributes([.modificationDate: far], ofItemAtPath: container + "/" + path)
        }
        let list = try multidoc(["list"], root: rootB)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("Far"), "\(list.stdout)")
        #expect(try multidoc(["show", "Far"], root: rootB).status == 0)
        #expect(try multidoc(["list", "--json"], root: rootB).status == 0)
        let verify = try multidoc(["container", "verify"], root: rootB)
        #expect(verify.status == 0 || verify.status == 9, "\(verify.stderr)")
        #expect(!verify.stderr.contains("Fatal error"))
    }

    /// Files that prove nothing change nothing, end to end: a baseline of nothing under a device
    /// nobody has seen, claiming a thousand of A's logs (A wrote two), and a tombstone with junk
    /// after it. B, joining after both, has both documents whole; its sync and `container
    /// verify` name both files; A's next save reaches B.
    @Test func filesThatProveNothingChangeNothingForADeviceJoiningLater() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Doc", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Doc", "--text", "one"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Doc", "--append", " two"], root: rootA).status == 0)
        #expect(try multidoc(["new", "Other"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Other", "--text", "still here"], root: rootA).status == 0)
        #expect(try multidoc(["sync"], root: rootA).status == 0)
        let rows = try #require(try json(try multidoc(["list", "--json"], root: rootA)) as? [[String: Any]])
        let ids = Dictionary(uniqueKeysWithValues: rows.compactMap { row in (row["name"] as? String).flatMap { name in (row["uuid"] as? String).map { (name, $0) } } })
        let doc = try #require(ids["Doc"]), other = try #require(ids["Other"])
        let writer = try #require(try FileManager.default.contentsOfDirectory(atPath: container + "/documents/\(doc)/logs").first)
        #expect(try FileManager.default.contentsOfDirectory(atPath: container + "/documents/\(doc)/logs/\(writer)").count == 3)
        let stranger = "00005757-0000-4000-8000-000000000000"
        let baseline = container + "/documents/\(doc)/baselines/\(stranger)-1000.json"
        try FileManager.default.createDirectory(atPath: container + "/documents/\(doc)/baselines", withIntermediateDirectories: true)
        try Data(#"{"format":1,"document":"\#(doc)","writtenBy":"\#(stranger)","writtenAt":1,"applied":{"\#(writer)":1000},"objects":{},"stamps":{},"tombstones":{}}"#.utf8)
            .write(to: URL(fileURLWithPath: baseline))
        let tombstone = container + "/tombstones/\(other).\(writer).json"
        try FileManager.default.createDirectory(atPath: container + "/tombstones", withIntermediateDirectories: true)
        try Data(#"{"deletedAt":1,"deletedBy":"\#(writer)","document":"\#(other)","format":1} and junk"#.utf8).write(to: URL(fileURLWithPath: tombstone))

        let sync = try multidoc(["sync", "--json", "--device-name", "B"], root: rootB)
        let report = try #require(try json(sync) as? [String: Any])
        let quarantined = (report["quarantined"] as? [String]) ?? []
        #expect(quarantined.contains { $0.hasPrefix(baseline) && $0.contains("claims log 1000") }, "\(quarantined)")
        #expect(quarantined.contains { $0.hasPrefix(tombstone) }, "\(quarantined)")
        let listed = try #require(try json(try multidoc(["list", "--json"], root: rootB)) as? [[String: Any]])
        #expect(Set(listed.compactMap { $0["name"] as? String }) == ["Doc", "Other"])
        for (name, text) in [("Doc", "one two"), ("Other", "still here")] {
            let show = try #require(try json(try multidoc(["show", name, "--json"], root: rootB)) as? [String: Any])
            #expect(show["text"] as? String == text, "\(name): \(show)")
        }
        let verify = try multidoc(["container", "verify"], root: rootB)
        #expect(verify.status != 0)
        #expect((verify.stdout + verify.stderr).contains(baseline) && (verify.stdout + verify.stderr).contains(tombstone), "\(verify.stdout)\(verify.stderr)")
        // A still numbers its saves from what it wrote, and B applies them.
        #expect(try multidoc(["sync"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Doc", "--append", " three"], root: rootA).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: container + "/documents/\(doc)/logs/\(writer)").sorted().last == "0000000000000004.log")
        let show = try #require(try json(try multidoc(["show", "Doc", "--json"], root: rootB)) as? [String: Any])
        #expect(show["text"] as? String == "one two three")
    }

    /// A log lost from the middle of a device's sequence: repair on the device that never had
    /// it names the device to run it on and exits 1, the writer's repair writes a baseline that
    /// covers it, and the stalled device reaches 100% (the warning: `LifecycleTests`).
    @Test func aLostLogIsReportedAndRepairedByTheDeviceThatHasIt() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Gappy"], root: rootA).status == 0)
        for index in 1...3 { #expect(try multidoc(["edit", "Gappy", "--append", " \(index)"], root: rootA).status == 0) }
        let logs = try #require(FileManager.default.enumerator(atPath: container)?.allObjects as? [String]).filter { $0.hasSuffix(".log") }.sorted()
        #expect(logs.count == 4, "\(logs)")
        try FileManager.default.removeItem(atPath: container + "/" + logs[1])
        let old = Date().addingTimeInterval(-300)
        for log in logs where log != logs[1] {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: container + "/" + log)
        }
        _ = try multidoc(["sync"], root: rootB)
        let stuck = try multidoc(["container", "repair"], root: rootB)
        #expect(stuck.status == 1, "\(stuck.stdout)\(stuck.stderr)")
        #expect(stuck.stdout.contains("not repaired"), "\(stuck.stdout)")
        let repaired = try multidoc(["container", "repair"], root: rootA)
        #expect(repaired.status == 0, "\(repaired.stdout)\(repaired.stderr)")
        #expect(repaired.stdout.contains("Gappy: repaired"), "\(repaired.stdout)")
        let list = try #require(try json(try multidoc(["list", "--json"], root: rootB)) as? [[String: Any]])
        #expect(list.first?["downloadPercent"] as? Int == 100, "\(list)")
        let show = try #require(try json(try multidoc(["show", "Gappy", "--json"], root: rootB)) as? [String: Any])
        #expect((show["text"] as? String)?.hasSuffix(" 1 2 3") == true, "\(show)")
        #expect(try multidoc(["container", "repair"], root: rootA).stdout.contains("nothing to repair"))
    }

    /// A root copied while the container was away: both copies save as one device, the copy's
    /// save waits behind the slot the original took (sync exits 10 and says why), and
    /// `device new-identity` on the copy makes it a new device whose save ships; every device
    /// then agrees and verify finds nothing wrong.
    @Test func aCopiedRootGetsItsOwnIdentityAndItsWaitingSaveShips() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Twin"], root: rootA).status == 0)
        #expect(try multidoc(["show", "Twin"], root: rootB).status == 0)
        let copy = folder.appending("A-copy").path
        try FileManager.default.copyItem(atPath: rootA, toPath: copy)
        let away = container + ".away"
        try FileManager.default.moveItem(atPath: container, toPath: away)
        #expect(try multidoc(["edit", "Twin", "--append", " from the copy"], root: copy).status == 0)
        try FileManager.default.moveItem(atPath: away, toPath: container)
        #expect(try multidoc(["edit", "Twin", "--append", " from A"], root: rootA).status == 0)
        let stuck = try multidoc(["sync"], root: copy)
        #expect(stuck.status == 10, "\(stuck.stderr)")
        #expect(stuck.stderr.contains("a different log with this sequence"), "\(stuck.stderr)")
        let before = try multidoc(["device", "new-identity", "--json", "--yes"], root: copy)
        let report = try #require(try json(before) as? [String: Any], "\(before.stderr)")
        #expect(report["saves"] as? Int == 1)
        #expect(report["old"] as? String != report["new"] as? String)
        #expect(try multidoc(["sync"], root: copy).status == 0)
        // Shipped as the new device's (before the others' passes may prune what all have).
        let newDevice = try #require(report["new"] as? String)
        let logs = try #require(FileManager.default.enumerator(atPath: container)?.allObjects as? [String])
        #expect(logs.contains { $0.contains("/logs/\(newDevice)/") && $0.hasSuffix(".log") }, "\(newDevice) \(logs.filter { $0.hasSuffix(".log") })")
        var texts: [String] = []
        for root in [rootA, rootB, copy] {
            _ = try multidoc(["sync"], root: root)
            let show = try #require(try json(try multidoc(["show", "Twin", "--json"], root: root)) as? [String: Any])
            texts.append(show["text"] as? String ?? "")
        }
        #expect(Set(texts).count == 1, "\(texts)")
        // Text merges: both appends are kept, although the copy wrote as the same device (its
        // new ids do not collide with the original's).
        #expect(texts.first?.contains(" from the copy") == true && texts.first?.contains(" from A") == true, "\(texts)")
        #expect(try multidoc(["container", "verify"], root: rootB).status == 0)
    }
}
