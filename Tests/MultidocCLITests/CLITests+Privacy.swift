import Foundation
import Testing
import TestSupport

// Files the CLI writes are private to their user; the container copy on segue never stops a document opening and skips huge files.
extension CLITests {
    /// Files multidoc creates are readable by their user only (0600, folders 0700): the device
    /// root and the container after creating, editing, plotting and a sync.
    @Test func everythingWrittenIsPrivateToItsUser() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Private"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Private", "--append", " x"], root: rootB).status == 0)
        #expect(try multidoc(["sync"], root: rootA).status == 0)
        #expect(try multidoc(["settings", "set", "EnablePing", "on"], root: rootA).status == 0)
        var open: [String] = []
        for top in [rootA, rootB, container] {
            guard let walker = FileManager.default.enumerator(atPath: top) else { continue }
            while let relative = walker.nextObject() as? String {
                let path = top + "/" + relative
                var info = stat()
                guard lstat(path, &info) == 0 else { continue }
                if info.st_mode & 0o077 != 0 { open.append("\(path) \(String(info.st_mode & 0o777, radix: 8))") }
            }
        }
        #expect(open.isEmpty, "\(open)")
    }

    @Test func copyContainerOnSegueNeverKeepsTheDetailFromOpening() throws {
        defer { folder.remove() }
        #expect(try ProductRunner.run("multidoc", ["new", "Local", "--root", rootA]).status == 0)
        let show = try ProductRunner.run("multidoc", ["show", "Local", "--root", rootA, "--copy-container-on-segue", "on"])
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("File name: Local"))
        #expect(show.stderr.contains("not copied"))
    }

    /// A peer's 1 GB sparse file and a file over the copy's limit are named, not copied (the
    /// sparse one once filled the disk); what is copied is private to its user (0600).
    @Test func copyContainerOnSegueSkipsSparseAndOversizedFilesAndCopiesPrivately() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Doc"], root: rootA).status == 0)
        let sparse = folder.appending("container/documents/sparse.bin"), huge = folder.appending("container/documents/huge.bin")
        for (url, size) in [(sparse, 8 << 20), (huge, 1 << 30)] {
            #expect(FileManager.default.createFile(atPath: url.path, contents: nil))
            #expect(truncate(url.path, off_t(size)) == 0)
        }
        let show = try multidoc(["show", "Doc", "--copy-container-on-segue", "on"], root: rootA)
        #expect(show.status == 0, "\(show.stderr)")
        let copy = folder.appending("A/Documents/copyOfCloudContainer")
        for name in ["sparse.bin", "huge.bin"] {
            #expect(!FileManager.default.fileExists(atPath: copy.appendingPathComponent("documents/\(name)").path))
        }
        let copied = try FileManager.default.subpathsOfDirectory(atPath: copy.path)
        #expect(copied.contains { $0.hasSuffix(".log") }, "\(copied)")
        for relative in copied {
            var info = stat()
            #expect(lstat(copy.appendingPathComponent(relative).path, &info) == 0)
            #expect(info.st_mode & 0o077 == 0, "\(relative) \(String(info.st_mode & 0o777, radix: 8))")
        }
        // `container copy` names what it left out and why.
        let bugReport = try multidoc(["container", "copy", folder.appending("report").path], root: rootA)
        #expect(bugReport.status == 0, "\(bugReport.stderr)")
        #expect(bugReport.stderr.contains("\(sparse.path): a sparse file"), "\(bugReport.stderr)")
        #expect(bugReport.stderr.contains("\(huge.path): 1073741824 bytes, over the"), "\(bugReport.stderr)")
    }
}
