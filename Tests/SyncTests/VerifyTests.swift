#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Model
@testable import Sync
import Testing
import TestSupport

/// `Container.verify()` on many files, on folders where files belong, on names no device
/// writes, and on folders it cannot list: every problem named once, with its path, what is
/// wrong and what to do; a folder it cannot list is never taken for an empty one.
@Suite struct VerifyTests {
    let doc = DocumentID(Fixed.uuid(0xD0C))
    let stranger = DeviceID(Fixed.uuid(0x5757))

    /// 20,000 stray names in one document folder (100,000 took 316 s when the CLI merged the
    /// problem lists with `contains`): each is named exactly once, in path order, and the
    /// conflict copies of `identity/` and `devices/` are in the same report.
    @Test func twentyThousandStrayFilesAreEachNamedOnceInPathOrder() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "Doc", text: "one", now: harness.clock.now())
        let container = Container(root: harness.container)
        let folder = container.documentDirectory(doc)
        let count = 20_000
        for index in 0..<count {
            #expect(FileManager.default.createFile(atPath: folder.appendingPathComponent("stray\(index)").path, contents: nil))
        }
        try FileManager.default.createDirectory(at: container.identityDirectory, withIntermediateDirectories: true)
        let copies = [
            container.identityDirectory.appendingPathComponent("x.sync-conflict-20260101-000000-ABC.json"),
            container.devicesDirectory.appendingPathComponent("y.sync-conflict-20260101-000000-ABC.json"),
        ]
        for copy in copies {
            try FileManager.default.createDirectory(at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("{}".utf8).write(to: copy)
        }
        let result = container.verify()
        #expect(result.problems.count == count + copies.count)
        #expect(Set(result.problems.map(\.url.path)).count == result.problems.count)
        let paths = result.problems.map(\.url.path)
        #expect(paths == paths.sorted())
        for copy in copies { #expect(result.problems.contains { $0.url == copy && $0.reason.contains("conflict copy") }) }
        #expect(result.checkedLogs == 1)
    }

    /// A folder where an identity, registry entry, info file, baseline, tombstone or log
    /// belongs, and a log named past the last sequence a device can write: each named with what
    /// is wrong and what to do.
    @Test func foldersWhereFilesBelongAndStrangersLogNamesAreNamed() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "Doc", text: "one", now: harness.clock.now())
        let container = Container(root: harness.container)
        let folders = [
            (container.identityDirectory.appendingPathComponent("\(stranger).json"), "an identity file"),
            (container.deviceRecordURL(stranger), "a device's registry entry"),
            (container.infoURL(doc, device: stranger), "an info file"),
            (container.baselinesDirectory(doc).appendingPathComponent("\(stranger)-3.json"), "a baseline"),
            (container.tombstoneURL(doc, device: stranger), "a tombstone"),
            (container.logURL(doc, device: a.identity.id, sequence: 2), "a log"),
        ]
        for (url, _) in folders { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        let strangersLogs = [
            container.logsDirectory(doc, device: a.identity.id).appendingPathComponent("9999999999999999.log"),
            container.logsDirectory(doc, device: stranger).appendingPathComponent("9999999999999999.log"),
            container.logsDirectory(doc, device: stranger).appendingPathComponent("0000000000000000.log"),
        ]
        for url in strangersLogs {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("{}".utf8).write(to: url)
        }
        let problems = container.verify().problems
        for (url, what) in folders {
            let reason = problems.first { $0.url == url }?.reason
            #expect(reason?.contains("a folder where \(what) belongs") == true, "\(url.path): \(reason ?? "not named")")
            #expect(reason?.contains("remove it") == true, "\(reason ?? "")")
        }
        for url in strangersLogs {
            let reason = problems.first { $0.url == url }?.reason
            #expect(reason?.contains("is outside 1…\(ContainerBounds.maximumSequence)") == true, "\(url.path): \(reason ?? "not named")")
            #expect(reason?.contains("remove it") == true)
        }
        #expect(problems.count == folders.count + strangersLogs.count, "\(problems)")
    }

    /// Works as root: a file where `identity/` belongs cannot be listed. The device must not
    /// take it for an empty folder (and seed), and verify must say so rather than "all valid".
    /// What lies beside the format's four folders is named (a device's private key with the
    /// warning it needs); dot names, such as a replication engine's own, are not.
    @Test func strayEntriesAtTheTopAreNamedAndAPrivateKeyIsCalledOut() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "Doc", text: "one", now: harness.clock.now())
        let container = Container(root: harness.container)
        try Data("hello".utf8).write(to: container.root.appendingPathComponent("README"))
        try Data("secret".utf8).write(to: container.root.appendingPathComponent("device.key"))
        try FileManager.default.createDirectory(at: container.root.appendingPathComponent("inside"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: container.root.appendingPathComponent(".stfolder"), withIntermediateDirectories: true)
        let problems = Dictionary(uniqueKeysWithValues: container.verify().problems.map { ($0.url.lastPathComponent, $0.reason) })
        #expect(Set(problems.keys) == ["README", "device.key", "inside"], "\(problems)")
        #expect(problems["README"]?.contains("move it out") == true)
        #expect(problems["device.key"]?.contains("private") == true)
    }

    @Test func aFileWhereTheIdentityFolderBelongsIsAnErrorNotAnEmptyContainer() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let container = Container(root: harness.container)
        try Data("not a folder".utf8).write(to: container.identityDirectory)
        #expect(throws: SyncError.self) { try container.identity() }
        do {
            _ = try container.checkIdentity(remembered: nil, canSeed: { true }, device: Fixed.device(1), now: harness.clock.now(), newID: Fixed.uuid(7))
            Issue.record("an identity was seeded into a container whose identity folder is a file")
        } catch {
            #expect(error.kind == .containerUnavailable)
            #expect(error.path == container.identityDirectory.path)
            #expect(error.description.contains("not a folder"), "\(error)")
        }
        let problems = container.verify().problems
        #expect(problems.contains { $0.url == container.identityDirectory && $0.reason.contains("cannot be listed") }, "\(problems)")
    }

    /// Works as root: a file where `documents/` belongs is named by verify, and adopting a new
    /// container refuses (taken for an empty folder, it would make every cloud document local).
    @Test func aFileWhereTheDocumentsFolderBelongsIsNamedAndStopsAnAdoption() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let container = Container(root: harness.container)
        _ = try container.seedIdentity(device: Fixed.device(1), now: harness.clock.now(), newID: Fixed.uuid(7))
        try Data("not a folder".utf8).write(to: container.documentsDirectory)
        let problems = container.verify().problems
        #expect(problems.contains { $0.url == container.documentsDirectory && $0.reason.contains("cannot be listed") }, "\(problems)")
        #expect(throws: SyncError.self) {
            try container.adopt(replacing: Fixed.uuid(6), device: Fixed.device(1), now: harness.clock.now(), newID: Fixed.uuid(8))
        }
    }

    /// A container named by a path with a `..` in it (as a caller may give it) reads its logs
    /// and checks clean: the path a log is read by and the path checked for links agree.
    @Test func aRootNamedWithDotDotReadsItsLogs() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "Doc", text: "one", now: harness.clock.now())
        let beside = harness.container.deletingLastPathComponent().appendingPathComponent("beside", isDirectory: true)
        try FileManager.default.createDirectory(at: beside, withIntermediateDirectories: true)
        let roundabout = URL(fileURLWithPath: beside.path + "/../" + harness.container.lastPathComponent, isDirectory: true)
        let container = Container(root: roundabout)
        #expect(container.rootPath != container.standardRootPath, "\(container.rootPath) \(container.standardRootPath)")
        #expect(try container.readLog(doc, device: a.identity.id, sequence: 1).sequence == 1)
        #expect(container.verify().problems.isEmpty, "\(container.verify().problems)")
    }

    /// A log lost between two that are there: `verify` names the gap while a joining device
    /// would wait on it, and stops naming it once a baseline covers it (`container repair`),
    /// because a device joining then reads the baseline and goes on: verify says what imports do.
    @Test(arguments: SyncBackend.allCases)
    func aGapABaselineCoversIsNotNamed(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "Doc", text: "one", now: harness.clock.now())
        for text in ["two", "three", "four"] {
            harness.clock.advance(1)
            try a.edit(doc, text: text)
        }
        let container = Container(root: harness.container)
        try FileManager.default.removeItem(at: container.logURL(doc, device: a.identity.id, sequence: 2))
        let after = container.logURL(doc, device: a.identity.id, sequence: 3)
        let named = container.verify().problems.filter { $0.url == after }
        #expect(named.map(\.reason) == ["logs 2…2 of this device are missing; later ones wait for them"])

        let supplied = try #require(try a.replicator.resupplyLostLogs(doc, store: try a.store(doc)))
        #expect(supplied.lost == [2])
        #expect(container.verify().problems.isEmpty, "\(container.verify().problems)")
        let b = harness.device(2, "B")
        try b.importPending(doc)
        #expect(try b.text(doc) == "four")
    }

    @Test(.enabled(if: getuid() != 0, "root lists every folder whatever its mode, so an unlistable folder cannot be made as root"))
    func anIdentityFolderThisUserCannotListSeedsNothing() throws {
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let container = Container(root: harness.container)
        _ = try container.seedIdentity(device: Fixed.device(1), now: harness.clock.now(), newID: Fixed.uuid(7))
        // Writable and searchable, not readable: the old code listed nothing and seeded.
        chmod(container.identityDirectory.path, 0o300)
        defer { chmod(container.identityDirectory.path, 0o700) }
        do {
            _ = try container.checkIdentity(remembered: nil, canSeed: { true }, device: Fixed.device(2), now: harness.clock.now(), newID: Fixed.uuid(1))
            Issue.record("an identity was seeded into an identity folder this user cannot list")
        } catch {
            #expect(error.kind == .containerUnavailable)
            #expect(error.description.contains("permission denied"), "\(error)")
        }
        chmod(container.identityDirectory.path, 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: container.identityDirectory.path) == ["\(Fixed.device(1)).json"])
        try FileManager.default.createDirectory(at: container.documentsDirectory, withIntermediateDirectories: true)
        chmod(container.documentsDirectory.path, 0)
        defer { chmod(container.documentsDirectory.path, 0o700) }
        let problems = container.verify().problems
        #expect(problems.contains { $0.url == container.documentsDirectory && $0.reason.contains("permission denied") }, "\(problems)")
    }
}
