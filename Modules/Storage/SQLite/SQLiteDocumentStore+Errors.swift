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
    /// Refuses files that cannot be a database (SQLite would report a short file as an empty
    /// database, or as "malformed"). With `pageCount`, also compares the file's size with the
    /// size its header records — only after SQLite failed, since a concurrent commit may
    /// legitimately be extending the file.
    static func checkHeader(_ path: String, pageCount checkPages: Bool) throws(StoreError) {
        let handle = FileHandle(forReadingAtPath: path)
        guard let handle else {
            throw StoreError(.unreadable, path: path, detail: "permission denied")
        }
        defer { try? handle.close() }
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        let size = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        if size == 0 { return }  // A new store whose first transaction never ran.
        let header = (try? handle.read(upToCount: 100)) ?? Data()
        let magic = Data("SQLite format 3\u{0}".utf8)
        guard header.count >= 16, header.prefix(16) == magic else {
            throw StoreError(.corrupt, path: path, detail: "not an SQLite database")
        }
        guard header.count == 100 else {
            throw StoreError(.truncated, path: path, detail: "\(size) bytes, shorter than the 100-byte header")
        }
        var pageSize = Int64(header[16]) << 8 | Int64(header[17])
        if pageSize == 1 { pageSize = 65_536 }
        let pageCount = Int64(header[28]) << 24 | Int64(header[29]) << 16 | Int64(header[30]) << 8 | Int64(header[31])
        let changeCounter = header[24..<28]
        let validFor = header[92..<96]
        if checkPages, pageSize >= 512, pageCount > 0, Array(changeCounter) == Array(validFor), size < pageSize * pageCount {
            throw StoreError(.truncated, path: path, detail: "\(size) bytes, the header says \(pageSize * pageCount)")
        }
    }

    static func map(_ error: any Error, path: String) -> StoreError {
        guard let error = error as? DatabaseError else { return StoreError(.corrupt, path: path, detail: "\(error)") }
        let message = (error.message ?? "\(error.resultCode)") + (error.extendedResultCode != error.resultCode ? " (\(error.extendedResultCode))" : "")
        switch error.resultCode.primaryResultCode {
        case .SQLITE_NOTADB: return StoreError(.corrupt, path: path, detail: "not an SQLite database")
        case .SQLITE_CORRUPT: return StoreError(.corrupt, path: path, detail: message)
        case .SQLITE_BUSY, .SQLITE_LOCKED: return StoreError(.busy, path: path, detail: message)
        case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_AUTH: return StoreError(.unreadable, path: path, detail: message)
        case .SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY: return StoreError(.writeFailed, path: path, detail: message)
        default: return StoreError(.corrupt, path: path, detail: message)
        }
    }
}
