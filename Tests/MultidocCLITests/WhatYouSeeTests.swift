import Foundation
import Testing
import TestSupport

/// Issue 35's joints, through the CLI as a user meets them: what `list` says of a peer's
/// document holds afterwards.
@Suite(.serialized, .offThePool) struct WhatYouSeeTests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("what-you-see") }

    func rows(_ root: String) throws -> [[String: Any]] {
        let list = try multidoc(["list", "--json"], root: root)
        #expect(list.status == 0, "\(list.stderr)")
        return try #require(try json(list) as? [[String: Any]])
    }

    /// B lists A's document as downloaded: with the container gone it shows and takes edits.
    @Test func aDocumentListedAsDownloadedOpensWithTheContainerGone() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "hello"], root: rootA).status == 0)
        let row = try #require(try rows(rootB).first)
        #expect(row["downloadPercent"] as? Int == 100 && row["viewable"] as? Bool == true && row["previewed"] as? Bool == false)
        try FileManager.default.moveItem(atPath: container, toPath: folder.appending("away").path)
        let edit = try multidoc(["edit", "Notes", "--append", " offline"], root: rootB)
        #expect(edit.status == 0, "\(edit.stderr)")
        let show = try multidoc(["show", "Notes", "--json"], root: rootB)
        #expect(show.status == 0, "\(show.stderr)")
        #expect((try json(show) as? [String: Any])?["text"] as? String == "hello offline")
    }

    /// A document whose first log has not reached B is not shown as an empty text: `show`
    /// refuses it as `edit` does, and shows it once the log is there.
    @Test func aDocumentWhoseFirstLogHasNotArrivedIsNotShownEmpty() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "hello"], root: rootA).status == 0)
        // The logs held back, as if they were still on their way.
        let documents = URL(fileURLWithPath: container).appendingPathComponent("documents")
        let held = folder.appending("held")
        try FileManager.default.createDirectory(at: held, withIntermediateDirectories: true)
        var moved: [(URL, URL)] = []
        for case let url as URL in FileManager.default.enumerator(at: documents, includingPropertiesForKeys: nil) ?? .init()
        where url.pathExtension == "log" {
            let aside = held.appendingPathComponent("\(moved.count).log")
            try FileManager.default.moveItem(at: url, to: aside)
            moved.append((url, aside))
        }
        #expect(!moved.isEmpty)
        let row = try #require(try rows(rootB).first)
        #expect(row["viewable"] as? Bool == false)
        for arguments in [["show", "Notes"], ["show", "Notes", "--json"]] {
            let show = try multidoc(arguments, root: rootB)
            #expect(show.status != 0 && !show.stdout.contains("\"text\""), "\(show.stdout)")
            #expect(show.stderr.contains("not viewable yet"), "\(show.stderr)")
        }
        for (url, aside) in moved { try FileManager.default.moveItem(at: aside, to: url) }
        let show = try multidoc(["show", "Notes", "--json"], root: rootB)
        #expect(show.status == 0, "\(show.stderr)")
        #expect((try json(show) as? [String: Any])?["text"] as? String == "hello")
    }

    /// A peer's rename shows in the next `list`, and a document B listed that A then deletes is
    /// in B's trash.
    @Test func aPeersRenameAndDeleteShowInTheNextList() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--device-name", "A"], root: rootA).status == 0)
        #expect(try rows(rootB).first?["name"] as? String == "Notes")
        #expect(try multidoc(["rename", "Notes", "Renamed"], root: rootA).status == 0)
        #expect(try rows(rootB).map { $0["name"] as? String } == ["Renamed"])
        #expect(try multidoc(["rm", "Renamed"], root: rootA).status == 0)
        #expect(try rows(rootB).isEmpty)
        let trash = try multidoc(["trash", "--json"], root: rootB)
        #expect(trash.status == 0, "\(trash.stderr)")
        let entries = try #require(try json(trash) as? [[String: Any]])
        #expect(entries.map { $0["name"] as? String } == ["Renamed"], "\(trash.stdout)")
        // Who deleted it, by name as the container's registry has it.
        #expect((entries.first?["deletedBy"] as? String)?.hasPrefix("A (") == true, "\(trash.stdout)")
    }
}

