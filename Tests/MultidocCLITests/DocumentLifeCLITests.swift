import Foundation
import Testing
import TestSupport

/// `list --json` says each document's life (Docs/STATES.md, Docs/CLI.md) beside the fields it
/// agrees with.
@Suite(.serialized, .offThePool) struct DocumentLifeCLITests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("document-life") }

    @Test func listSaysALifeThatAgreesWithItsOtherFields() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "hello"], root: rootA).status == 0)
        for root in [rootA, rootB] {
            let list = try multidoc(["list", "--json"], root: root)
            #expect(list.status == 0, "\(list.stderr)")
            let row = try #require((try json(list) as? [[String: Any]])?.first)
            #expect(row["life"] as? String == "downloaded", "\(row)")
            #expect(row["downloadPercent"] as? Int == 100 && row["previewed"] as? Bool == false)
        }
    }
}
