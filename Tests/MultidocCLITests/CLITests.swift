import Foundation
import Testing
import TestSupport

/// The CLI run as separate processes: two device roots, one container.
@Suite(.serialized, .offThePool) struct CLITests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("cli") }

    @Test func newOnAIsListedOnBThenEditedOnBAndShownOnA() throws {
        defer { folder.remove() }
        let created = try multidoc(["new", "--device-name", "A"], root: rootA)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.hasPrefix("TestDoc1\t"))
        let list = try multidoc(["list", "--json", "--device-name", "B"], root: rootB)
        #expect(list.status == 0, "\(list.stderr)")
        let rows = try #require(try json(list) as? [[String: Any]])
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(row["name"] as? String == "TestDoc1")
        #expect(row["origin"] as? String == "discovered")
        #expect(row["viewable"] as? Bool == true)
        #expect(row["downloadPercent"] as? Int == 100)
        #expect(row["location"] as? String == "cloud")
        for key in ["uuid", "state", "modified"] { #expect(row[key] != nil, "missing \(key)") }
        let edit = try multidoc(["edit", "TestDoc1", "--append", " from B"], root: rootB)
        #expect(edit.status == 0, "\(edit.stderr)")
        let show = try multidoc(["show", "TestDoc1", "--json"], root: rootA)
        #expect(show.status == 0, "\(show.stderr)")
        let detail = try #require(try json(show) as? [String: Any])
        #expect((detail["text"] as? String)?.hasSuffix(" from B") == true)
        for key in ["name", "uuid", "state", "modified", "text"] { #expect(detail[key] != nil, "missing \(key)") }
    }

    @Test func aJSONStoreOnOneSideSyncsWithSQLiteOnTheOther() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--store", "json"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "héllo 日本 🎉", "--store", "sqlite"], root: rootB).status == 0)
        let show = try multidoc(["show", "Notes", "--json"], root: rootA)
        let detail = try #require(try json(show) as? [String: Any])
        #expect(detail["text"] as? String == "héllo 日本 🎉")
        let rows = try #require(try json(try multidoc(["list", "--json"], root: rootA)) as? [[String: Any]])
        #expect(rows.first?["store"] as? String == "json")
    }

    @Test(arguments: [
        (["show", "nope"], Int32(3), "no document matches 'nope'"),
        (["new", "a/b"], Int32(5), "contains '/'"),
        (["new", ".."], Int32(5), "reserved"),
        (["new", ""], Int32(5), "empty"),
        (["new", String(repeating: "x", count: 300)], Int32(5), "300 bytes"),
        (["new", "tab\there"], Int32(5), "control character"),
        (["settings", "get", "Turbo"], Int32(13), "unknown setting 'Turbo'"),
        (["settings", "set", "FastSave", "maybe"], Int32(13), "bad value 'maybe' for FastSave"),
    ])
    func badInputGetsOneClearLineAndAnExitCode(arguments: [String], code: Int32, message: String) throws {
        defer { folder.remove() }
        let result = try multidoc(arguments, root: rootA)
        #expect(result.status == code, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test func anAmbiguousNameListsTheCandidates() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Untitled"], root: rootA).status == 0)
        #expect(try multidoc(["new", "Untitled"], root: rootB).status == 0)
        let result = try multidoc(["show", "Untitled"], root: rootA)
        #expect(result.status == 4)
        #expect(result.stderr.contains("names 2 documents"))
        // Making a second name on one device says so at once.
        let again = try multidoc(["new", "Untitled"], root: rootA)
        #expect(again.status == 0)
        #expect(again.stderr.contains("documents are now named 'Untitled'"), "\(again.stderr)")
    }

    @Test func aMissingRootOrContainerIsNamed() throws {
        defer { folder.remove() }
        let missingRoot = try ProductRunner.run("multidoc", ["list", "--root", folder.appending("nowhere").path])
        #expect(missingRoot.status == 6)
        #expect(missingRoot.stderr.contains("no device root at") && missingRoot.stderr.contains("multidoc init --root"))
        let missingContainer = try ProductRunner.run("multidoc", ["container", "status", "--root", rootA, "--container", folder.appending("gone").path])
        #expect(missingContainer.status == 7)
        #expect(missingContainer.stderr.contains("gone"))
        // The TUI and the daemon refuse a container folder that never existed the same way,
        // before they start (one exit-code table for the three).
        let gone = folder.appending("gone").path
        for program in ["multidoc-tui", "multidocd"] {
            let result = try ProductRunner.run(program, ["--root", rootA, "--container", gone])
            #expect(result.status == 7, "\(program): \(result.stderr)")
            #expect(result.stderr.contains("\(program): error: container folder \(gone) does not exist"), "\(result.stderr)")
        }
    }

    /// A mistyped verb among options is named as the mistake, and every executable's parser
    /// errors are one line in the documented form.
    @Test func parserErrorsOfEveryExecutableAreOneLine() throws {
        defer { folder.remove() }
        let verb = try ProductRunner.run("multidoc", ["lsit", "--root", rootA, "--json"])
        #expect(verb.status == 64)
        #expect(verb.stderr == "multidoc: error: unknown command 'lsit'; did you mean 'list'? (see 'multidoc --help')\n")
        let before = try ProductRunner.run("multidoc", ["--root", rootA, "shwo", "Doc"])
        #expect(before.stderr.hasPrefix("multidoc: error: unknown command 'shwo'; did you mean 'show'?"), "\(before.stderr)")
        let daemon = try ProductRunner.run("multidocd", ["--rescan-intervall", "5"])
        #expect(daemon.status == 64)
        #expect(daemon.stderr == "multidocd: error: unknown option '--rescan-intervall'; did you mean '--rescan-interval'? (see 'multidocd --help')\n")
        let tui = try ProductRunner.run("multidoc-tui", ["--stroe", "json"])
        #expect(tui.status == 64)
        #expect(tui.stderr == "multidoc-tui: error: unknown option '--stroe'; did you mean '--store'? (see 'multidoc-tui --help')\n")
    }

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

    /// `list` downloads a document it discovers (a few at a time: past 64 it previews them), so
    /// what it calls downloaded shows with the container away.
    @Test func aListedDocumentIsMadeLocalWhenFirstOpened() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Listed", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Listed", "--append", " and more"], root: rootA).status == 0)
        let rows = try #require(try json(try multidoc(["list", "--json", "--device-name", "B"], root: rootB)) as? [[String: Any]])
        #expect(rows.first?["viewable"] as? Bool == true && rows.first?["downloadPercent"] as? Int == 100)
        let gone = folder.appending("gone").path
        // Local now: shown with the container away.
        let offline = try ProductRunner.run("multidoc", ["show", "Listed", "--root", rootB, "--container", gone])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stdout.contains(" and more"))
    }

    /// A name the root uses itself, one that displays as something else, or a UUID (which
    /// every command would take for another document's) is refused with exit 5; nothing is made.
    @Test func namesThatWouldMisleadAreRefused() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Kept", "--device-name", "A"], root: rootA).status == 0)
        for bad in ["document.json", "invoice\u{202E}txt.exe", "0b5e1c44-2d3f-4a5b-9c6d-7e8f90a1b2c3"] {
            let created = try multidoc(["new", bad], root: rootA)
            #expect(created.status == 5, "\(bad.debugDescription): \(created.stderr)")
            #expect(created.stderr.hasPrefix("multidoc: error: invalid document name"), "\(created.stderr)")
            let renamed = try multidoc(["rename", "Kept", bad], root: rootA)
            #expect(renamed.status == 5, "\(bad.debugDescription): \(renamed.stderr)")
        }
        let rows = try #require(try json(try multidoc(["list", "--json"], root: rootA)) as? [[String: Any]])
        #expect(rows.map { $0["name"] as? String } == ["Kept"])
    }

    @Test func syncSaysWhenThereIsNothingToSyncWith() throws {
        defer { folder.remove() }
        let none = try ProductRunner.run("multidoc", ["sync", "--root", rootA])
        #expect(none.status == 7)
        #expect(none.stderr.contains("no container is configured"))
        let gone = try ProductRunner.run("multidoc", ["sync", "--root", rootA, "--container", folder.appending("gone").path])
        #expect(gone.status == 7, "\(gone.stderr)")
        #expect(gone.stderr.contains("gone"))
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

    /// Each `edit --append` reads the text inside its own transaction: racing processes of one
    /// device all land (they once overwrote each other and all exited 0).
    @Test func racingAppendsFromManyProcessesAllLand() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Race"], root: rootA).status == 0)
        let statuses = Statuses()
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            statuses.append((try? multidoc(["edit", "Race", "--append", " <\(index)>"], root: rootA))?.status ?? -1)
        }
        #expect(statuses.all == Array(repeating: 0, count: 8))
        let show = try #require(try json(try multidoc(["show", "Race", "--json"], root: rootA)) as? [String: Any])
        let text = try #require(show["text"] as? String)
        for index in 0..<8 { #expect(text.components(separatedBy: "<\(index)>").count == 2, "<\(index)> in \(text)") }
    }

    /// Appends racing renames of one document, by UUID: every append that exited 0 is in the
    /// text once, the document still opens, and its store never moved (a rename used to move
    /// the store's folder under the appends, and the record and the folder disagreed).
    @Test func appendsRacingRenamesAllLandAndTheDocumentStillOpens() throws {
        defer { folder.remove() }
        let created = try multidoc(["new", "Moving", "--json"], root: rootA)
        let id = try #require((try json(created) as? [String: Any])?["uuid"] as? String, "\(created.stdout)")
        let statuses = Statuses()
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            let arguments = index % 4 == 3
                ? ["rename", id, "Moved\(index)"]
                : ["edit", id, "--append", " <\(index)>"]
            statuses.append((try? multidoc(arguments, root: rootA))?.status ?? -1)
        }
        #expect(statuses.all.allSatisfy { $0 == 0 }, "\(statuses.all)")
        let show = try #require(try json(try multidoc(["show", id, "--json"], root: rootA)) as? [String: Any])
        let text = try #require(show["text"] as? String)
        for index in 0..<16 where index % 4 != 3 {
            #expect(text.components(separatedBy: "<\(index)>").count == 2, "<\(index)> in \(text)")
        }
        #expect((show["name"] as? String)?.hasPrefix("Moved") == true, "\(show)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: rootA + "/Documents/" + id).filter { $0 != "document.json" }
        #expect(folders == ["Moving"], "\(folders)")
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

    /// A delete is not the end: the deleting device and a peer both keep the document in their
    /// trash, a peer restores it as a new document with its text, and every device gets it back.
    @Test func aDeletedDocumentIsRestoredFromAPeersTrash() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Precious"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Precious", "--text", "words worth keeping"], root: rootA).status == 0)
        #expect(try multidoc(["show", "Precious"], root: rootB).status == 0)
        let removed = try multidoc(["rm", "Precious"], root: rootA)
        #expect(removed.stdout.contains("multidoc restore"), "\(removed.stdout)")
        let listed = try #require(try json(try multidoc(["list", "--json"], root: rootB)) as? [[String: Any]])
        #expect(listed.isEmpty, "\(listed)")
        for root in [rootA, rootB] {
            let trash = try #require(try json(try multidoc(["trash", "--json"], root: root)) as? [[String: Any]])
            #expect(trash.map { $0["name"] as? String } == ["Precious"], "\(trash)")
        }
        let missing = try multidoc(["restore", "Nope"], root: rootB)
        #expect(missing.status == 3 && missing.stderr.contains("nothing in the trash matches"), "\(missing.stderr)")
        let restored = try #require(try json(try multidoc(["restore", "Precious", "--json"], root: rootB)) as? [String: Any])
        #expect(restored["location"] as? String == "cloud", "\(restored)")
        let show = try #require(try json(try multidoc(["show", "Precious", "--json"], root: rootA)) as? [String: Any])
        #expect(show["text"] as? String == "words worth keeping", "\(show)")
        #expect(show["uuid"] as? String == restored["uuid"] as? String)
        #expect(try multidoc(["trash"], root: rootB).stdout.contains("the trash is empty"))
    }

    /// A full disk, as the kernel reports it (every file capped at a few KB): the save fails
    /// with one clear line and a non-zero code, and the document keeps its last saved state.
    @Test(arguments: ["sqlite", "json"])
    func aFullDiskFailsTheSaveAndKeepsThePreviousState(store: String) throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Full", "--store", store], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Full", "--text", "before"], root: rootA).status == 0)
        let big = String(repeating: "x", count: 96 * 1024)
        let full = try ProductRunner.run(
            "multidoc", ["edit", "Full", "--append", big, "--root", rootA, "--container", container], fileSizeLimit: 64 * 1024)
        #expect(full.status != 0, "the save cannot have succeeded: \(full.stdout)")
        #expect(full.stderr.hasPrefix("multidoc: error: "), "\(full.stderr)")
        #expect(full.stderr.split(separator: "\n").count == 1, "\(full.stderr)")
        #expect(!full.stderr.contains("Fatal error"))
        let show = try multidoc(["show", "Full", "--json"], root: rootA)
        #expect(show.status == 0, "\(show.stderr)")
        #expect((try json(show) as? [String: Any])?["text"] as? String == "before")
        // With room again, saving works and reaches the peer.
        #expect(try multidoc(["edit", "Full", "--append", " after"], root: rootA).status == 0)
        let onB = try #require(try json(try multidoc(["show", "Full", "--json"], root: rootB)) as? [String: Any])
        #expect(onB["text"] as? String == "before after")
    }

    /// A store that cannot be opened for want of room (SQLite cannot size its shared-memory
    /// file) is not damaged: with AttemptErrorRecovery on it stays where it is, untouched, and
    /// the error says it is not damaged (it used to be moved aside as damaged, and the rebuild
    /// then failed for the same want of room, leaving the document without a store).
    @Test func recoveryNeverMovesAStoreThatOnlyLacksRoom() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Roomy"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Roomy", "--text", "kept"], root: rootA).status == 0)
        let full = try ProductRunner.run(
            "multidoc", ["show", "Roomy", "--attempt-error-recovery", "on", "--root", rootA, "--container", container], fileSizeLimit: 16 * 1024)
        #expect(full.status == 10, "\(full.stderr)")
        #expect(full.stderr.contains("not damaged"), "\(full.stderr)")
        #expect(full.stderr.split(separator: "\n").count == 1, "\(full.stderr)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: rootA + "/Documents").filter { $0.count == 36 }
        let names = try folders.flatMap { try FileManager.default.contentsOfDirectory(atPath: rootA + "/Documents/\($0)/Roomy") }
        #expect(!names.contains { $0.hasPrefix("damaged-") || $0.hasPrefix("rebuilding-") }, "\(names)")
        let show = try multidoc(["show", "Roomy", "--json"], root: rootA)
        #expect((try json(show) as? [String: Any])?["text"] as? String == "kept")
    }

    /// A device whose record and store of a document are both garbage: the document does not
    /// vanish — `list` names the damaged record — and with AttemptErrorRecovery both are rebuilt
    /// from the container, the damaged files kept beside them.
    @Test func aDocumentWithADamagedRecordAndStoreIsReportedThenRebuilt() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Twice"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Twice", "--text", "from A"], root: rootA).status == 0)
        #expect(try multidoc(["show", "Twice"], root: rootB).status == 0)
        let id = try #require(try FileManager.default.contentsOfDirectory(atPath: rootB + "/Documents").first { $0.count == 36 })
        let folder = rootB + "/Documents/" + id
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: folder + "/document.json"))
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: folder + "/Twice/store.sqlite"))
        let reported = try multidoc(["list"], root: rootB)
        #expect(reported.stderr.contains("\(id)/document.json is damaged"), "\(reported.stderr)")
        #expect(reported.stderr.contains("AttemptErrorRecovery"), "\(reported.stderr)")
        let rebuilt = try multidoc(["list", "--attempt-error-recovery", "on"], root: rootB)
        #expect(rebuilt.stdout.contains("Twice"), "\(rebuilt.stdout)\n\(rebuilt.stderr)")
        #expect(rebuilt.stderr.contains("recovered"), "\(rebuilt.stderr)")
        let show = try multidoc(["show", "Twice", "--json"], root: rootB)
        #expect((try json(show) as? [String: Any])?["text"] as? String == "from A", "\(show.stderr)")
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(kept.contains { $0.hasPrefix("damaged-") && $0.hasSuffix("document.json") }, "\(kept)")
    }

    /// Files multidoc creates are readable by their user only (0600, folders 0700): the device
    /// root and the container after creating, editing, plotting and a sync.
    @Test func everythingWrittenIsPrivateToItsUser() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Private"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Private", "--append", " x"], root: rootB).status == 0)
        #expect(try multidoc(["sync"], root: rootA).status == 0)
        #expect(try multidoc(["settings", "set", "EnablePing", "on"], root: rootA).status == 0)
        var open: [String] = []
        for top in [rootA, rootB, container] {
            guard let walker = FileManager.default.enumerator(atPath: top) else { continue }
            while let relative = walker.nextObject() as? String {
                let path = top + "/" + relative
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                if info.st_mode & 0o077 != 0 { open.append("\(path) \(String(info.st_mode & 0o777, radix: 8))") }
            }
        }
        #expect(open.isEmpty, "\(open)")
    }

    @Test func copyContainerOnSegueNeverKeepsTheDetailFromOpening() throws {
        defer { folder.remove() }
        #expect(try ProductRunner.run("multidoc", ["new", "Local", "--root", rootA]).status == 0)
        let show = try ProductRunner.run("multidoc", ["show", "Local", "--root", rootA, "--copy-container-on-segue", "on"])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("File name: Local"))
        #expect(show.stderr.contains("not copied"))
    }

    /// A peer's 1 GB sparse file and a file over the copy's limit are named, not copied (the
    /// sparse one once filled the disk); what is copied is private to its user (0600).
    @Test func copyContainerOnSegueSkipsSparseAndOversizedFilesAndCopiesPrivately() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Doc"], root: rootA).status == 0)
        let sparse = folder.appending("container/documents/sparse.bin"), huge = folder.appending("container/documents/huge.bin")
        for (url, size) in [(sparse, 8 << 20), (huge, 1 << 30)] {
            #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
            #expect(truncate(url.path, off_t(size)) == 0)
        }
        let show = try multidoc(["show", "Doc", "--copy-container-on-segue", "on"], root: rootA)
        #expect(show.status == 0, "\(show.stderr)")
        let copy = folder.appending("A/Documents/copyOfCloudContainer")
        for name in ["sparse.bin", "huge.bin"] {
            #expect(!FileManager.default.fileExists(atPath: copy.appendingPathComponent("documents/\(name)").path))
        }
        let copied = try FileManager.default.subpathsOfDirectory(atPath: copy.path)
        #expect(copied.contains { $0.hasSuffix(".log") }, "\(copied)")
        for relative in copied {
            var info = stat()
            #expect(lstat(copy.appendingPathComponent(relative).path, &info) == 0)
            #expect(info.st_mode & 0o077 == 0, "\(relative) \(String(info.st_mode & 0o777, radix: 8))")
        }
        // `container copy` names what it left out and why.
        let bugReport = try multidoc(["container", "copy", folder.appending("report").path], root: rootA)
        #expect(bugReport.status == 0, "\(bugReport.stderr)")
        #expect(bugReport.stderr.contains("\(sparse.path): a sparse file"), "\(bugReport.stderr)")
        #expect(bugReport.stderr.contains("\(huge.path): 1073741824 bytes, over the"), "\(bugReport.stderr)")
    }

    @Test func aStoreThatFailsToOpenIsNamedAndRecoveryIsOffered() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Broken", "--use-cloud", "off"], root: rootA).status == 0)
        let rows = try #require(try json(try multidoc(["list", "--json"], root: rootA)) as? [[String: Any]])
        let uuid = try #require(rows.first?["uuid"] as? String)
        let store = folder.appending("A/Documents/\(uuid)/Broken/store.sqlite")
        try Data("this is not a database, it is a sentence".utf8).write(to: store)
        let result = try multidoc(["show", "Broken"], root: rootA)
        #expect(result.status == 9, "\(result.stderr)")
        #expect(result.stderr.contains("not an SQLite database"))
        #expect(result.stderr.contains("AttemptErrorRecovery"))
        let list = try multidoc(["list"], root: rootA)
        #expect(list.status == 0)
        #expect(list.stdout.contains("Saving Error"))
    }

    @Test func settingsListShowsEverySettingWithItsSource() throws {
        defer { folder.remove() }
        #expect(try multidoc(["settings", "set", "EnablePing", "on"], root: rootA).status == 0)
        let result = try ProductRunner.run("multidoc", ["settings", "list", "--json", "--root", rootA, "--fast-save", "off"],
                                           environment: ["MULTIDOC_USE_CLOUD": "0"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try #require(try json(result) as? [[String: Any]])
        let byKey = Dictionary(uniqueKeysWithValues: rows.compactMap { row in (row["key"] as? String).map { ($0, row) } })
        for key in ["FastSave", "EnablePing", "CopyContainerOnSegue", "AttemptErrorRecovery", "UseCloud", "DeviceName"] {
            #expect(byKey[key] != nil, "missing \(key)")
        }
        #expect(byKey["FastSave"]?["source"] as? String == "flag")
        #expect(byKey["UseCloud"]?["source"] as? String == "environment")
        #expect(byKey["EnablePing"]?["source"] as? String == "file")
        #expect(byKey["AttemptErrorRecovery"]?["source"] as? String == "default")
    }

    @Test func deleteOnADisappearsFromB() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new"], root: rootA).status == 0)
        #expect(try multidoc(["list"], root: rootB).stdout.contains("TestDoc1"))
        #expect(try multidoc(["rm", "TestDoc1"], root: rootA).status == 0)
        let rows = try #require(try json(try multidoc(["list", "--json"], root: rootB)) as? [[String: Any]])
        #expect(rows.isEmpty)
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

    @Test func demoRunsAndReportsRealFigures() throws {
        defer { folder.remove() }
        let result = try ProductRunner.run("multidoc", ["demo", "--json", "--ping-rounds", "5"], timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try #require(try json(result) as? [String: Any])
        #expect(summary["discoveredOnB"] as? Bool == true)
        #expect(summary["viewableOnB"] as? Bool == true)
        #expect(summary["editSeenOnA"] as? Bool == true)
        #expect((summary["newToViewableMs"] as? Double ?? 0) > 0)
        let pings = try #require(summary["pingsSent"] as? [String: Int])
        #expect(pings["A"] == 5 && pings["B"] == 5)
        let oneWay = try #require(summary["oneWay"] as? [String: Any])
        #expect((oneWay["count"] as? Int ?? 0) >= 5)
        #expect((oneWay["p50Ms"] as? Double ?? 0) > 0)
        #expect(FileManager.default.fileExists(atPath: summary["folder"] as? String ?? "/") == false)
    }

    @Test func everyCommandHasHelp() throws {
        defer { folder.remove() }
        for command in ["demo", "new", "list", "show", "edit", "rm", "rename", "convert", "move-to-cloud", "move-to-local",
                        "sync", "settings", "latencies", "inspect", "container", "status"] {
            let result = try ProductRunner.run("multidoc", [command, "--help"])
            #expect(result.status == 0, "\(command)")
            #expect(result.stdout.contains("USAGE"), "\(command)")
        }
    }
}

/// Exit statuses collected from several threads.
private final class Statuses: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int32] = []
    func append(_ value: Int32) { lock.lock(); values.append(value); lock.unlock() }
    var all: [Int32] { lock.lock(); defer { lock.unlock() }; return values }
}
