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
}
