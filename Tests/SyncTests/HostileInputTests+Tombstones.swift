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

// Tombstones no device applies hide nothing, and JSON nested past any file of the format is refused by every decoder.
extension HostileInputTests {
    /// Tombstone files that no device applies, each named as a registered device's tombstone
    /// of a live document.
    static let refusedTombstones = [
        "junk appended", "format a string", "an info file's bytes", "a registry entry's bytes", "a log's bytes",
        "400,000 nested objects", "400,000 nested arrays",
    ]

    /// A damaged tombstone names its writer as the device to supply it again only when that
    /// device is one of the container's; under a name no device has, the way out is to remove
    /// it. A file that is not a JSON object says so, not "at" an empty place.
    @Test func aDamagedTombstoneNamesItsWriterOnlyWhenTheWriterIsRegistered() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "Kept", text: "kept", now: harness.clock.now())
        try a.replicator.register(applied: [doc: [a.identity.id: 1]])
        let container = Container(root: harness.container)
        let stranger = DeviceID(UUID())
        try FileManager.default.createDirectory(at: container.tombstonesDirectory, withIntermediateDirectories: true)
        try Data("[1,2]".utf8).write(to: container.tombstoneURL(doc, device: a.identity.id))
        try Data("[1,2]".utf8).write(to: container.tombstoneURL(doc, device: stranger))
        let problems = Dictionary(uniqueKeysWithValues: container.applyTombstones().problems.map { ($0.url.lastPathComponent, $0) })
        let own = try #require(problems[container.tombstoneURL(doc, device: a.identity.id).lastPathComponent])
        #expect(own.wayOut == .replaceDamaged(writer: a.identity.id))
        #expect(own.reason.contains("for the whole file") && !own.reason.contains("at )"), "\(own.reason)")
        let junk = try #require(problems[container.tombstoneURL(doc, device: stranger).lastPathComponent])
        #expect(junk.wayOut == nil)
        #expect(junk.reason.contains("never registered") && junk.reason.contains("remove it"), "\(junk.reason)")
        #expect(container.documentIDs() == [doc])
    }

    /// A tombstone no device applies has no effect on any device: the document it names stays,
    /// a device joining later discovers it (a full look and a targeted one alike), and the
    /// pass that applies tombstones and verify name the file. Deep nesting is refused quickly.
    @Test(arguments: refusedTombstones)
    func aTombstoneNoDeviceAppliesHidesNothing(_ kind: String) throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "Kept", text: "kept", now: harness.clock.now())
        try a.replicator.register(applied: [doc: [a.identity.id: 1]])
        let container = Container(root: harness.container)
        let url = container.tombstoneURL(doc, device: a.identity.id)
        let valid = #"{"deletedAt":1,"deletedBy":"\#(a.identity.id)","document":"\#(doc)","format":1}"#
        let body: Data
        switch kind {
        case "junk appended": body = Data((valid + "\n}{\"format\":1} trailing junk").utf8)
        case "format a string": body = Data(valid.replacingOccurrences(of: #""format":1"#, with: #""format":"1""#).utf8)
        case "an info file's bytes": body = try Data(contentsOf: container.infoURL(doc, device: a.identity.id))
        case "a registry entry's bytes": body = try Data(contentsOf: container.deviceRecordURL(a.identity.id))
        case "a log's bytes": body = try Data(contentsOf: container.logURL(doc, device: a.identity.id, sequence: 1))
        case "400,000 nested objects": body = Data((String(repeating: #"{"a":"#, count: 400_000) + "1" + String(repeating: "}", count: 400_000)).utf8)
        default: body = Data((String(repeating: "[", count: 400_000) + String(repeating: "]", count: 400_000)).utf8)
        }
        try FileManager.default.createDirectory(at: container.tombstonesDirectory, withIntermediateDirectories: true)
        try body.write(to: url)
        let started = ContinuousClock.now
        let scan = container.applyTombstones()
        #expect(scan.deleted.isEmpty)
        #expect(scan.problems.map(\.url) == [url], "\(scan.problems)")
        #expect(container.documentIDs() == [doc])
        // A device joining now: the document is there to discover, whatever it looks at.
        #expect(container.discover(known: [], only: nil, inForce: [], deleted: []).found.map(\.document) == [doc])
        #expect(container.discover(known: [], only: [doc], inForce: [], deleted: []).found.map(\.document) == [doc])
        #expect(container.verify().problems.contains { $0.url == url })
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(container.documentIDs() == [doc])
        // The same bytes fixed into a valid tombstone delete the document for everyone.
        try Data(valid.utf8).write(to: url)
        #expect(container.discover(known: [], only: nil, inForce: [], deleted: []).found.isEmpty)
        #expect(container.applyTombstones().deleted == [doc])
    }

    /// The decoders a container file meets survive nesting far deeper than any file of the
    /// format has: refused, quickly, without exhausting the stack.
    @Test func deeplyNestedJSONIsRefusedByEveryDecoder() throws {
        let deep = Data((String(repeating: #"{"a":"#, count: 400_000) + "1" + String(repeating: "}", count: 400_000)).utf8)
        let arrays = Data((String(repeating: "[", count: 400_000) + String(repeating: "]", count: 400_000)).utf8)
        let folder = try TemporaryDirectory("deep")
        defer { folder.remove() }
        let file = folder.appending("deep.json")
        for data in [deep, arrays] {
            try data.write(to: file)
            let started = ContinuousClock.now
            #expect(throws: SyncError.self) { try Container.dump(fileAt: file) }
            #expect(throws: (any Error).self) { try Container.decodeJSON(DocumentTombstone.self, from: data) }
            #expect(throws: (any Error).self) { try Container.decodeJSON(Baseline.self, from: data) }
            #expect(throws: (any Error).self) { try Container.decodeJSON(DeviceRecord.self, from: data) }
            #expect(throws: LogDecodingError.self) { try TransactionLog.decode(data, document: doc, device: Fixed.device(1), sequence: 1) }
            #expect(ContinuousClock.now - started < .seconds(5))
        }
    }
}