/// Names: default names never repeat on one device, and canonically equal names are one name.
@Suite(.serialized, .offThePool) struct NameTests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("names") }

    @Test func tenNewAtOnceMakeTenDefaultNames() async throws {
        defer { folder.remove() }
        #expect(try multidoc(["init", "--device-name", "A", "--no-input"], root: rootA).status == 0)
        let results = try await withThrowingTaskGroup(of: ProductRunner.Result.self) { group in
            for _ in 0..<10 { group.addTask { try multidoc(["new"], root: rootA) } }
            var all: [ProductRunner.Result] = []
            for try await result in group { all.append(result) }
            return all
        }
        for result in results { #expect(result.status == 0, "\(result.stderr)") }
        let names = results.compactMap { $0.stdout.split(separator: "\t").first.map(String.init) }
        #expect(Set(names).count == 10, "\(names.sorted())")
    }

    @Test func namesTypedInNFCAndNFDAreOneName() throws {
        defer { folder.remove() }
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(try multidoc(["new", composed, "--device-name", "A"], root: rootA).status == 0)
        let second = try multidoc(["new", decomposed], root: rootA)
        #expect(second.status == 0, "\(second.stderr)")
        let list = try multidoc(["list", "--json"], root: rootA)
        let rows = try #require(try json(list) as? [[String: Any]])
        // Both stored in the composed form.
        #expect(rows.compactMap { ($0["name"] as? String).map { Array($0.utf8) } } == [Array(composed.utf8), Array(composed.utf8)])
        for query in [composed, decomposed] {
            let show = try multidoc(["show", query], root: rootA)
            #expect(show.status != 0 && show.stderr.contains("names 2 documents"), "\(show.status) \(show.stderr)")
        }
    }
}

