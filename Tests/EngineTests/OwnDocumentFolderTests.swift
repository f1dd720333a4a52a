#if canImport(Glibc)
import Glibc
#endif
import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import Testing
import TestSupport

/// A command that created a document remembers the container's `documents/` as it left it, so
/// the next command does not list 10,000 folders again for its own; a peer's folder added in
/// the same tick of the file system's clock (same time, same size) is still found, by the
/// folder's link count.
@Suite struct OwnDocumentFolderTests {
    static func setModified(_ url: URL, _ seconds: Int) {
        var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, url.path, &times, 0)
    }

    static func modified(_ url: URL) -> timespec {
        var info = stat()
        _ = stat(url.path, &info)
        return info.st_mtim
    }

    @Test func aPeersFolderInTheSameTickAsOwnCreateIsStillDiscovered() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite)
        let b = try harness.device("B", backend: .sqlite, uuidBase: 0x900000)
        _ = try await a.create(name: try DocumentName(typed: "First"))
        _ = await b.sync()
        // An old folder: a full pass remembers its stamp (a recent one proves nothing).
        let documents = harness.container.appendingPathComponent("documents")
        Self.setModified(documents, 1_700_000_000)
        _ = await a.sync()
        _ = try await a.create(name: try DocumentName(typed: "Own"))
        await a.closeAll()
        let afterOwn = Self.modified(documents)

        let peer = try await b.create(name: try DocumentName(typed: "Peers"))
        await b.closeAll()
        // The peer's folder in the same tick: the folder's time is what it was after A's.
        var times = [afterOwn, afterOwn]
        _ = utimensat(AT_FDCWD, documents.path, &times, 0)

        // The next command on A (a new process: the catalog from the file).
        let next = try harness.device("A", backend: .sqlite)
        let report = await next.refresh(nil)
        #expect(report.discovered == ["Peers"])
        #expect(await next.list().contains { $0.id == peer.id })
        await next.closeAll()

        // And with nothing new, the next command finds nothing to discover.
        let quiet = try harness.device("A", backend: .sqlite)
        #expect(await quiet.refresh(nil).discovered.isEmpty)
        await quiet.closeAll()
    }
}
