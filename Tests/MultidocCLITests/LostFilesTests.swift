import Foundation
import Testing
import TestSupport

/// Container files damaged and then removed, as `container verify` says to: what they carried
/// still reaches every device (DaysOfUse findings 1 and 3).
@Suite(.serialized) struct LostFilesTests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("lost") }

    private func names(on root: String) throws -> [String] {
        let rows = try #require(try json(try multidoc(["list", "--json"], root: root)) as? [[String: Any]])
        return rows.compactMap { $0["name"] as? String }.sorted()
    }

    private func text(_ document: String, on root: String) throws -> String? {
        (try json(try multidoc(["show", document, "--json"], root: root)) as? [String: Any])?["text"] as? String
    }

    private func files(_ folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: container + "/" + folder)) ?? []).filter { !$0.hasPrefix(".") }.sorted()
    }

    /// A deletes a document B has; A's tombstone is cut short before B sees it, and removed as
    /// `container verify` says. A's next pass writes its tombstone again, B drops the document
    /// (into its trash), and the container checks clean.
    @Test func aDamagedTombstoneIsWrittenAgainByItsDevice() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Gone"], root: rootA).status == 0)
        #expect(try multidoc(["new", "Kept"], root: rootA).status == 0)
        #expect(try names(on: rootB) == ["Gone", "Kept"])
        #expect(try multidoc(["rm", "Gone"], root: rootA).status == 0)
        let tombstone = try #require(files("tombstones").first)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: container + "/tombstones/" + tombstone))
        try handle.truncate(atOffset: 10)
        try handle.close()

        #expect(try names(on: rootB) == ["Gone", "Kept"])
        let verify = try multidoc(["container", "verify"], root: rootB)
        #expect((verify.stdout + verify.stderr).contains(tombstone), "\(verify.stdout)\(verify.stderr)")
        try FileManager.default.removeItem(atPath: container + "/tombstones/" + tombstone)

        #expect(try multidoc(["sync"], root: rootA).status == 0)
        #expect(files("tombstones") == [tombstone])
        #expect(try names(on: rootB) == ["Kept"])
        #expect(try names(on: rootA) == ["Kept"])
        #expect(try multidoc(["trash"], root: rootB).stdout.contains("Gone"))
        let clean = try multidoc(["container", "verify"], root: rootB)
        #expect(clean.status == 0, "\(clean.stdout)\(clean.stderr)")
    }

    /// B applied A's deletion; A's tombstone is then lost while A is away. B writes a tombstone
    /// of its own, so a device that never saw the deletion (C, offline meanwhile) drops the document.
    @Test func aDeletionAppliedByAPeerOutlivesTheDeletersTombstone() throws {
        defer { folder.remove() }
        let rootC = folder.appending("C").path
        try FileManager.default.createDirectory(atPath: rootC, withIntermediateDirectories: true)
        #expect(try multidoc(["new", "Gone"], root: rootA).status == 0)
        #expect(try names(on: rootB) == ["Gone"])
        #expect(try names(on: rootC) == ["Gone"])
        #expect(try multidoc(["rm", "Gone"], root: rootA).status == 0)
        #expect(try names(on: rootB) == [])
        let tombstone = try #require(files("tombstones").first)
        try FileManager.default.removeItem(atPath: container + "/tombstones/" + tombstone)

        #expect(try multidoc(["sync"], root: rootB).status == 0)
        let written = files("tombstones")
        #expect(written.count == 1 && written != [tombstone], "\(written)")
        #expect(try names(on: rootC) == [])
        #expect(try names(on: rootB) == [])
    }

    /// A's last log is damaged; B quarantines it and names A and `container repair` as the way
    /// out. Removed, A's repair supplies it again (a baseline covering it), B gets the whole text,
    /// and A's next pass needs no repair of its own.
    @Test func aDevicesLastLogLostIsSuppliedAgainByItsWriter() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Doc"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Doc", "--append", "hello"], root: rootA).status == 0)
        let document = try #require(files("documents").first)
        let writer = try #require(files("documents/\(document)/logs").first)
        let logs = files("documents/\(document)/logs/\(writer)")
        let last = try #require(logs.last)
        let path = container + "/documents/\(document)/logs/\(writer)/\(last)"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("junk".utf8))
        try handle.close()

        let list = try multidoc(["list"], root: rootB)
        #expect(list.stderr.contains(last) && list.stderr.contains("multidoc container repair") && list.stderr.contains(writer), "\(list.stderr)")
        try FileManager.default.removeItem(atPath: path)
        _ = try multidoc(["container", "repair"], root: rootB)
        let repair = try multidoc(["container", "repair"], root: rootA)
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stdout.contains("Doc: repaired"), "\(repair.stdout)")
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        let rows = try #require(try json(try multidoc(["list", "--json"], root: rootB)) as? [[String: Any]])
        #expect(rows.first?["downloadPercent"] as? Int == 100, "\(rows)")
        let show = try #require(try json(try multidoc(["show", "Doc", "--json"], root: rootB)) as? [String: Any])
        #expect(show["text"] as? String == (try text("Doc", on: rootA)), "\(show)")
        #expect((show["text"] as? String)?.hasSuffix("hello") == true, "\(show)")
        #expect(try multidoc(["container", "repair"], root: rootA).stdout.contains("nothing to repair"))
    }

    /// The same loss mended by the writer's next full pass, with no repair asked for: B, which
    /// applied nothing of the document, gets it whole.
    /// Every log of a device gone (a pass cannot tell this from a deletion on its way: it
    /// writes nothing), then `container repair` on the writer: supplied again.
    @Test func aWritersRepairSuppliesAllItsLostLogs() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Doc"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Doc", "--append", "hello"], root: rootA).status == 0)
        let document = try #require(files("documents").first)
        let writer = try #require(files("documents/\(document)/logs").first)
        for log in files("documents/\(document)/logs/\(writer)") {
            try FileManager.default.removeItem(atPath: container + "/documents/\(document)/logs/\(writer)/\(log)")
        }
        #expect(try multidoc(["sync"], root: rootA).status == 0)
        #expect(try multidoc(["container", "repair"], root: rootA).status == 0)
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        let show = try #require(try json(try multidoc(["show", "Doc", "--json"], root: rootB)) as? [String: Any])
        #expect(show["text"] as? String == (try text("Doc", on: rootA)), "\(show)")
        #expect((show["text"] as? String)?.hasSuffix("hello") == true, "\(show)")
    }
}
