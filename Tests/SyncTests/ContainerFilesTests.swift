import Foundation
import Model
@testable import Sync
import Testing
import TestSupport

/// What a replicated folder leaves beside finished files, and what readers make of it.
@Suite struct ContainerFilesTests {
    @Test(arguments: [
        ".syncthing.0000000000000001.log.tmp",  // Syncthing, while a file arrives
        "~syncthing~0000000000000001.log.tmp",  // Syncthing on file systems without dot names
        ".stfolder", ".stignore", ".stversions",  // Syncthing's folder marker, ignores, versions
        ".tmp-0000000000000001.log",  // our own temporary name
        "0000000000000001.log.tmp", "0000000000000001.log.part", "0000000000000001.log.partial",  // rsync, browsers, cloud drives
        "0000000000000001.log~", ".0000000000000001.log.swp", "info-x.json.bak", "info-x.json.orig",
    ])
    func temporaryAndBackupNamesAreIgnoredButNotConflicts(name: String) {
        #expect(ContainerFiles.isIgnored(name))
        #expect(!ContainerFiles.isConflictCopy(name))
    }

    @Test(arguments: [
        "0000000000000002.sync-conflict-20240101-120000-ABCDEF7.log",  // Syncthing
        "info-5c44701e-70dc-4c9c-b993-63fee51b38f6.sync-conflict-20261122-213743-POC6Z6I.json",
        "d0000000-0000-4000-8000-000000000001 (conflicted copy 2024-01-01).json",  // Dropbox
        "0000000000000002 (Conflict 1).log",  // other cloud drives
    ])
    func conflictCopiesAreIgnoredAndRecognised(name: String) {
        #expect(ContainerFiles.isIgnored(name))
        #expect(ContainerFiles.isConflictCopy(name))
    }

    @Test(arguments: ["0000000000000001.log", "info-5c44701e-70dc-4c9c-b993-63fee51b38f6.json", "d0000000-0000-4000-8000-000000000001.json", "baselines"])
    func finishedNamesAreRead(name: String) {
        #expect(!ContainerFiles.isIgnored(name))
    }

    /// A create killed between making the document's folder and renaming its info file into
    /// place, or a replica that got the folder's logs first, is unfinished, not damaged.
    @Test func aDocumentFolderWithoutItsInfoFileIsWaitingNotAProblem() throws {
        let folder = try TemporaryDirectory("verify-waiting")
        defer { folder.remove() }
        let container = Container(root: folder.url)
        let id = DocumentID(Fixed.uuid(0x51))
        try FileManager.default.createDirectory(at: container.documentDirectory(id), withIntermediateDirectories: true)
        try Data("half".utf8).write(to: container.documentDirectory(id).appendingPathComponent(".tmp-info-x.json"))
        var result = container.verify()
        #expect(result.problems.isEmpty, "\(result.problems)")
        #expect(result.waiting.map(\.url.lastPathComponent) == [id.description])
        // An info file that is there but unreadable is a problem.
        try Data("{".utf8).write(to: container.infoURL(id, device: Fixed.device(1)))
        result = container.verify()
        #expect(result.waiting.isEmpty)
        #expect(result.problems.contains { $0.reason.contains("no readable info file") })
        #expect(result.problems.contains { $0.reason.contains("not document metadata") })
    }

    @Test func conflictCopiesOfSharedFilesAreReportedNotRead() throws {
        let folder = try TemporaryDirectory("conflicts")
        defer { folder.remove() }
        let container = Container(root: folder.url)
        let seeded = try container.seedIdentity(device: Fixed.device(1), now: Date(), newID: Fixed.uuid(0x500))
        let identityFile = container.identityDirectory.appendingPathComponent("\(Fixed.device(1)).json")
        // A conflict copy with a smaller container ID must not take part in the election.
        let copy = container.identityDirectory.appendingPathComponent("\(Fixed.device(1)).sync-conflict-20240101-120000-ABCDEF7.json")
        let text = try String(contentsOf: identityFile, encoding: .utf8).replacingOccurrences(of: Fixed.uuid(0x500).uuidString, with: Fixed.uuid(0x001).uuidString)
        try Data(text.utf8).write(to: copy)
        let tombstoneCopy = container.tombstonesDirectory.appendingPathComponent("x.y.sync-conflict-20240101-120000-ABCDEF7.json")
        try FileManager.default.createDirectory(at: container.tombstonesDirectory, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: tombstoneCopy)
        #expect(try container.identity()?.containerID == seeded.containerID)
        #expect(try container.identities().count == 1)
        #expect(container.tombstones().isEmpty)
        #expect(container.sharedConflictCopies().map(\.lastPathComponent) == [copy.lastPathComponent, tombstoneCopy.lastPathComponent])
    }

    @Test func aWriteObserverHearsEveryFileWrittenOrRemovedRelativeToTheRoot() throws {
        let folder = try TemporaryDirectory("observer")
        defer { folder.remove() }
        let heard = Heard()
        let container = Container(root: folder.url, writeObserver: ClosureContainerWriteObserver { heard.append($0) })
        let document = DocumentID(Fixed.uuid(7)), device = Fixed.device(1)
        _ = try container.seedIdentity(device: device, now: Date(), newID: Fixed.uuid(0x500))
        _ = try container.writeLog(Data("{}".utf8), document: document, device: device, sequence: 3)
        container.remove(container.documentDirectory(document))
        #expect(heard.paths == [
            "identity/\(device).json",
            "documents/\(document)/logs/\(device)/0000000000000003.log",
            "documents/\(document)",
        ])
        #expect(container.relativePath(of: folder.url.deletingLastPathComponent()) == nil)
    }

    /// A registry entry is written by hand (JSONEncoder's tree of a map per document was a
    /// daemon's peak memory at 10,000 documents): it must read back as exactly what was written,
    /// names with quotes, backslashes, control characters and accents included.
    @Test func aRegistryEntryWrittenByHandReadsBackAsWritten() throws {
        let device = DeviceIdentity(id: Fixed.device(1), name: "Ann's \"laptop\"\n\u{1}é", model: "Test\\Model")
        var applied: [DocumentID: [DeviceID: UInt64]] = [:]
        for n in 0..<50 { applied[DocumentID(Fixed.uuid(n))] = [Fixed.device(1): UInt64(n), Fixed.device(2): UInt64(1) << 52] }
        applied[DocumentID(Fixed.uuid(99))] = [:]
        let record = DeviceRecord(
            device: device, updatedAt: Date(timeIntervalSince1970: 1_700_000_000.123), applied: applied, key: Array(repeating: 7, count: 32))
        let json = record.encodedJSON()
        let decoded = try Container.decodeJSON(DeviceRecord.self, from: json)
        #expect(decoded.applied == record.applied)
        #expect(decoded.name == record.name && decoded.model == record.model && decoded.device == record.device)
        #expect(decoded.key == record.key && decoded.fingerprint == record.fingerprint && decoded.reads == record.reads)
        #expect(decoded.format == record.format)
        #expect(abs(decoded.updatedAt.timeIntervalSince1970 - record.updatedAt.timeIntervalSince1970) < 0.001)
        #expect(!json.contains(UInt8(ascii: "\n")), "compact: one line")
    }
}

final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ path: String) { lock.withLock { list.append(path) } }
    var paths: [String] { lock.withLock { list } }
}
