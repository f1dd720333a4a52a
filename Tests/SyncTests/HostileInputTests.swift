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

/// A corpus of bad container files, each put beside a healthy document: it is quarantined or
/// refused with a report naming it, nothing crashes or blocks, and the importing device's store
/// does not change. Then a seeded fuzz of the log decoder (Docs/RELIABILITY.md).
@Suite(.serialized) struct HostileInputTests {
    let doc = DocumentID(Fixed.uuid(0xD0C))

    /// One hostile case: files to plant (relative to the container) and what must be said.
    struct Case: CustomStringConvertible {
        let kind: String
        let name: String
        /// Plants the files; returns the paths planted (removed after the case).
        let plant: (URL) throws -> [URL]
        /// Where the report must come from: an import's quarantine list, or verify only.
        var quarantinedOnImport = true
        /// False where only the importing device can tell (verify does not know which device is "this").
        var namedByVerify = true
        var description: String { "\(kind): \(name)" }
    }

    /// A valid log of device `device` for `doc`, as the writer would encode it.
    func log(_ device: DeviceID, sequence: UInt64, document: DocumentID? = nil, text: String = "x") throws -> TransactionLog {
        TransactionLog(document: document ?? doc, device: device, sequence: sequence,
                       stamp: Stamp(wall: 1_700_000_000_000 + sequence, counter: 0, device: device),
                       committedAt: Date(timeIntervalSince1970: 1_700_000_000), deviceName: "A",
                       changes: [LoggedChange(op: .update, id: ObjectID("text-\(doc)"), entity: Entity.textEntry, attributes: ["text": .string(text)])])
    }

    static func write(_ data: Data, _ url: URL) throws -> [URL] {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
        return [url]
    }

    static func sparse(_ url: URL, size: off_t) throws -> [URL] {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0, ftruncate(fd, size) == 0 else { throw FileIOError(path: url.path, operation: "truncate", errno: errno) }
        close(fd)
        return [url]
    }

