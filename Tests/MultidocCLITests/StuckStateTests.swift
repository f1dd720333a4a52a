import Foundation
import Testing
import TestSupport

/// Issue 35's stuck states, through the CLI: a wrong clock cuts no device off and is named, and
/// every stuck state names the command that gets out of it.
@Suite(.serialized, .offThePool) struct StuckStateTests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("stuck") }

    private static let year = 365 * 86_400

    private func text(_ document: String, on root: String, clockOffset: Int? = nil) throws -> String? {
        let shown = try multidoc(["show", document, "--json"], root: root, clockOffset: clockOffset)
        return (try? json(shown) as? [String: Any])?["text"] as? String
    }

    /// A save made with the clock a year ahead reaches a peer at once; after the writer's clock is
    /// set right its next save does too (none waits behind the first); the writer's `sync` and
    /// `status` say its clock reads a year ahead; a new device whose clock is a year behind opens
    /// the document and is told its clock is behind.
    @Test func aWrongClockCutsNoDeviceOffAndIsNamed() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Clocked", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["sync", "--device-name", "B"], root: rootB).status == 0)
        let ahead = try multidoc(["edit", "Clocked", "--text", "a year ahead"], root: rootA, clockOffset: Self.year)
        #expect(ahead.status == 0, "\(ahead.stderr)")
        let synced = try multidoc(["sync"], root: rootB)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(try text("Clocked", on: rootB) == "a year ahead")

        // The writer hears of it, in sync and in status.
        let writerSync = try multidoc(["sync"], root: rootA, clockOffset: Self.year)
        #expect(writerSync.stderr.contains("clock reads 365 days ahead of device "), "\(writerSync.stderr)")
        #expect(writerSync.stderr.contains("clock right"), "\(writerSync.stderr)")
        let writerStatus = try multidoc(["status"], root: rootA, clockOffset: Self.year)
        #expect(writerStatus.stderr.contains("365 days ahead"), "\(writerStatus.stdout)\(writerStatus.stderr)")

        // Its clock set right, its next save is not held behind the first.
        #expect(try multidoc(["edit", "Clocked", "--text", "clock right"], root: rootA).status == 0)
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        #expect(try text("Clocked", on: rootB) == "clock right")

        // A new device whose clock is a year behind imports normally, and is told.
        let rootC = folder.appending("C").path
        try FileManager.default.createDirectory(atPath: rootC, withIntermediateDirectories: true)
        let listed = try multidoc(["list", "--device-name", "C"], root: rootC, clockOffset: -Self.year)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stderr.contains("clock reads 365 days behind every peer's"), "\(listed.stderr)")
        #expect(try text("Clocked", on: rootC, clockOffset: -Self.year) == "clock right")
        // And what it saves wins everywhere.
        #expect(try multidoc(["edit", "Clocked", "--text", "from C"], root: rootC, clockOffset: -Self.year).status == 0)
        #expect(try multidoc(["sync"], root: rootB).status == 0)
        #expect(try text("Clocked", on: rootB) == "from C")
    }

    /// A copied root whose save waits behind the slot the original took: `sync`, `list`,
    /// `status` and `container verify` on it name `multidoc device new-identity`, and running it
    /// gets the copy going again.
    @Test func aCopiedRootIsToldToTakeANewIdentity() throws {
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

        let way = "multidoc device new-identity"
        let sync = try multidoc(["sync"], root: copy)
        #expect(sync.status == 10, "\(sync.stderr)")
        #expect(sync.stderr.contains("a different log with this sequence") && sync.stderr.contains(way), "\(sync.stderr)")
        let list = try multidoc(["list"], root: copy)
        #expect(list.stderr.contains(way), "\(list.stderr)")
        let status = try multidoc(["status"], root: copy)
        #expect(status.stderr.contains(way), "\(status.stdout)\(status.stderr)")
        let verify = try multidoc(["container", "verify"], root: copy)
        #expect(verify.status == 9, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stdout.contains("Twin") && verify.stdout.contains(way), "\(verify.stdout)")
        // The original is fine: its verify finds nothing.
        #expect(try multidoc(["container", "verify"], root: rootA).status == 0)

        #expect(try multidoc(["device", "new-identity", "--yes"], root: copy).status == 0)
        let after = try multidoc(["sync"], root: copy)
        #expect(after.status == 0, "\(after.stderr)")
        #expect(!after.stderr.contains(way), "\(after.stderr)")
        #expect(try multidoc(["container", "verify"], root: copy).status == 0)
        for root in [rootA, rootB] { #expect(try multidoc(["sync"], root: root).status == 0) }
        let texts = try [rootA, rootB, copy].map { try text("Twin", on: $0) }
        #expect(Set(texts).count == 1, "\(texts)")
        #expect(texts.first??.contains(" from the copy") == true && texts.first??.contains(" from A") == true, "\(texts)")
    }
}
