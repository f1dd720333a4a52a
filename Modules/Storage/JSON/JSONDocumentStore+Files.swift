#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Text

/// The JSON store's two files: reading the journal's frames, appending one, and writing the
/// snapshot (Docs/STORAGE.md, "JSON backend").
extension JSONDocumentStore {
    /// Applies the journal's whole frames from `offset` on to `loaded`, skipping those the
    /// snapshot holds.
    func readJournal(into loaded: inout Loaded, from offset: Int64) throws(StoreError) {
        let data: Data
        do {
            guard let handle = FileHandle(forReadingAtPath: journalURL.path) else { return }
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(clamping: offset))
            data = try handle.readToEnd() ?? Data()
        } catch {
            throw StoreError(.unreadable, path: journalURL.path, detail: "\(error)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        var held: [ObjectID: [String]] = [:]
        for (payload, end) in JSONJournalFrame.frames(in: data, from: 0) {
            let delta: JSONStoreDelta
            do {
                delta = try decoder.decode(JSONStoreDelta.self, from: payload)
            } catch {
                throw StoreError(.corrupt, path: journalURL.path, detail: "a frame ending at byte \(offset + Int64(end)) is not a commit: \(error)")
            }
            loaded.journalLength = offset + Int64(end)
            guard delta.sequence > loaded.lastSequence else { continue }
            do {
                held.merge(try delta.apply(to: &loaded.contents)) { _, later in later }
            } catch {
                throw StoreError(.corrupt, path: journalURL.path, detail: "commit \(delta.sequence): \(error.description)")
            }
            loaded.lastSequence = delta.sequence
            loaded.frames += 1
        }
        do {
            try JSONStoreDelta.fillHeldTexts(held, in: &loaded.contents)
        } catch {
            throw StoreError(.corrupt, path: journalURL.path, detail: error.description)
        }
    }

    /// Appends `delta` as a frame after the journal's last whole one (cutting off a torn tail).
    func append(_ delta: JSONStoreDelta, to loaded: inout Loaded, durable: Bool) throws(StoreError) {
        let payload: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            encoder.dateEncodingStrategy = .millisecondsSince1970
            payload = try encoder.encode(delta)
        } catch {
            throw StoreError(.writeFailed, path: journalURL.path, detail: "\(error)")
        }
        let frame = JSONJournalFrame.encode(payload)
        let path = journalURL.path
        let isNew = loaded.journal == nil
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw StoreError(.writeFailed, path: path, detail: "open: \(String(cString: strerror(errno)))") }
        defer { _ = Glibc.close(fd) }
        var failure: Int32 = 0
        if (loaded.journal?.size ?? 0) != loaded.journalLength || isNew, ftruncate(fd, off_t(loaded.journalLength)) != 0 { failure = errno }
        if failure == 0, lseek(fd, off_t(loaded.journalLength), SEEK_SET) < 0 { failure = errno }
        if failure == 0 { failure = frame.withUnsafeBytes { AtomicFile.writeAll($0, to: fd) } }
        if failure == 0, durable, fdatasync(fd) != 0 { failure = errno }
        if failure != 0 {
            // Nothing half-written stays for a reader to trip on (it would stop there anyway).
            _ = ftruncate(fd, off_t(loaded.journalLength))
            throw StoreError(.writeFailed, path: path, detail: "append: \(String(cString: strerror(failure)))")
        }
        if isNew, durable {
            do {
                try AtomicFile.syncDirectory(journalURL.deletingLastPathComponent())
            } catch {
                throw StoreError(.writeFailed, path: path, detail: error.description)
            }
        }
        loaded.journalLength += Int64(frame.count)
        loaded.lastSequence = delta.sequence
        loaded.frames += 1
        loaded.journal = FileIdentity(path: path)
    }

    /// Cuts the file at `url` to `length` bytes.
    static func truncate(_ url: URL, to length: Int64, sync: Bool) throws(FileIOError) {
        let fd = open(url.path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            if errno == ENOENT { return }
            throw FileIOError(path: url.path, operation: "open", errno: errno)
        }
        defer { _ = Glibc.close(fd) }
        if ftruncate(fd, off_t(length)) != 0 { throw FileIOError(path: url.path, operation: "truncate", errno: errno) }
        if sync, fsync(fd) != 0 { throw FileIOError(path: url.path, operation: "fsync", errno: errno) }
    }

    func persistSnapshot(_ contents: StoreContents, through: UInt64, durability: AtomicFile.Durability) throws(StoreError) {
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            encoder.dateEncodingStrategy = .millisecondsSince1970
            var file = JSONStoreFile(contents)
            file.journalThrough = through == 0 ? nil : through
            data = try encoder.encode(file)
        } catch {
            throw StoreError(.writeFailed, path: url.path, detail: "\(error)")
        }
        do {
            try AtomicFile.write(data + Data("\n".utf8), to: url, durability: durability)
        } catch {
            throw StoreError(.writeFailed, path: url.path, detail: error.description)
        }
    }
}
