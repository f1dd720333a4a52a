#if canImport(Glibc)
import Glibc
#endif
import CSQLiteConfig
import FileIO
import Foundation
import GRDB
import Model
import Synchronization

extension SQLiteDocumentStore {
    /// The bytes of an empty store at the current schema, per journal mode (nil if it cannot be
    /// made: stores are then created and migrated in place).
    private static let templates = Mutex<[JournalMode: Data]>([:])

    static func template(for options: StoreOptions) -> Data? {
        if let data = templates.withLock({ $0[options.journalMode] }) { return data }
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("multidoc-template-\(getpid())-\(UUID().uuidString)", isDirectory: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("store.sqlite", isDirectory: false)
        do {
            // Not flushed while it is made (a dozen synced transactions, a tenth of `new`): it is
            // read back whole and each copy is written durably.
            let store = try SQLiteDocumentStore(url: url, options: options, create: true, useTemplate: false, durable: false)
            store.close()
        } catch {
            return nil
        }
        // Closing the last connection checkpoints the write-ahead log into the file.
        guard !FileManager.default.fileExists(atPath: url.path + "-wal"),
              let data = try? AtomicFile.read(url, limit: 16 * 1024 * 1024), data.count >= 100 else { return nil }
        templates.withLock { $0[options.journalMode] = data }
        return data
    }
}
