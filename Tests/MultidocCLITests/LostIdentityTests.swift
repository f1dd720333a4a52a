import Foundation
import Testing
import TestSupport

/// A container whose identity file is damaged or gone: every device says so with the way out
/// (`container repair`, not `container adopt`, which would leave every document behind), and
/// repair on a device that synced with it writes the identity it remembers again.
@Suite(.serialized, .offThePool) struct LostIdentityTests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("lost-identity") }

    func identityFiles() throws -> [URL] {
        let identity = URL(fileURLWithPath: container).appendingPathComponent("identity")
        return try FileManager.default.contentsOfDirectory(at: identity, includingPropertiesForKeys: nil).filter { $0.pathExtension == "json" }
    }

    func text(on root: String) throws -> String? {
        let show = try multidoc(["show", "Notes", "--json"], root: root)
        return show.status == 0 ? (try json(show) as? [String: Any])?["text"] as? String : nil
    }

    @Test(arguments: [false, true])
    func repairWritesALostIdentityAgainAndEveryDocumentStaysShared(removed: Bool) throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "one"], root: rootA).status == 0)
        #expect(try text(on: rootB) == "one")
        let files = try identityFiles()
        #expect(files.count == 1)
        for file in files {
            if removed { try FileManager.default.removeItem(at: file) } else { try Data("garbage".utf8).write(to: file) }
        }

        let stuck = try multidoc(["sync"], root: rootB)
        #expect(stuck.status != 0)
        #expect(stuck.stderr.contains("multidoc container repair"), "\(stuck.stderr)")
        #expect(!stuck.stderr.contains("container adopt"), "\(stuck.stderr)")

        let repair = try multidoc(["container", "repair"], root: rootB)
        #expect(repair.status == 0, "\(repair.stderr)")
        #expect(repair.stderr.contains("no identity left"), "\(repair.stderr)")
        // Once is enough: the container has its identity again.
        let again = try multidoc(["container", "repair"], root: rootB)
        #expect(again.status == 0 && !again.stderr.contains("no identity left"), "\(again.stderr)")

        for root in [rootA, rootB] {
            let sync = try multidoc(["sync"], root: root)
            #expect(sync.status == 0, "\(sync.stderr)")
        }
        #expect(try multidoc(["edit", "Notes", "--append", " two"], root: rootB).status == 0)
        #expect(try text(on: rootA) == "one two")
        let list = try multidoc(["list", "--json"], root: rootA)
        let rows = try #require(try json(list) as? [[String: Any]])
        #expect(rows.map { $0["location"] as? String } == ["cloud"], "\(list.stdout)")
    }
}