/// `restore` is as safe as a save: with the container away or refused it still makes a shared
/// document that reaches the peers once the container is back, and a restore killed part way
/// and run again makes one document with the text.
@Suite(.serialized, .offThePool) struct RestoreTests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("restore") }

    func deleteOnA(_ text: String) throws {
        #expect(try multidoc(["new", "Notes", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", text], root: rootA).status == 0)
        #expect(try multidoc(["list"], root: rootB).status == 0)
        #expect(try multidoc(["rm", "Notes"], root: rootA).status == 0)
    }

    func textOnB() throws -> [String] {
        let list = try multidoc(["list", "--json"], root: rootB)
        let rows = try #require(try json(list) as? [[String: Any]])
        return try rows.map { row in
            let show = try multidoc(["show", try #require(row["uuid"] as? String), "--json"], root: rootB)
            return (try json(show) as? [String: Any])?["text"] as? String ?? "<\(show.stderr)>"
        }
    }

    @Test func aRestoreWithTheContainerAwayReachesThePeersWhenItIsBack() throws {
        defer { folder.remove() }
        try deleteOnA("precious")
        let away = folder.appending("away").path
        try FileManager.default.moveItem(atPath: container, toPath: away)
        let restore = try multidoc(["restore", "Notes"], root: rootA)
        #expect(restore.status == 0, "\(restore.stderr)")
        try FileManager.default.moveItem(atPath: away, toPath: container)
        #expect(try multidoc(["sync"], root: rootA).status == 0)
        #expect(try textOnB() == ["precious"])
    }

    @Test func aRestoreWithAnotherFolderInTheContainersPlaceWaitsForTheRightOne() throws {
        defer { folder.remove() }
        try deleteOnA("precious")
        // A device sharing something never adopts another container quietly.
        #expect(try multidoc(["new", "Kept"], root: rootA).status == 0)
        let away = folder.appending("away").path
        try FileManager.default.moveItem(atPath: container, toPath: away)
        // Another container in its place.
        #expect(try multidoc(["init", "--device-name", "Z", "--create-container", "--no-input"], root: folder.appending("Z").path).status == 0)
        _ = try multidoc(["restore", "Notes"], root: rootA)
        #expect(try multidoc(["trash", "--json"], root: rootA).stdout.contains("Notes") == false)
        try FileManager.default.removeItem(atPath: container)
        try FileManager.default.moveItem(atPath: away, toPath: container)
        _ = try multidoc(["sync"], root: rootA)
        #expect(try textOnB().contains("precious"))
    }

    @Test func aRestoreKilledPartWayAndRunAgainMakesOneDocument() async throws {
        defer { folder.remove() }
        try deleteOnA("precious")
        // Killed at growing moments until one run completes.
        var delay = 5
        var finished = false
        while !finished, delay < 5_000 {
            let acknowledged = try await multidocKilled(after: delay, ["restore", "Notes"], root: rootA)
            // Done once it exits 0, or once a killed run got as far as taking the entry out of
            // the trash (the document is then made, and the next pass publishes it).
            let trash = try multidoc(["trash", "--json"], root: rootA).stdout
            finished = acknowledged || !trash.contains("Notes")
            delay += 15
        }
        #expect(finished)
        let sync = try multidoc(["sync"], root: rootA)
        #expect(sync.status == 0, "\(sync.stderr)")
        let onB = try textOnB()
        #expect(onB == ["precious"], "after kills up to \(delay) ms: \(onB)")
        let onA = try #require(try json(try multidoc(["list", "--json"], root: rootA)) as? [[String: Any]])
        #expect(onA.count == 1)
    }
}

/// `edit --insert POS TEXT` and `--delete POS LEN`: edits at a position, for scripts.
@Suite(.serialized, .offThePool) struct EditAtPositionTests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("edit-at") }

    func text(_ root: String) throws -> String? {
        (try json(try multidoc(["show", "Doc", "--json"], root: root)) as? [String: Any])?["text"] as? String
    }

    @Test func insertAndDeleteAtAPositionReachThePeer() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Doc", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Doc", "--text", "héllo world"], root: rootA).status == 0)
        let insert = try multidoc(["edit", "Doc", "--insert", "5", ",", "--device-name", "B"], root: rootB)
        #expect(insert.status == 0, "\(insert.stderr)")
        #expect(try multidoc(["edit", "Doc", "--delete", "0", "1"], root: rootA).status == 0)
        #expect(try text(rootA) == "éllo, world")
        #expect(try text(rootB) == "éllo, world")
    }

    @Test(arguments: [
        (["--insert", "99", "x"], Int32(64), "the text has"),
        (["--delete", "3", "99"], Int32(64), "the text has"),
        (["--insert", "-1", "x"], Int32(64), "--insert"),
        (["--insert", "2"], Int32(64), "--insert takes a position"),
        (["--delete", "a", "1"], Int32(64), "--delete takes a position and a length"),
        (["--append", "x", "--insert", "1", "y"], Int32(64), "use one of"),
    ])
    func aPositionOutsideTheTextSavesNothing(arguments: [String], code: Int32, message: String) throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Doc", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Doc", "--text", "short"], root: rootA).status == 0)
        let result = try multidoc(["edit", "Doc"] + arguments, root: rootA)
        #expect(result.status == code, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(try text(rootA) == "short")
    }
}

/// A refused file has no effect: a document whose only info file is damaged is published again
/// by its creator's next pass, and its peers then find it.
@Suite(.serialized, .offThePool) struct DamagedInfoTests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("damaged-info") }

    @Test func aDamagedInfoFileIsWrittenAgainByItsDevice() throws {
        defer { folder.remove() }
        #expect(try multidoc(["sync", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["new", "Doc", "--device-name", "B"], root: rootB).status == 0)
        let documents = try FileManager.default.contentsOfDirectory(atPath: container + "/documents").filter { !$0.hasPrefix(".") }
        let document = try #require(documents.first)
        let info = try #require(try FileManager.default.contentsOfDirectory(atPath: container + "/documents/\(document)").first { $0.hasPrefix("info-") })
        let handle = try #require(FileHandle(forWritingAtPath: container + "/documents/\(document)/\(info)"))
        handle.seekToEndOfFile()
        handle.write(Data("junk".utf8))
        try handle.close()
        #expect(try multidoc(["list", "--json"], root: rootA).stdout.contains("\"Doc\"") == false)
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        let rows = try #require(try json(try multidoc(["list", "--json"], root: rootA)) as? [[String: Any]])
        #expect(rows.map { $0["name"] as? String } == ["Doc"])
    }
}
