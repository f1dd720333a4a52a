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

// Full passes skip documents nothing changed for a while, until a log arrives or another process saves.
@Suite struct QuietDocumentTests {
    /// Sets the modification time of everything under `url` an hour back, as if nothing had
    /// changed there for a while (a pass trusts only stamps older than two seconds).
    func age(_ url: URL) throws {
        let old = Date().addingTimeInterval(-3600)
        var paths = [url]
        if let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: nil) {
            while let next = enumerator.nextObject() as? URL { paths.append(next) }
        }
        for path in paths { try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path.path) }
    }

    @Test func fullPassesSkipQuietDocumentsUntilSomethingArrivesOrIsSaved() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A", backend: .sqlite)
        let first = try await a.create()
        let second = try await a.create()
        let b = try harness.device("B", backend: .sqlite)
        await b.sync()
        try age(harness.folder.url)
        #expect(await b.sync().skippedQuiet == 0, "the first look at each document is whole")
        let quiet = await b.sync()
        #expect(quiet.skippedQuiet == 2 && quiet.importedLogs == 0)
        // A new process on the same root (a CLI command) trusts the marks too, and lists
        // without opening a store.
        let command = try harness.device("B", backend: .sqlite)
        #expect(await command.sync().skippedQuiet == 2)
        #expect(await command.list().map(\.viewable) == [true, true])
        #expect(await command.storeOpenCount() == 0)
        await command.closeAll()

        // A peer's log lands in one document: that one is looked at and imported, the other skipped.
        try await a.appendText(first.id, " from A")
        let woken = await b.sync()
        #expect(woken.importedLogs == 1 && woken.skippedQuiet == 1)
        #expect(try await b.detail(first.id).text.hasSuffix(" from A"))

        // Another process of B saves (FastSave off): the store's stamp changes, the pass ships it.
        try age(harness.folder.url)
        _ = await b.sync()
        #expect(await b.sync().skippedQuiet == 2)
        let otherProcess = try harness.device("B", backend: .sqlite, settings: [.fastSave: .bool(false)])
        try await otherProcess.appendText(second.id, " from B's other process")
        await otherProcess.closeAll()
        let shipped = await b.sync()
        #expect(shipped.exportedLogs == 1, "\(shipped)")
        await a.sync()
        #expect(try await a.detail(second.id).text.hasSuffix(" from B's other process"))
    }
}
