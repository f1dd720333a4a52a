import Foundation
import Testing
import TestSupport

// What the CLI does when things go wrong: a full disk, damaged records and stores, a deleted document restored.
extension CLITests {
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

    /// A record damaged on the device: `show` by name says which file is damaged and how to
    /// rebuild it, instead of that nothing matches; `sync --attempt-error-recovery on` does.
    @Test func aDamagedRecordIsNamedWhenItsDocumentIsAskedFor() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Kept"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Kept", "--text", "kept"], root: rootA).status == 0)
        let documents = URL(fileURLWithPath: rootA).appendingPathComponent("Documents")
        let id = try #require(try FileManager.default.contentsOfDirectory(atPath: documents.path).first { UUID(uuidString: $0) != nil })
        let record = documents.appendingPathComponent(id).appendingPathComponent("document.json")
        try Data("{bad".utf8).write(to: record)
        let show = try multidoc(["show", "Kept"], root: rootA)
        #expect(show.status != 0)
        #expect(show.stderr.contains(record.path) && show.stderr.contains("--attempt-error-recovery on"), "\(show.stderr)")
        #expect(!show.stderr.contains("no document matches"), "\(show.stderr)")
        #expect(try multidoc(["sync", "--attempt-error-recovery", "on"], root: rootA).status == 0)
        let after = try multidoc(["show", "Kept", "--json"], root: rootA)
        #expect(after.status == 0, "\(after.stderr)")
        #expect((try json(after) as? [String: Any])?["text"] as? String == "kept")
    }
}
