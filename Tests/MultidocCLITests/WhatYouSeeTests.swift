import Foundation
import Testing
import TestSupport

/// Issue 35's joints, through the CLI as a user meets them: what `list` says of a peer's
/// document holds afterwards.
@Suite(.serialized) struct WhatYouSeeTests: TwoDevices {
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
    }
}
