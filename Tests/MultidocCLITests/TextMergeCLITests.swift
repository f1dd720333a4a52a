import Foundation
import Testing
import TestSupport

/// Concurrent text edits through the CLI, as a user makes them: both kept; a format 1
/// container moved to format 2 with `container upgrade`; its files shown with `container dump`.
@Suite(.serialized, .offThePool) struct TextMergeCLITests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("cli-text") }

    func text(_ root: String, timeout: TimeInterval = 60) throws -> String {
        let show = try multidoc(["show", "Notes", "--json"], root: root, timeout: timeout)
        let object = try #require(try json(show) as? [String: Any], "\(show.stderr)")
        return try #require(object["text"] as? String)
    }

    /// Both devices edit while the container is away; after a sync both edits are on both.
    func editBothOffline(_ first: [String], _ second: [String]) throws {
        let away = container + ".away"
        try FileManager.default.moveItem(atPath: container, toPath: away)
        #expect(try multidoc(["edit", "Notes"] + first, root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes"] + second, root: rootB).status == 0)
        try FileManager.default.moveItem(atPath: away, toPath: container)
        for root in [rootA, rootB, rootA] { #expect(try multidoc(["sync"], root: root).status == 0) }
    }

    @Test func offlineEditsOnTwoDevicesAreBothKept() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "alpha bravo charlie"], root: rootA).status == 0)
        #expect(try text(rootB) == "alpha bravo charlie")
        try editBothOffline(["--text", "alpha from A bravo charlie"], ["--append", " and B"])
        #expect(try text(rootA) == "alpha from A bravo charlie and B")
        #expect(try text(rootB) == "alpha from A bravo charlie and B")
        // The logs are format 2, and `container dump` shows their text operations.
        let logs = try #require(FileManager.default.enumerator(atPath: container)?.allObjects as? [String]).filter { $0.hasSuffix(".log") }
        let last = try #require(logs.sorted().last)
        let dump = try multidoc(["container", "dump", container + "/" + last])
        #expect(dump.status == 0, "\(dump.stderr)")
        let object = try #require(try json(dump) as? [String: Any])
        #expect(object["format"] as? Int == 2)
        #expect(dump.stdout.contains("\"texts\""), "\(dump.stdout)")
        let missing = try multidoc(["container", "dump", container + "/no-such-file"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no-such-file"), "\(missing.stderr)")
        let stray = folder.appending("stray.txt")
        try Data("not a container file".utf8).write(to: stray)
        let notOurs = try multidoc(["container", "dump", stray.path])
        #expect(notOurs.status == 9)
        #expect(notOurs.stderr == "multidoc: error: \(stray.path): not a container file: neither a format 2 file (no MDC2 magic) nor JSON\n", "\(notOurs.stderr)")
    }

    /// `multidoc edit` with no text opens $EDITOR on the document as it is now, a peer's save
    /// waiting in the container included: the save then merges against what the editor was
    /// shown, and nothing of the peer's is taken for a conflict and kept twice.
    @Test func theEditorOpensOnWhatAPeerSaved() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "T <A1>"], root: rootA).status == 0)
        #expect(try text(rootB) == "T <A1>")
        #expect(try multidoc(["edit", "Notes", "--text", "T <B1> <A1>"], root: rootB).status == 0)
        // The editor keeps a copy of what it was given and adds a marker before A's.
        let seen = folder.appending("seen.txt"), script = folder.appending("editor.sh")
        try Data("#!/bin/sh\ncp \"$1\" '\(seen.path)'\nperl -0777 -i -pe 's/ <A1>/ <A2> <A1>/' \"$1\"\n".utf8).write(to: script)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let edit = try ProductRunner.run(
            "multidoc", ["edit", "Notes", "--root", rootA, "--container", container], environment: ["EDITOR": script.path])
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(try String(contentsOf: seen, encoding: .utf8) == "T <B1> <A1>")
        #expect(try text(rootA) == "T <B1> <A2> <A1>")
        #expect(try text(rootB) == "T <B1> <A2> <A1>")
    }

    /// The container as a build of format 1 seeded it (its identity file, format 1).
    func seedFormat1Container(seededBy old: String) throws {
        try FileManager.default.createDirectory(atPath: container + "/identity", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: container + "/devices", withIntermediateDirectories: true)
        try Data(#"{"format":1,"containerID":"0000c001-0000-4000-8000-000000000000","seededBy":"\#(old)","seededAt":1}"#.utf8)
            .write(to: URL(fileURLWithPath: container + "/identity/\(old).json"))
    }

    @Test func aFormat1ContainerIsMovedOnceAndThenMerges() throws {
        defer { folder.remove() }
        // A container seeded by a build of format 1, and a device of that build registered in it.
        let old = "0000d009-0000-4000-8000-000000000000"
        try seedFormat1Container(seededBy: old)
        let oldEntry = URL(fileURLWithPath: container + "/devices/\(old).json")
        try Data(#"{"format":1,"device":"\#(old)","name":"Old","model":"m","updatedAt":1,"applied":{}}"#.utf8).write(to: oldEntry)
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "one two"], root: rootA).status == 0)
        #expect(try text(rootB) == "one two")
        // Format 1: whole texts, last writer wins.
        try editBothOffline(["--append", " A"], ["--append", " B"])
        let lww = try text(rootA)
        #expect(lww == "one two A" || lww == "one two B", "\(lww)")

        let refused = try multidoc(["container", "upgrade"], root: rootA)
        #expect(refused.status == 8, "\(refused.stderr)")
        #expect(refused.stderr.contains("Old") && refused.stderr.contains("--force"), "\(refused.stderr)")
        try FileManager.default.removeItem(at: oldEntry)
        let moved = try multidoc(["container", "upgrade", "--json"], root: rootA)
        #expect(moved.status == 0, "\(moved.stderr)")
        let report = try #require(try json(moved) as? [String: Any])
        #expect(report["upgraded"] as? Bool == true)
        #expect(try multidoc(["container", "upgrade"], root: rootA).stdout.contains("already of format 2"))
        #expect(try multidoc(["container", "verify"], root: rootB).status == 0)
        #expect(try multidoc(["sync"], root: rootB).status == 0)

        try editBothOffline(["--append", " +A"], ["--append", " +B"])
        let merged = try text(rootA)
        #expect(try text(rootB) == merged)
        #expect(merged.hasPrefix(lww) && merged.contains(" +A") && merged.contains(" +B"), "\(merged)")
        let status = try multidoc(["container", "status", "--json"], root: rootB)
        let statusObject = try #require(try json(status) as? [String: Any])
        #expect(statusObject["format"] as? Int == 2)
    }

    /// A damaged format file of a container moved to format 2 (issue 35, scenario 8) has no
    /// effect and is named: every save still shows on the device and its peers, no device
    /// goes back to format 1, `sync`, `container status` and `container verify` name the file
    /// and the way out, a device joining later shows the same text, and removing the file and
    /// running `container upgrade` again ends the warnings.
    @Test func aDamagedFormatFileIsNamedAndTakesNoSaveAndNoFormatBack() throws {
        defer { folder.remove() }
        let rootD = folder.appending("D").path
        try FileManager.default.createDirectory(atPath: rootD, withIntermediateDirectories: true)
        try seedFormat1Container(seededBy: "0000d009-0000-4000-8000-000000000000")
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "one two"], root: rootA).status == 0)
        #expect(try text(rootB) == "one two")
        let moved = try multidoc(["container", "upgrade"], root: rootA)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        #expect(try multidoc(["edit", "Notes", "--append", " three"], root: rootA).status == 0)
        #expect(try text(rootB) == "one two three")

        // The format file loses its containerID.
        let names = try FileManager.default.contentsOfDirectory(atPath: container + "/identity")
        let name = try #require(names.first { $0.hasPrefix("format-2.") })
        let formatFile = URL(fileURLWithPath: container + "/identity/" + name)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: formatFile)) as? [String: Any])
        object["containerID"] = nil
        try JSONSerialization.data(withJSONObject: object).write(to: formatFile)

        let sync = try multidoc(["sync"], root: rootA)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stderr.contains(name) && sync.stderr.contains("multidoc container upgrade"), "\(sync.stderr)")
        for (root, suffix) in [(rootA, " four"), (rootB, " five"), (rootA, " six")] {
            let edit = try multidoc(["edit", "Notes", "--append", suffix], root: root)
            #expect(edit.status == 0 && edit.stdout.contains("saved"), "\(edit.stderr)")
        }
        let expected = "one two three four five six"
        #expect(try text(rootA) == expected)
        #expect(try text(rootB) == expected)
        #expect(try text(rootD) == expected)
        for root in [rootA, rootB] {
            let device = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/device.json"))) as? [String: Any])
            #expect(device["containerFormat"] as? Int == 2, "\(root): \(device)")
        }
        let verify = try multidoc(["container", "verify"], root: rootB)
        #expect(verify.status == 9)
        #expect(verify.stdout.contains(name) && verify.stdout.contains("multidoc container upgrade"), "\(verify.stdout)")
        let status = try multidoc(["container", "status", "--json"], root: rootB)
        let statusObject = try #require(try json(status) as? [String: Any], "\(status.stderr)")
        let passedOver = try #require(statusObject["passedOver"] as? [String])
        #expect(passedOver.count == 1 && passedOver.first?.contains(name) == true, "\(passedOver)")

        // The way out: remove the file and write the format again.
        try FileManager.default.removeItem(at: formatFile)
        let again = try multidoc(["container", "upgrade"], root: rootB)
        #expect(again.status == 0, "\(again.stderr)")
        let clean = try multidoc(["sync"], root: rootA)
        #expect(clean.status == 0 && clean.stderr.isEmpty, "\(clean.stderr)")
        #expect(try multidoc(["container", "verify"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--append", " seven"], root: rootD).status == 0)
        #expect(try text(rootA) == expected + " seven")
    }

    /// A text longer than the longest run a reader accepts, then a small one (issue 35,
    /// scenario 3): the small save deletes the long text as a few ranges of ids, and the peer
    /// reads it (it quarantined a delete of one 17-million-id range, and stayed on the long
    /// text for good).
    @Test func aHugeTextThenASmallOneBothReachThePeer() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        // Seconds each in a debug build, minutes when the whole suite loads the machine.
        let slow: TimeInterval = 300
        let huge = try paste(String(repeating: "x", count: 17_000_000), into: "Notes", root: rootA, timeout: slow)
        #expect(huge.status == 0, "\(huge.stderr)")
        #expect(try text(rootB, timeout: slow).count == 17_000_000)
        let small = try multidoc(["edit", "Notes", "--text", "small again"], root: rootA, timeout: slow)
        #expect(small.status == 0 && small.stdout.contains("saved"), "\(small.stderr)")
        let logs = try #require(FileManager.default.enumerator(atPath: container)?.allObjects as? [String]).filter { $0.hasSuffix(".log") }.sorted()
        let last = try #require(logs.last)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: container + "/" + last)[.size] as? Int)
        #expect(size < 1000, "\(last): \(size) bytes")
        let sync = try multidoc(["sync"], root: rootB, timeout: slow)
        #expect(sync.status == 0 && sync.stderr.isEmpty, "\(sync.stderr)")
        #expect(try text(rootB, timeout: slow) == "small again")
        #expect(try text(rootA, timeout: slow) == "small again")
    }

    /// A text past 64 KiB, which a write's baseline leaves out so that saves and imports change
    /// it in place: appends, an insert and a delete on both devices, each a separate process,
    /// and both end with every edit, in order, whatever each store reopened.
    @Test func aLongTextTakesEditsInPlaceOnBothDevices() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        let long = String(repeating: "A line of a long text, é and 🙂 included.\n", count: 2_000)
        let pasted = try paste(long, into: "Notes", root: rootA)
        #expect(pasted.status == 0, "\(pasted.stderr)")
        #expect(long.utf8.count > 64 * 1024)
        var expected = long
        for (root, edit) in [(rootA, ["--append", "one"]), (rootA, ["--append", "two"]), (rootB, ["--append", "three"]),
                             (rootA, ["--insert", "0", "é"]), (rootB, ["--delete", "1", "2"])] {
            let result = try multidoc(["edit", "Notes"] + edit, root: root)
            #expect(result.status == 0, "\(edit): \(result.stderr)")
            switch edit[0] {
            case "--append": expected += edit[1]
            case "--insert": expected = edit[2] + expected
            default:
                var scalars = Array(expected.unicodeScalars)
                scalars.removeSubrange(1..<3)
                var view = String.UnicodeScalarView()
                view.append(contentsOf: scalars)
                expected = String(view)
            }
        }
        #expect(try text(rootB) == expected)
        #expect(try text(rootA) == expected)
    }

    /// The same in-place path with its writers killed: `edit --append` on a text past 64 KiB,
    /// SIGKILLed a little later each time until three runs finish, the store reopened by a
    /// `show` after each. Every append that exited 0 is there once, a killed one at most once,
    /// all in the order they were made, and B ends with A's text.
    @Test func aLongTextKeepsEveryAcknowledgedAppendThroughKills() async throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        let long = String(repeating: "A line of a long ASCII text, for the byte-a-scalar store.\n", count: 1_500)
        let pasted = try paste(long, into: "Notes", root: rootA)
        #expect(pasted.status == 0, "\(pasted.stderr)")
        #expect(try text(rootB) == long)
        var acknowledged: [String] = [], made: [String] = []
        // Killed a little later each time (20 ms more, then a quarter more past 400 ms, so a slow
        // machine's runs are reached too), until three runs finish.
        var delay = 0
        while acknowledged.count < 3, made.count < 60 {
            delay = delay < 400 ? delay + 20 : delay * 5 / 4
            let marker = "<\(made.count)>"
            made.append(marker)
            if try await multidocKilled(after: delay, ["edit", "Notes", "--append", marker], root: rootA) { acknowledged.append(marker) }
            // The store the kill left opens, and holds the text and whole appends only.
            let now = try text(rootA)
            #expect(now.hasPrefix(long))
            let tail = String(now.dropFirst(long.count))
            #expect(tail.isEmpty || made.contains { tail.hasSuffix($0) }, "after a kill at \(delay) ms: \(tail)")
        }
        #expect(try multidoc(["sync"], root: rootA).status == 0)
        let onA = try text(rootA), onB = try text(rootB)
        #expect(onB == onA)
        let tail = String(onA.dropFirst(long.count))
        var places: [String.Index] = []
        for marker in made {
            let count = tail.components(separatedBy: marker).count - 1
            #expect(count <= 1, "\(marker) is there \(count) times: \(tail)")
            if acknowledged.contains(marker) { #expect(count == 1, "acknowledged \(marker) is missing: \(tail)") }
            if let range = tail.range(of: marker) { places.append(range.lowerBound) }
        }
        #expect(places == places.sorted(), "the appends are out of order: \(tail)")
        #expect(!acknowledged.isEmpty && acknowledged.count < made.count, "no kill landed inside a run (\(acknowledged.count) of \(made.count))")
    }

    @Test func historyListsTheSavesAndRevertBringsATextBack() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "first words"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--append", " and more from B"], root: rootB).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "all of it replaced"], root: rootA).status == 0)
        let listed = try multidoc(["history", "Notes", "--json"], root: rootB)
        let rows = try #require(try json(listed) as? [[String: Any]], "\(listed.stderr)")
        #expect(rows.count == 4, "\(rows)")
        let second = try #require(rows.dropFirst().first?["save"] as? Int)
        let third = try #require(rows.dropFirst(2).first)
        #expect(third["added"] as? Int == " and more from B".unicodeScalars.count)
        let past = try multidoc(["show", "Notes", "--at", "\(second)", "--json"], root: rootB)
        let pastObject = try #require(try json(past) as? [String: Any], "\(past.stderr)")
        #expect(pastObject["text"] as? String == "first words")
        let reverted = try multidoc(["revert", "Notes", "--to", "\(third["save"] as? Int ?? 0)"], root: rootB)
        #expect(reverted.status == 0, "\(reverted.stderr)")
        // The revert is a save like any other: A gets it.
        #expect(try text(rootA) == "first words and more from B")
        let missing = try multidoc(["show", "Notes", "--at", "999"], root: rootA)
        #expect(missing.status == 3)
        #expect(missing.stderr.contains("history"), "\(missing.stderr)")
        let garbage = try multidoc(["revert", "Notes", "--to", "soon"], root: rootA)
        #expect(garbage.status == 64)
    }
}
