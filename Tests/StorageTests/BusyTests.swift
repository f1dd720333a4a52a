#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import GRDB
import Model
import Storage
import Testing
import TestSupport

// A JSON store whose lock another process holds: it waits up to the busy timeout, then says so.
@Suite struct BusyTests {
    /// The lock file as the store names it, held through a descriptor of its own: to the store
    /// that is another process.
    private func holdLock(of url: URL) throws -> FileLock {
        let holder = try FileLock(url: JSONDocumentStore.lockURL(for: url))
        try #require(try holder.tryLock(.exclusive))
        return holder
    }

    @Test func aJSONStoreGivesUpAfterTheBusyTimeout() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let url = folder.appending(StoreKind.json.fileName)
        let timeout = Duration.milliseconds(300)
        let store = try StoreProvider.standard(options: StoreOptions(busyTimeout: timeout)).open(.json, at: url, create: true)
        let holder = try holdLock(of: url)
        let clock = ContinuousClock()
        let start = clock.now
        let error = #expect(throws: StoreError.self) { try store.write { $0.sync.values["k"] = "v" } }
        let waited = clock.now - start
        #expect(error?.kind == .busy)
        #expect(error?.description.contains(url.path) == true)
        #expect(error?.description.contains("another process") == true, "\(error?.description ?? "")")
        #expect(waited >= timeout && waited < .seconds(5), "waited \(waited)")
        #expect(throws: StoreError.self) { try store.read() }
        holder.unlock()
        try store.write { $0.sync.values["k"] = "v" }
        #expect(try store.read().sync.values["k"] == "v")
    }

    @Test func aJSONWriterGetsALockReleasedWithinTheTimeout() throws {
        let folder = try TemporaryDirectory("store")
        defer { folder.remove() }
        let url = folder.appending(StoreKind.json.fileName)
        let store = try StoreProvider.standard(options: StoreOptions(busyTimeout: .seconds(10))).open(.json, at: url, create: true)
        let holder = try holdLock(of: url)
        let release = Thread {
            usleep(150_000)
            holder.unlock()
        }
        release.start()
        try store.write { $0.sync.values["k"] = "v" }
        #expect(try store.read().sync.values["k"] == "v")
    }
}