    func corpus(a: DeviceID, b: DeviceID, random: inout SeededGenerator) throws -> [Case] {
        let container = Container(root: URL(fileURLWithPath: "/"))
        func rel(_ url: URL) -> String { String(url.path.dropFirst()) }
        let next = rel(container.logURL(doc, device: a, sequence: 3))
        let valid = try log(a, sequence: 3).encoded()
        let noise = Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) })
        let cut = Int.random(in: 1..<valid.count, using: &random)
        func json(_ text: String) -> Data { Data(text.utf8) }
        let future = Data(String(decoding: valid, as: UTF8.self).replacingOccurrences(of: "\"format\":1", with: "\"format\":9").utf8)
        var binaryLog = try log(a, sequence: 3)
        binaryLog.format = 2
        let binary = try binaryLog.encoded(container: Fixed.uuid(7))
        let binaryCut = Int.random(in: 1..<binary.count, using: &random)
        let deep = json(String(repeating: "{\"a\":", count: 50_000) + "1" + String(repeating: "}", count: 50_000))
        let deepArray = json(String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000))
        let other = DeviceID(Fixed.uuid(0xC0))
        var cases: [Case] = []
        func add(_ kind: String, _ name: String, onImport: Bool = true, _ plant: @escaping (URL) throws -> [URL]) {
            cases.append(Case(kind: kind, name: name, plant: plant, quarantinedOnImport: onImport))
        }
        // Logs.
        add("truncated log", "cut at byte \(cut)") { try Self.write(valid.prefix(cut), $0.appendingPathComponent(next)) }
        add("truncated log", "empty file") { try Self.write(Data(), $0.appendingPathComponent(next)) }
        add("random bytes", "4 KB of noise as a log") { try Self.write(noise, $0.appendingPathComponent(next)) }
        for shape in [#"{}"#, #"[]"#, #"null"#, #"{"format":1}"#, #""log""#, #"{"format":"one","changes":{}}"#,
                      #"{"format":1,"document":1,"device":[],"sequence":-3}"#] {
            add("wrong shape", shape) { try Self.write(json(shape), $0.appendingPathComponent(next)) }
        }
        add("future format", "format 9") { try Self.write(future, $0.appendingPathComponent(next)) }
        // Format 2 (binary) logs.
        add("truncated log", "binary log cut at byte \(binaryCut)") { try Self.write(binary.prefix(binaryCut), $0.appendingPathComponent(next)) }
        add("random bytes", "the MDC2 magic and noise") { try Self.write(Data("MDC2".utf8) + noise, $0.appendingPathComponent(next)) }
        add("future format", "binary log with flags this build does not know") {
            var bytes = binary
            bytes[5] = 0x80
            return try Self.write(bytes, $0.appendingPathComponent(next))
        }
        add("wrong shape", "a binary file of another kind") {
            var bytes = binary
            bytes[4] = 2
            return try Self.write(bytes, $0.appendingPathComponent(next))
        }
        add("wrong document ID", "binary log whose header names another document") {
            var lie = binaryLog
            lie.document = DocumentID(Fixed.uuid(0xBAD))
            return try Self.write(try lie.encoded(container: Fixed.uuid(7)), $0.appendingPathComponent(next))
        }
        add("wrong device ID", "binary log whose header names device C") {
            var lie = binaryLog
            lie.device = other
            return try Self.write(try lie.encoded(container: Fixed.uuid(7)), $0.appendingPathComponent(next))
        }
        add("left-over of a reset", "binary log written for a container a reset replaced", onImport: true) {
            try Self.write(try binaryLog.encoded(container: Fixed.uuid(0xBAD)), $0.appendingPathComponent(next))
        }
        cases[cases.count - 1].namedByVerify = false  // no identity here says 0xBAD was replaced
        add("gigantic count", "binary log announcing 2^60 changes") {
            var bytes = Array(binary)
            // The payload's change count follows the device name "A"; make it huge.
            let header = Int(bytes[6]) + 7
            let payloadStart = header + 1 + (bytes[header] >= 0x80 ? 1 : 0)
            var index = payloadStart
            for _ in 0..<3 { while bytes[index] >= 0x80 { index += 1 }; index += 1 }
            index += 2  // the name's length and "A"
            bytes.replaceSubrange(index...index, with: [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
            return try Self.write(Data(bytes), $0.appendingPathComponent(next))
        }
        add("gigantic file", "64 MB sparse log") { try Self.sparse($0.appendingPathComponent(next), size: 64 << 20) }
        add("deeply nested JSON", "50,000 nested objects") { try Self.write(deep, $0.appendingPathComponent(next)) }
        add("deeply nested JSON", "200,000 nested arrays") { try Self.write(deepArray, $0.appendingPathComponent(next)) }
        add("wrong document ID", "a log of another document") {
            try Self.write(try log(a, sequence: 3, document: DocumentID(Fixed.uuid(0xBAD))).encoded(), $0.appendingPathComponent(next))
        }
        add("wrong device ID", "claims device C in A's folder") { try Self.write(try log(other, sequence: 3).encoded(), $0.appendingPathComponent(next)) }
        add("wrong device ID", "stamp of another device") {
            var lie = try log(a, sequence: 3)
            lie.stamp = Stamp(wall: 1, counter: 0, device: other)
            return try Self.write(try lie.encoded(), $0.appendingPathComponent(next))
        }
        add("sequence out of range", "body says UInt64.max") {
            var lie = try log(a, sequence: 3)
            lie.sequence = .max
            return try Self.write(try lie.encoded(), $0.appendingPathComponent(next))
        }
        for name in ["0000000000000000.log", "18446744073709551615.log", "00000000000000ab.log", "abc.log", "-000000000000003.log", "3.log"] {
            add("sequence out of range", "file named \(name)", onImport: false) {
                try Self.write(valid, $0.appendingPathComponent(rel(container.logsDirectory(doc, device: a))).appendingPathComponent(name))
            }
        }
        add("special file", "a FIFO named as the next log") { root in
            let url = root.appendingPathComponent(next)
            guard mkfifo(url.path, 0o600) == 0 else { throw FileIOError(path: url.path, operation: "mkfifo", errno: errno) }
            return [url]
        }
        add("special file", "a folder named as the next log") { root in
            let url = root.appendingPathComponent(next)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return [url]
        }
        // Metadata: info, tombstones, baselines, identity, registry (reported by verify).
        let info = rel(container.infoURL(doc, device: other))
        for (name, body) in [("random bytes", String(decoding: noise.prefix(200), as: UTF8.self)),
                             ("a name with NUL", #"{"format":1,"document":"\#(doc)","name":"a\u0000b","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"sqlite"}"#),
                             ("a name with ..", #"{"format":1,"document":"\#(doc)","name":"..","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"sqlite"}"#),
                             ("a name with /", #"{"format":1,"document":"\#(doc)","name":"../../etc/passwd","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"sqlite"}"#),
                             ("a 10 KB name", #"{"format":1,"document":"\#(doc)","name":"\#(String(repeating: "n", count: 10_240))","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"sqlite"}"#),
                             ("another document", #"{"format":1,"document":"\#(DocumentID(Fixed.uuid(0xBAD)))","name":"X","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"sqlite"}"#),
                             ("an unknown store", #"{"format":1,"document":"\#(doc)","name":"X","createdBy":"\#(other)","createdByName":"C","createdAt":1,"store":"oracle"}"#)] {
            add("bad info file", name, onImport: false) { try Self.write(json(body), $0.appendingPathComponent(info)) }
        }
        add("gigantic file", "64 MB sparse info file", onImport: false) { try Self.sparse($0.appendingPathComponent(info), size: 64 << 20) }
        let tombstone = rel(container.tombstoneURL(doc, device: other))
        for (name, body) in [("random bytes", String(decoding: noise.prefix(100), as: UTF8.self)), ("wrong shape", "[1,2,3]"),
                             ("another document", #"{"format":1,"document":"\#(DocumentID(Fixed.uuid(0xBAD)))","deletedBy":"\#(other)","deletedAt":1}"#),
                             ("future format", #"{"format":9,"document":"\#(doc)","deletedBy":"\#(other)","deletedAt":1}"#)] {
            add("bad tombstone", name, onImport: false) { try Self.write(json(body), $0.appendingPathComponent(tombstone)) }
        }
        add("bad tombstone", "a name that is not <document>.<device>.json", onImport: false) {
            try Self.write(json("{}"), $0.appendingPathComponent("tombstones/\(doc).json"))
        }
        let baseline = rel(container.baselinesDirectory(doc).appendingPathComponent("\(other)-5.json"))
        for (name, body) in [("random bytes", String(decoding: noise.prefix(300), as: UTF8.self)), ("wrong shape", #"{"objects":7}"#),
                             ("another document", #"{"format":1,"document":"\#(DocumentID(Fixed.uuid(0xBAD)))","writtenBy":"\#(other)","writtenAt":1,"applied":{},"objects":{},"stamps":{},"tombstones":{}}"#),
                             ("future format", #"{"format":3,"document":"\#(doc)","writtenBy":"\#(other)","writtenAt":1,"applied":{},"objects":{},"stamps":{},"tombstones":{}}"#)] {
            add("bad baseline", name, onImport: false) { try Self.write(json(body), $0.appendingPathComponent(baseline)) }
        }
        add("gigantic file", "200 MB sparse baseline", onImport: false) { try Self.sparse($0.appendingPathComponent(baseline), size: 200 << 20) }
        add("bad registry entry", "random bytes", onImport: false) { try Self.write(noise.prefix(50), $0.appendingPathComponent("devices/\(other).json")) }
        add("bad registry entry", "another device's entry", onImport: false) {
            try Self.write(json(#"{"format":1,"device":"\#(a)","name":"A","model":"m","updatedAt":1,"applied":{}}"#), $0.appendingPathComponent("devices/\(other).json"))
        }
        add("bad identity", "random bytes", onImport: false) { try Self.write(noise.prefix(64), $0.appendingPathComponent("identity/\(other).json")) }
        add("bad identity", "future format", onImport: false) {
            try Self.write(json(#"{"format":7,"containerID":"\#(Fixed.uuid(1))","seededBy":"\#(other)","seededAt":1}"#), $0.appendingPathComponent("identity/\(other).json"))
        }
        add("bad identity", "gigantic (64 MB sparse)", onImport: false) { try Self.sparse($0.appendingPathComponent("identity/\(other).json"), size: 64 << 20) }
        add("stray name", "a file that is not a document folder", onImport: false) { try Self.write(noise.prefix(10), $0.appendingPathComponent("documents/not-a-uuid")) }
        return cases
    }

    func contents(_ device: SyncDevice) throws -> StoreContents {
        let store = try device.store(doc)
        defer { store.close() }
        return try store.read()
    }

    @Test(arguments: [SyncBackend.sqlite, .json])
    func everyBadFileIsReportedAndNoStoreChanges(backend: SyncBackend) throws {
        let seed = ProcessInfo.processInfo.environment["MULTIDOC_HOSTILE_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        print("HostileInputTests corpus seed \(seed) (MULTIDOC_HOSTILE_SEED=\(seed) replays it)")
        var random = SeededGenerator(seed: seed)
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        var b = harness.device(2, "B")
        b.replicator.refusedContainers = [Fixed.uuid(0xBAD)]
        try a.create(doc, name: "Healthy", text: "one", now: harness.clock.now())
        try a.edit(doc, text: "one two")
        try b.importPending(doc)
        _ = try Container(root: harness.container).seedIdentity(device: a.identity.id, now: harness.clock.now(), newID: Fixed.uuid(7))
        let storeURL = b.folder.appendingPathComponent("\(doc).\(backend.kind.fileName)")
        let before = try contents(b)
        let bytesBefore = try Data(contentsOf: storeURL)
        #expect(Container(root: harness.container).verify().problems.isEmpty)

        var tried: [String: Int] = [:]
        for hostile in try corpus(a: a.identity.id, b: b.identity.id, random: &random) {
            let planted = try hostile.plant(harness.container)
            defer { planted.forEach { try? FileManager.default.removeItem(at: $0) } }
            let container = Container(root: harness.container)
            let started = ContinuousClock.now
            let report = try b.importPending(doc)
            let verification = container.verify()
            _ = (container.infos(doc), container.baselines(doc), container.deviceRecords(), container.scanTombstones())
            _ = try? container.identities()
            let elapsed = ContinuousClock.now - started
            #expect(elapsed < .seconds(5), "\(hostile) took \(elapsed): something read the whole file or blocked")
            #expect(report.imported.isEmpty, "\(hostile) was imported")
            if hostile.quarantinedOnImport {
                #expect(!report.quarantined.isEmpty, "\(hostile) was not quarantined on import")
                #expect(report.quarantined.allSatisfy { !$0.reason.isEmpty })
            }
            let named = verification.problems.contains { problem in planted.contains { problem.url.path.hasPrefix($0.path) } }
            #expect(named || !hostile.namedByVerify, "verify does not name \(hostile): \(verification.problems)")
            #expect(try contents(b) == before, "\(hostile) changed B's store")
            #expect(try b.text(doc) == "one two")
            #expect(try Data(contentsOf: storeURL) == bytesBefore, "\(hostile) changed the bytes of B's store")
            tried[hostile.kind, default: 0] += 1
        }
        // The healthy log after the corpus still imports: nothing was left stuck.
        try a.edit(doc, text: "one two three")
        #expect(try b.importPending(doc).imported.count == 1)
        #expect(try b.text(doc) == "one two three")
        let total = tried.values.reduce(0, +)
        print("HostileInputTests \(backend): \(total) bad files: " + tried.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        #expect(total >= 45)
        // Not in the corpus: a valid log in this device's own folder beyond what its store
        // applied. It is imported like any peer's log, by design: the engine relies on it when
        // a store is rebuilt or recreated (the simulation's restarts and shared documents).
    }

    /// Tombstone files that no device applies, each named as a registered device's tombstone
    /// of a live document.
    static let refusedTombstones = [
        "junk appended", "format a string", "an info file's bytes", "a registry entry's bytes", "a log's bytes",
        "400,000 nested objects", "400,000 nested arrays",
    ]

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

    @Test func aStoreIsUnchangedByteForByteByABadLog() throws {
        let harness = try SyncHarness(.json)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "Healthy", text: "one", now: harness.clock.now())
        try b.importPending(doc)
        let storeURL = b.folder.appendingPathComponent("\(doc).\(StoreKind.json.fileName)")
        let bytes = try Data(contentsOf: storeURL)
        let url = Container(root: harness.container).logURL(doc, device: a.identity.id, sequence: 2)
        try Data("{\"format\":1,".utf8).write(to: url)
        let report = try b.importPending(doc)
        #expect(report.quarantined.map(\.url) == [url])
        #expect(try Data(contentsOf: storeURL) == bytes)
    }

    // MARK: Symbolic links

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

    @Test(.enabled(if: getuid() != 0, "root reads every file whatever its mode, so an unreadable log cannot be made as root"))
    func anUnreadableLogIsReported() throws {
        let harness = try SyncHarness(.sqlite)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "Healthy", text: "one", now: harness.clock.now())
        try a.edit(doc, text: "two")
        let url = Container(root: harness.container).logURL(doc, device: a.identity.id, sequence: 2)
        chmod(url.path, 0)
        defer { chmod(url.path, 0o600) }
        let report = try b.importPending(doc)
        #expect(report.imported.count == 1)
        #expect(report.quarantined.map(\.url) == [url])
        #expect(report.quarantined.first?.reason.contains("Permission denied") == true, "\(report.quarantined)")
    }

    // MARK: Fuzz

    /// Mutates valid encoded logs (bit flips, byte changes, truncation, splicing, insertion,
    /// duplication) and decodes each: never a crash; whatever is accepted obeys the path's
    /// document, device and sequence and survives a round trip.
    @Test func fuzzTheLogDecoder() throws {
        let seed = ProcessInfo.processInfo.environment["MULTIDOC_FUZZ_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        let target = ProcessInfo.processInfo.environment["MULTIDOC_FUZZ_INPUTS"].flatMap(Int.init) ?? 40_000
        print("HostileInputTests fuzz seed \(seed) (MULTIDOC_FUZZ_SEED=\(seed) replays it), \(target) inputs")
        var random = SeededGenerator(seed: seed)
        let device = Fixed.device(1)
        var seeds: [Data] = []
        for sequence in UInt64(1)...4 {
            var entry = try log(device, sequence: sequence, text: String(repeating: "é✓ ", count: Int(sequence) * 3))
            if sequence == 2 { entry.changes.append(LoggedChange(op: .delete, id: ObjectID("gone"))) }
            if sequence == 3 {
                entry.changes.append(LoggedChange(op: .insert, id: ObjectID("n"), entity: "Note",
                                                attributes: ["n": .int(7), "d": .date(Date(timeIntervalSince1970: 5)), "b": .bool(true)]))
            }
            seeds.append(try entry.encoded())
        }
        let deadline = ContinuousClock.now + .seconds(60)
        var inputs = 0, accepted = 0
        var byMutation: [String: Int] = [:]
        while inputs < target, ContinuousClock.now < deadline {
            let sequence = UInt64(Int.random(in: 0..<seeds.count, using: &random) + 1)
            var data = seeds[Int(sequence) - 1]
            let mutation: String
            switch Int.random(in: 0..<7, using: &random) {
            case 0:
                mutation = "bit flip"
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let index = Int.random(in: 0..<data.count, using: &random)
                    data[index] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                }
            case 1:
                mutation = "byte change"
                data[Int.random(in: 0..<data.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            case 2:
                mutation = "truncation"
                data = data.prefix(Int.random(in: 0..<data.count, using: &random))
            case 3:
                mutation = "splice"
                let other = seeds[Int.random(in: 0..<seeds.count, using: &random)]
                data = data.prefix(Int.random(in: 0...data.count, using: &random)) + other.suffix(Int.random(in: 0...other.count, using: &random))
            case 4:
                mutation = "insertion"
                let at = Int.random(in: 0...data.count, using: &random)
                let pieces = ["{", "}", "[", "]", ",", ":", "\"", "\\", "null", "1e999", "-0", "\u{0}", "\"format\":2,", "\"sequence\":0,", "\u{FEFF}"]
                data.insert(contentsOf: Data(pieces[Int.random(in: 0..<pieces.count, using: &random)].utf8), at: data.startIndex + at)
            case 5:
                mutation = "duplication"
                let start = Int.random(in: 0..<data.count, using: &random)
                let length = Int.random(in: 0...min(64, data.count - start), using: &random)
                let chunk = data.subdata(in: start..<(start + length))
                data.insert(contentsOf: chunk, at: data.startIndex + Int.random(in: 0...data.count, using: &random))
            default:
                mutation = "digit change"
                let digits = data.indices.filter { (48...57).contains(data[$0]) }
                if let index = digits.randomElement(using: &random) { data[index] = UInt8.random(in: 48...57, using: &random) }
            }
            byMutation[mutation, default: 0] += 1
            inputs += 1
            if let decoded = try? TransactionLog.decode(data, document: doc, device: device, sequence: sequence) {
                accepted += 1
                #expect(decoded.document == doc && decoded.device == device && decoded.sequence == sequence && decoded.stamp.device == device)
                #expect(decoded.format <= Container.formatVersion)
                let again = try TransactionLog.decode(try decoded.encoded(), document: doc, device: device, sequence: sequence)
                #expect(again == decoded, "round trip differs for seed \(seed), input \(inputs)")
            }
        }
        print("HostileInputTests fuzz: \(inputs) inputs (\(accepted) still valid logs), " + byMutation.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        #expect(inputs >= min(target, 20_000), "only \(inputs) inputs before the deadline")
    }
}
