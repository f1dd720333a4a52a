import Foundation
import Testing
import TestSupport

// Processes of one device racing each other: appends and renames of one document all land.
extension CLITests {
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
}

/// Exit statuses collected from several threads.
private final class Statuses: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int32] = []
    func append(_ value: Int32) { lock.lock(); values.append(value); lock.unlock() }
    var all: [Int32] { lock.lock(); defer { lock.unlock() }; return values }
}
