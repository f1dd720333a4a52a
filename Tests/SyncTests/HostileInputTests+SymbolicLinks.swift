#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
@testable import Sync
import Testing
import TestSupport

// Symbolic links in the container, wherever they are planted, are never followed.
extension HostileInputTests {
    @Test func symbolicLinksInTheContainerAreNeverFollowed() throws {
        let harness = try SyncHarness(.sqlite)
        defer { harness.folder.remove() }
        let elsewhere = try TemporaryDirectory("elsewhere")
        defer { elsewhere.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        let container = Container(root: harness.container)
        try a.create(doc, name: "Healthy", text: "one", now: harness.clock.now())
        try b.importPending(doc)

        // A log that is a link to /etc/passwd: refused, not read.
        let logURL = container.logURL(doc, device: a.identity.id, sequence: 2)
        try FileManager.default.createSymbolicLink(atPath: logURL.path, withDestinationPath: "/etc/passwd")
        let report = try b.importPending(doc)
        #expect(report.quarantined.first?.reason.contains("symbolic link") == true, "\(report.quarantined)")
        #expect(container.verify().problems.contains { $0.url == logURL && $0.reason.contains("/etc/passwd") })
        try FileManager.default.removeItem(at: logURL)

        // A document folder that is a link to a folder outside, holding a valid-looking log.
        let other = DocumentID(Fixed.uuid(0xE15E))
        let outside = elsewhere.url.appendingPathComponent("logs/\(a.identity.id)")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try log(a.identity.id, sequence: 1, document: other).encoded().write(to: outside.appendingPathComponent("0000000000000001.log"))
        try FileManager.default.createSymbolicLink(at: container.documentDirectory(other), withDestinationURL: elsewhere.url)
        let listing = try FileManager.default.contentsOfDirectory(atPath: elsewhere.url.path)
        #expect(container.logDevices(other).isEmpty)
        #expect(throws: LogDecodingError.self) { try container.readLog(other, device: a.identity.id, sequence: 1) }
        #expect(try b.importPending(other).imported.isEmpty)
        // Writing through it is refused; nothing appears outside.
        let store = try a.store(other)
        try a.replicator.commit([.insert(ObjectID("t"), entity: Entity.textEntry, attributes: ["text": .string("x")])], document: other, to: store, ship: true)
        #expect(throws: SyncError.self) { try a.replicator.flush(other, in: store) }
        #expect(try store.read().sync.outbox.count == 1, "the log stays in the outbox")
        store.close()
        #expect(throws: SyncError.self) {
            try a.replicator.publish(DocumentInfo(document: other, name: try DocumentName("X"), createdBy: a.identity.id, createdByName: "A", createdAt: Date(), store: .sqlite), store: try a.store(other), baseline: true)
        }
        _ = try a.replicator.compact(other, store: try a.store(other))
        try a.replicator.delete(other)  // removes the link, not what it points to
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.url.path) == listing)
        #expect(FileManager.default.fileExists(atPath: outside.appendingPathComponent("0000000000000001.log").path))
        #expect(container.verify().problems.allSatisfy { !$0.url.path.hasPrefix(elsewhere.url.path) })

        // A device's log folder, and then `logs/` itself, that are links to a folder holding
        // valid-looking logs: the import's listing sees no logs there, and imports nothing.
        let third = Fixed.device(3)
        let forged = elsewhere.url.appendingPathComponent("forged")
        try FileManager.default.createDirectory(at: forged, withIntermediateDirectories: true)
        try log(third, sequence: 1, document: doc).encoded().write(to: forged.appendingPathComponent("0000000000000001.log"))
        let deviceFolder = container.documentDirectory(doc).appendingPathComponent("logs/\(third)")
        try FileManager.default.createSymbolicLink(at: deviceFolder, withDestinationURL: forged)
        #expect((container.listing(doc).logs[third] ?? []).isEmpty)
        // …while the real device folder beside it is listed.
        #expect(container.listing(doc).logs[a.identity.id] == [1])
        #expect(try b.importPending(doc).imported.isEmpty)
        try FileManager.default.removeItem(at: deviceFolder)
        let logs = container.documentDirectory(doc).appendingPathComponent("logs")
        try FileManager.default.moveItem(at: logs, to: elsewhere.url.appendingPathComponent("moved-logs"))
        try FileManager.default.createSymbolicLink(at: logs, withDestinationURL: elsewhere.url.appendingPathComponent("moved-logs"))
        #expect(container.listing(doc).logs.isEmpty)
        #expect(try b.importPending(doc).imported.isEmpty)
    }
}
