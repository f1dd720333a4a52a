#if canImport(Glibc)
import Glibc
#endif
@testable import FileIO
import Foundation
import Testing
import TestSupport

@Suite struct AtomicFileTests {
    /// Names in `folder` that AtomicFile uses for its temporary files.
    private func leftovers(in folder: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasPrefix(AtomicFile.temporaryPrefix) }
    }

    @Test func writeReplacesTheContentsAndLeavesNoTemporaryFiles() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("file")
        try AtomicFile.write(Data("first, and longer than the second".utf8), to: url)
        try AtomicFile.write(Data("second".utf8), to: url)
        #expect(try Data(contentsOf: url) == Data("second".utf8))
        #expect(try leftovers(in: folder).isEmpty)
        var info = stat()
        #expect(stat(url.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    @Test func aReaderNeverSeesAHalfWrittenFile() async throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("file")
        let versions = [Data(repeating: 0x41, count: 256 * 1024), Data(repeating: 0x42, count: 64 * 1024 + 7)]
        try AtomicFile.write(versions[0], to: url)
        let rounds = 100
        let torn = try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                for round in 0..<rounds { try AtomicFile.write(versions[round % 2], to: url) }
                return 0
            }
            group.addTask {
                var torn = 0
                for _ in 0..<(rounds * 4) where !versions.contains(try AtomicFile.read(url)) { torn += 1 }
                return torn
            }
            return try await group.reduce(0, +)
        }
        #expect(torn == 0)
        #expect(try leftovers(in: folder).isEmpty)
    }

    /// The daemon's status is rewritten after every pass: each rewrite swaps two files instead of
    /// freeing an inode (a freed inode makes every file ext4 without a journal creates in the
    /// next seconds slower), and a reader still gets one version whole.
    @Test func rewriteSwapsTwoFilesAndNeverFreesAnInode() async throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("status.json")
        var inodes: Set<UInt64> = []
        for round in 0..<6 {
            try AtomicFile.rewrite(Data("version \(round)".utf8), to: url)
            #expect(try Data(contentsOf: url) == Data("version \(round)".utf8))
            var info = stat()
            #expect(stat(url.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
            inodes.insert(UInt64(info.st_ino))
        }
        // The first write renames its new file in; from then on the two files take turns.
        #expect(inodes.count == 2)
        #expect(try leftovers(in: folder) == [AtomicFile.temporaryPrefix + "status.json.spare"])

        let versions = [Data(repeating: 0x41, count: 256 * 1024), Data(repeating: 0x42, count: 64 * 1024 + 7)]
        let torn = try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                for round in 0..<100 { try AtomicFile.rewrite(versions[round % 2], to: url) }
                return 0
            }
            group.addTask {
                var torn = 0
                for _ in 0..<400 {
                    let data = try AtomicFile.readRewritten(url)
                    if !versions.contains(data), !data.starts(with: Data("version".utf8)) { torn += 1 }
                }
                return torn
            }
            return try await group.reduce(0, +)
        }
        #expect(torn == 0)
        AtomicFile.removeRewritten(url)
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(try leftovers(in: folder).isEmpty)
    }

    @Test func aFailedWriteLeavesTheOldFileAndNoTemporaryFile() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        // The target is a non-empty folder: rename(2) over it fails after the temporary file was written.
        let url = folder.appending("taken")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data("inside".utf8).write(to: url.appendingPathComponent("child"))
        let error = #expect(throws: FileIOError.self) { try AtomicFile.write(Data("new".utf8), to: url) }
        #expect(error?.operation == "rename")
        #expect(error?.description.contains(url.path) == true)
        #expect(try leftovers(in: folder).isEmpty)
        #expect(try Data(contentsOf: url.appendingPathComponent("child")) == Data("inside".utf8))
    }

    @Test func writeOnceNeverReplacesAnExistingFile() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("log")
        #expect(try AtomicFile.writeOnce(Data("one".utf8), to: url))
        #expect(try AtomicFile.writeOnce(Data("two".utf8), to: url) == false)
        #expect(try AtomicFile.writeOnce(Data("one".utf8), to: url) == false)
        #expect(try Data(contentsOf: url) == Data("one".utf8))
        #expect(try leftovers(in: folder).isEmpty)
    }

    /// A file that appears at the target while a write-once is under way (after its check) is
    /// kept: the rename refuses to replace it, the write says so, and its spare and temporary
    /// file are gone.
    @Test func aFileThatAppearsDuringAWriteOnceIsNeverReplaced() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("log")
        try AtomicFile.makeSpareTemporary(for: url)
        try Data("theirs".utf8).write(to: url)
        let placed = try AtomicFile.write(Data("mine".utf8), to: url, mode: 0o600, durability: .durable, usingSpare: true, replacing: false)
        #expect(placed == .existed)
        #expect(try Data(contentsOf: url) == Data("theirs".utf8))
        #expect(try leftovers(in: folder).isEmpty)
        // Where nothing is there, it is put in place and said to be.
        let other = folder.appending("other")
        #expect(try AtomicFile.write(Data("mine".utf8), to: other, mode: 0o600, durability: .durable, usingSpare: false, replacing: false) == .exclusive)
        #expect(try Data(contentsOf: other) == Data("mine".utf8))
    }

    /// A write-once that finds its file there at once leaves the spare made ahead for it no
    /// longer (a retried log's spare stayed in the shared folder for good).
    @Test func aWriteOnceThatFindsItsFileTakesItsSpareAway() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("log")
        try Data("there".utf8).write(to: url)
        try AtomicFile.makeSpareTemporary(for: url)
        #expect(try AtomicFile.placeOnce(Data("again".utf8), at: url, usingSpare: true) == .existed)
        #expect(try Data(contentsOf: url) == Data("there".utf8))
        #expect(try leftovers(in: folder).isEmpty)
    }

    /// A file prepared by its path fills the spare made ahead beside its place (the same inode),
    /// under a temporary name of its own in that folder; nothing is at its place until it is
    /// put there, once. A second one for the same place is dropped, and nothing is left over.
    @Test func aFilePreparedByItsPathFillsItsSpareAndIsPutInPlaceOnce() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let path = folder.appending("0000000000000001.log").path
        try AtomicFile.makeSpareTemporary(forPath: path, synced: false)
        var spare = stat()
        #expect(lstat(AtomicFile.spareTemporaryPath(forPath: path), &spare) == 0)
        let prepared = try AtomicFile.prepare(Data("first".utf8), forPath: path, usingSpare: true)
        let names = try leftovers(in: folder)
        #expect(names.count == 1 && names[0].hasPrefix(AtomicFile.temporaryPrefix + "0000000000000001.log.") && !names[0].hasSuffix(".spare"))
        var written = stat()
        #expect(lstat(folder.appending(names[0]).path, &written) == 0 && written.st_ino == spare.st_ino)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try AtomicFile.placeOnce(prepared) == .exclusive)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("first".utf8))
        #expect(prepared.url.path == path)
        let again = try AtomicFile.prepare(Data("second".utf8), forPath: path)
        #expect(try AtomicFile.placeOnce(again) == .existed)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("first".utf8))
        #expect(try leftovers(in: folder).isEmpty)
        // A name with no folder: its temporary file and the folder synced are the working folder's.
        #expect("log".withTemporaryPrefix == AtomicFile.temporaryPrefix + "log")
        #expect("log".parentPath == "." && "/log".parentPath == "/" && "/a/b/log".parentPath == "/a/b")
        // A name that starts with a combining mark (one character with the slash before it)
        // still gets its prefix first, and its file stays a temporary one beside it.
        let marked = folder.appending("\u{301}name").path
        #expect(marked.withTemporaryPrefix == folder.url.path + "/" + AtomicFile.temporaryPrefix + "\u{301}name")
        try AtomicFile.write(Data("marked".utf8), to: URL(fileURLWithPath: marked))
        #expect(try Data(contentsOf: URL(fileURLWithPath: marked)) == Data("marked".utf8))
        #expect(try leftovers(in: folder).isEmpty)
    }

    /// A file made ahead in a folder becomes the prepared file of a place in that folder (the
    /// same inode, under the temporary name recovery looks for); one made in another folder is
    /// removed and the file made anew; one not used is removed.
    @Test func aStandbyFileBecomesThePreparedFileOfAPlaceInItsFolder() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let path = folder.appending("0000000000000002.log").path
        let standby = try #require(AtomicFile.makeStandby(inFolder: folder.url.path))
        var made = stat()
        #expect(lstat(standby.path, &made) == 0 && made.st_size == 0)
        let prepared = try AtomicFile.prepare(Data("second".utf8), forPath: path, into: standby)
        let names = try leftovers(in: folder)
        #expect(names.count == 1 && AtomicFile.isPreparedName(names[0], of: "0000000000000002.log"), "\(names)")
        #expect(try AtomicFile.placeOnce(prepared, syncingFolder: false) == .exclusive)
        var placed = stat()
        #expect(lstat(path, &placed) == 0 && placed.st_ino == made.st_ino)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("second".utf8))
        #expect(try leftovers(in: folder).isEmpty)

        let other = try TemporaryDirectory("fileio-other")
        defer { other.remove() }
        let elsewhere = try #require(AtomicFile.makeStandby(inFolder: other.url.path))
        let third = try AtomicFile.prepare(Data("third".utf8), forPath: folder.appending("0000000000000003.log").path, into: elsewhere)
        #expect(try AtomicFile.placeOnce(third) == .exclusive)
        #expect(try FileManager.default.contentsOfDirectory(atPath: other.url.path).isEmpty, "the file made in another folder is gone")
        AtomicFile.discard(try #require(AtomicFile.makeStandby(inFolder: folder.url.path)))
        #expect(try leftovers(in: folder).isEmpty)
        #expect(!AtomicFile.isPreparedName(".tmp-0000000000000002.log.spare", of: "0000000000000002.log"))
        #expect(!AtomicFile.isPreparedName(".tmp-0000000000000002.log.1.x", of: "0000000000000002.log"))
        #expect(AtomicFile.isPreparedName(".tmp-0000000000000002.log.1.2", of: "0000000000000002.log"))
    }

    @Test func readAcceptsAFileUpToTheLimit() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("file")
        let data = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        try AtomicFile.write(data, to: url)
        #expect(try AtomicFile.read(url, limit: data.count) == data)
        #expect(try AtomicFile.readBytes(url) == [UInt8](data))
        try AtomicFile.write(Data(), to: url)
        #expect(try AtomicFile.readBytes(url, limit: 0).isEmpty)
    }

    @Test func readRefusesAFileOverTheLimit() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("file")
        try AtomicFile.write(Data(count: 1025), to: url)
        let error = #expect(throws: FileIOError.self) { try AtomicFile.read(url, limit: 1024) }
        #expect(error?.code == EFBIG)
        #expect(error?.description.contains(url.path) == true)
    }

    @Test func readRefusesAFIFOWithoutBlocking() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let url = folder.appending("fifo")
        try #require(mkfifo(url.path, 0o600) == 0)
        // Nobody writes to it: a blocking open or read would hang this test.
        let error = #expect(throws: FileIOError.self) { try AtomicFile.read(url) }
        #expect(error?.code == EINVAL)
        #expect(error?.description.contains("not a regular file") == true)
    }

    @Test func readRefusesAFolderAMissingFileAndUnfollowedLinks() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let folderError = #expect(throws: FileIOError.self) { try AtomicFile.read(folder.url) }
        #expect(folderError?.code == EINVAL)
        let missing = #expect(throws: FileIOError.self) { try AtomicFile.read(folder.appending("missing")) }
        #expect(missing?.isMissing == true)
        let target = folder.appending("target")
        try AtomicFile.write(Data("x".utf8), to: target)
        let link = folder.appending("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        #expect(try AtomicFile.read(link) == Data("x".utf8))
        let linkError = #expect(throws: FileIOError.self) { try AtomicFile.read(link, followSymlinks: false) }
        #expect(linkError?.code == ELOOP)
    }

    /// A folder that cannot be made says which and why from the system's code (a file in
    /// its place works as root), never Foundation's "The operation could not be completed".
    @Test func aFolderThatCannotBeMadeIsNamedWithTheReason() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let file = folder.appending("Documents")
        try Data("x".utf8).write(to: file)
        for target in [file, file.appendingPathComponent("doc/deeper")] {
            do {
                try AtomicFile.makeDirectory(target)
                Issue.record("made \(target.path) through a file")
            } catch {
                #expect(error.description.contains(file.path), "\(error)")
                #expect(error.description.contains("a file is where"), "\(error)")
                #expect(!error.description.contains("NSCocoaErrorDomain") && !error.description.contains("could not be completed"))
            }
        }
        try AtomicFile.makeDirectory(folder.appending("a/b/c"))
        var info = stat()
        #expect(stat(folder.appending("a/b/c").path, &info) == 0 && info.st_mode & 0o777 == 0o700)
    }

    @Test(.enabled(if: getuid() != 0, "root writes into any folder whatever its mode"))
    func aFolderInAnUnwritableParentSaysPermissionDenied() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let parent = folder.appending("Documents")
        try AtomicFile.makeDirectory(parent)
        chmod(parent.path, 0o500)
        defer { chmod(parent.path, 0o700) }
        #expect(throws: FileIOError.self) { try AtomicFile.makeDirectory(parent.appendingPathComponent("doc")) }
        do { try AtomicFile.makeDirectory(parent.appendingPathComponent("doc")) } catch {
            #expect(error.description.contains("permission denied"), "\(error)")
        }
    }

    /// Folders made below a shared folder never make the shared folder itself: one that went
    /// away (a drive unmounted, a container moved off) stays gone instead of coming back empty
    /// under a write that raced its going, and the write fails naming it.
    @Test func foldersBelowAGoneFolderAreNotMadeNorIsIt() throws {
        let folder = try TemporaryDirectory("fileio")
        defer { folder.remove() }
        let shared = folder.appending("container")
        try AtomicFile.makeDirectory(shared)
        try AtomicFile.makeDirectory(shared.appendingPathComponent("documents/d/logs"), below: shared)
        var info = stat()
        #expect(stat(shared.appendingPathComponent("documents/d/logs").path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        try AtomicFile.makeDirectory(shared.appendingPathComponent("documents/d/logs"), below: shared)

        try FileManager.default.moveItem(at: shared, to: folder.appending("moved"))
        let error = #expect(throws: FileIOError.self) {
            try AtomicFile.makeDirectory(shared.appendingPathComponent("documents/e/logs"), below: shared)
        }
        #expect(error?.code == ENOENT)
        #expect(error?.description.contains(shared.path) == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: shared.path), "the gone folder is not made again")

        try Data("x".utf8).write(to: shared)
        let blocked = #expect(throws: FileIOError.self) { try AtomicFile.makeDirectory(shared.appendingPathComponent("documents"), below: shared) }
        #expect(blocked?.code == ENOENT)
    }
}
