#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

extension Container {
    // MARK: Writing

    /// Writes a JSON record atomically (temporary dot-name, fsync, rename, fsync directory).
    func writeJSON(_ value: some Encodable, to url: URL, pretty: Bool = true, limit: Int = maximumRecordSize) throws(SyncError) {
        try writeRecord(try encodeJSON(value, for: url, pretty: pretty), to: url, limit: limit)
    }

    /// ``writeJSON(_:to:pretty:limit:)`` in two steps: the record written and synced beside
    /// `url` under a temporary name now, on any thread, while the caller does something else,
    /// and put in place by ``placeRecord(_:)`` (or dropped by `AtomicFile.discard`).
    func prepareJSON(_ value: some Encodable, to url: URL, limit: Int = maximumRecordSize) throws(SyncError) -> AtomicFile.PreparedFile {
        let data = try sealedRecord(try encodeJSON(value, for: url, pretty: true), at: url, limit: limit)
        try makeFolder(of: url)
        do {
            return try AtomicFile.prepare(data, for: url, usingSpare: true)
        } catch {
            throw SyncError(.writeFailed, path: url.path, detail: error.description)
        }
    }

    /// Puts a record made by ``prepareJSON(_:to:limit:)`` in place, replacing what is there,
    /// and syncs its folder unless `syncingFolder` is false, as ``writeJSON(_:to:pretty:limit:)``
    /// does after its write.
    func placeRecord(_ prepared: AtomicFile.PreparedFile, syncingFolder: Bool = true) throws(SyncError) {
        // Checked again: the folders may have changed since the record was written.
        if let problem = symlinkProblem(prepared.url) {
            AtomicFile.discard(prepared)
            throw SyncError(.writeFailed, path: prepared.path, detail: problem)
        }
        do {
            try AtomicFile.replace(with: prepared, syncingFolder: syncingFolder)
        } catch {
            throw SyncError(.writeFailed, path: prepared.path, detail: error.description)
        }
        didChangeFile(prepared.url)
    }

    private func encodeJSON(_ value: some Encodable, for url: URL, pretty: Bool) throws(SyncError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        do {
            return try encoder.encode(value)
        } catch {
            throw SyncError(.writeFailed, path: url.path, detail: "\(error)")
        }
    }

    /// Writes a record's JSON (signed and sealed first in a signed container), atomically.
    func writeRecord(_ json: Data, to url: URL, limit: Int) throws(SyncError) {
        try writeRaw(try sealedRecord(json, at: url, limit: limit), to: url)
    }

    /// A record's JSON as it is written at `url`: signed and sealed in a signed container, at
    /// most `limit` bytes.
    private func sealedRecord(_ json: Data, at url: URL, limit: Int) throws(SyncError) -> Data {
        var data = json
        if let sealed = try sealRecord(data, at: url) { data = Data(sealed) }
        try checkSize(data, of: url, limit: limit)
        return data
    }

    /// Writes a format 2 file: `envelope` sealed as the container wants it (``seal(_:)``), at
    /// most `limit` bytes.
    func writeEnvelope(_ envelope: ContainerEnvelope, to url: URL, limit: Int) throws(SyncError) {
        try writeRaw(Data(try seal(envelope)), to: url, limit: limit)
    }

    /// ``writeRaw(_:to:)`` of at most `limit` bytes: a device never writes a file its peers
    /// would refuse.
    private func writeRaw(_ data: Data, to url: URL, limit: Int) throws(SyncError) {
        try checkSize(data, of: url, limit: limit)
        try writeRaw(data, to: url)
    }

    private func checkSize(_ data: Data, of url: URL, limit: Int) throws(SyncError) {
        guard data.count <= limit else {
            throw SyncError(.writeFailed, path: url.path, detail: "\(data.count) bytes, more than the \(limit) bytes a reader accepts")
        }
    }

    /// Writes finished bytes atomically (temporary dot-name, fsync, rename, fsync directory),
    /// never through a link.
    func writeRaw(_ data: Data, to url: URL) throws(SyncError) {
        try makeFolder(of: url)
        do {
            // Into the empty file a document folder made ahead brings, when it is there.
            try AtomicFile.write(data, to: url, durability: .durable, usingSpare: true)
        } catch {
            throw SyncError(.writeFailed, path: url.path, detail: error.description)
        }
        didChangeFile(url)
    }

    /// Makes the folder `url` goes in, never through a link.
    private func makeFolder(of url: URL) throws(SyncError) {
        if let problem = symlinkProblem(url) { throw SyncError(.writeFailed, path: url.path, detail: problem) }
        do {
            try AtomicFile.makeDirectory(url.deletingLastPathComponent(), below: root)
        } catch {
            throw SyncError(.writeFailed, path: url.path, detail: error.description)
        }
    }

    /// Writes a log file unless it is already there (a retry after a crash writes the same bytes).
    @discardableResult
    public func writeLog(_ data: Data, document: DocumentID, device: DeviceID, sequence: UInt64) throws(SyncError) -> URL {
        try placeLog(data, document: document, device: device, sequence: sequence).url
    }

    /// ``writeLog(_:document:device:sequence:)``, saying how the file got there: only
    /// ``AtomicFile/Placement/exclusive`` proves the file at its place is the one just written.
    func placeLog(_ data: Data, document: DocumentID, device: DeviceID, sequence: UInt64) throws(SyncError) -> (url: URL, placement: AtomicFile.Placement) {
        let url = try logSlot(document, device: device, sequence: sequence)
        let placement: AtomicFile.Placement
        do {
            placement = try AtomicFile.placeOnce(data, at: url, usingSpare: true)
        } catch {
            throw SyncError(.writeFailed, path: url.path, detail: error.description)
        }
        // Told even when the file was there: a retry after a kill that came before the telling.
        didChangeFile(url)
        return (url, placement)
    }

    /// A log written and synced beside its slot, not in place yet (``placePrepared(_:)``
    /// puts it there): the slow half of ``placeLog(_:document:device:sequence:)``, which a
    /// save runs while its store commits (``LogWriteAhead``).
    func prepareLog(_ data: Data, document: DocumentID, device: DeviceID, sequence: UInt64) throws(SyncError) -> AtomicFile.PreparedFile {
        try prepareLog(data, document: document, device: device, sequence: sequence, into: nil)
    }

    /// ``prepareLog(_:document:device:sequence:)`` into `standby` (made by
    /// ``makeLogStandby(_:device:)``), which is used or removed.
    func prepareLog(_ data: Data, document: DocumentID, device: DeviceID, sequence: UInt64, into standby: AtomicFile.StandbyFile?) throws(SyncError) -> AtomicFile.PreparedFile {
        let path: String
        do {
            path = try logSlotPath(document, device: device, sequence: sequence)
        } catch {
            if let standby { AtomicFile.discard(standby) }
            throw error
        }
        do {
            guard let standby else { return try AtomicFile.prepare(data, forPath: path, usingSpare: true) }
            // A file made ahead for this very slot (after a plain flush, or a new document's
            // first log) is taken rather than left behind.
            var spare = stat()
            if lstat(AtomicFile.spareTemporaryPath(forPath: path), &spare) == 0 {
                AtomicFile.discard(standby)
                return try AtomicFile.prepare(data, forPath: path, usingSpare: true)
            }
            return try AtomicFile.prepare(data, forPath: path, into: standby)
        } catch {
            throw SyncError(.writeFailed, path: path, detail: error.description)
        }
    }

    /// Removes `device`'s standby files of `document` (`standby`, from ``listing(_:)``) whose
    /// process is gone: a save's log file made ahead and never filled, the process killed.
    /// One of a process still running is left to it.
    func removeOrphanedStandbyFiles(_ document: DocumentID, device: DeviceID, _ standby: [(maker: pid_t, name: String)]) {
        let folder = logsPath(document, device: device)
        for (maker, name) in standby where !AtomicFile.isRunning(maker) {
            unlink(folder + "/" + name)
        }
    }

    /// An empty file made ahead in `device`'s log folder of `document` for the next log's write
    /// (``AtomicFile/StandbyFile``), or nil when the folder is not there yet or has a link on
    /// its path.
    func makeLogStandby(_ document: DocumentID, device: DeviceID) -> AtomicFile.StandbyFile? {
        let folder = logsPath(document, device: device)
        guard symlinkProblem(standardPath: Self.standardPath(ofPath: folder)) == nil, Self.isFolder(path: folder) else { return nil }
        return AtomicFile.makeStandby(inFolder: folder)
    }

    /// Puts a log made by ``prepareLog(_:document:device:sequence:)`` in its slot, where
    /// nothing is, as ``placeLog(_:document:device:sequence:)`` does, but without syncing the
    /// folder: the log's file was synced under its temporary name, which a journaling file
    /// system keeps through a power loss, and a power loss that undoes the rename leaves the
    /// log there for ``placeUnplacedLogs(_:device:_:bootedAt:refusing:)`` to put in its slot
    /// at the device's next pass (Docs/RELIABILITY.md, "One durable step per save").
    func placePrepared(_ prepared: AtomicFile.PreparedFile) throws(SyncError) -> (url: URL, placement: AtomicFile.Placement) {
        // Checked again: the folders may have changed while the store committed.
        if let problem = symlinkProblem(standardPath: Self.standardPath(ofPath: prepared.path)) {
            AtomicFile.discard(prepared)
            throw SyncError(.writeFailed, path: prepared.path, detail: problem)
        }
        let placement: AtomicFile.Placement
        do {
            placement = try AtomicFile.placeOnce(prepared, syncingFolder: false)
        } catch {
            throw SyncError(.writeFailed, path: prepared.path, detail: error.description)
        }
        let url = prepared.url
        didChangeFile(url)
        return (url, placement)
    }

    /// Puts in their slots `device`'s logs that a power loss left under their temporary names
    /// (`unplaced`, from ``listing(_:)``): a save syncs its log's file and renames it into its
    /// slot without syncing the folder (``placePrepared(_:)``). A log whose process still runs is
    /// that process's to place, and left alone; so is a file that is no readable log of `device`
    /// for its slot. Of the others:
    /// - one made since the machine last started (`bootedAt`) is a killed process's save, which
    ///   had not returned: removed (its outbox ships it if it committed);
    /// - one made before is a save whose rename a power loss may have undone: put in its slot
    ///   when the slot is empty (of several for one slot, the latest: an earlier one is a killed
    ///   process's save that never committed, whose number the next save took), and removed
    ///   once the slot holds its bytes or the latest one's. Nothing is removed while the slot
    ///   holds anything else or cannot be read.
    /// Nothing is put in place in a document's folder that holds no info file.
    /// Returns whether a log was put in its slot.
    func placeUnplacedLogs(_ document: DocumentID, device: DeviceID, _ unplaced: [UnplacedLog], bootedAt: Date, refusing: Set<UUID>) -> Bool {
        // Never a log without an info file: a new document's info file whose rename a power
        // loss undid (put in place unsynced just before its first log) keeps its log out too.
        guard hasInfoFile(document) else { return false }
        let folder = logsPath(document, device: device)
        var candidates: [UInt64: [(path: String, bytes: [UInt8], committedAt: Date)]] = [:]
        for entry in unplaced where !AtomicFile.isRunning(entry.maker) {
            let path = folder + "/" + entry.name
            guard let bytes = try? readBytes(path: path, limit: TransactionLog.maximumFileSize),
                  let log = try? decodeLog(bytes: bytes, document, device: device, sequence: entry.sequence, refusing: refusing) else { continue }
            if log.committedAt >= bootedAt {
                unlink(path)
            } else {
                candidates[entry.sequence, default: []].append((path, bytes, log.committedAt))
            }
        }
        var placed = false
        for (sequence, found) in candidates {
            let slot = logPath(document, device: device, sequence: sequence)
            let latest = found.sorted { $0.committedAt > $1.committedAt }
            var info = stat()
            if lstat(slot, &info) != 0, errno == ENOENT, let first = latest.first, AtomicFile.placeKeeping(temporary: first.path, atPath: slot) {
                didChangeFile(URL(fileURLWithPath: slot, isDirectory: false))
                placed = true
            }
            guard let existing = try? readBytes(path: slot, limit: TransactionLog.maximumFileSize),
                  existing == latest.first?.bytes || found.contains(where: { $0.bytes == existing }) else { continue }
            for entry in found where FileManager.default.fileExists(atPath: entry.path) { unlink(entry.path) }
        }
        return placed
    }

    /// The URL of a log's slot, its folder made: never through a link.
    private func logSlot(_ document: DocumentID, device: DeviceID, sequence: UInt64) throws(SyncError) -> URL {
        URL(fileURLWithPath: try logSlotPath(document, device: device, sequence: sequence), isDirectory: false)
    }

    /// ``logSlot(_:device:sequence:)``'s path, made without a URL (a save's log written ahead
    /// goes this way: a URL built costs more than the checks).
    private func logSlotPath(_ document: DocumentID, device: DeviceID, sequence: UInt64) throws(SyncError) -> String {
        let folder = logsPath(document, device: device)
        let path = folder + "/" + Self.logFileName(sequence)
        if let problem = symlinkProblem(standardPath: Self.standardPath(ofPath: path)) { throw SyncError(.writeFailed, path: path, detail: problem) }
        // The device's log folder is there after its first log: one `lstat` (no link on the way,
        // as just checked), not a `mkdir` refused.
        if !Self.isFolder(path: folder) {
            do {
                try AtomicFile.makeDirectory(URL(fileURLWithPath: folder, isDirectory: true), below: root)
            } catch {
                throw SyncError(.writeFailed, path: path, detail: error.description)
            }
        }
        return path
    }

    /// Reads a JSON record written by ``writeJSON(_:to:pretty:limit:)``: no links followed, at most
    /// `limit` bytes.
    /// In a signed container the file must be an envelope signed by an admitted device
    /// (``openRecord(_:at:)``).
    func readJSON<T: Decodable>(_ url: URL, limit: Int) throws -> T {
        try Self.decodeJSON(T.self, from: try openRecord(try readFile(url, limit: limit), at: url))
    }

    /// Decodes a JSON record as ``writeJSON(_:to:pretty:limit:)`` encodes it.
    static func decodeJSON<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return try decoder.decode(T.self, from: data)
    }

    /// One line about why a file could not be read or decoded.
    /// Where in a JSON file a decoding error is, in words.
    private static func place(_ path: [any CodingKey]) -> String {
        path.isEmpty ? "for the whole file (not the object expected)" : "at \(path.map(\.stringValue).joined(separator: "."))"
    }

    static func summarize(_ error: any Error) -> String {
        switch error {
        case let error as FileIOError: return error.detail ?? error.description
        case DecodingError.dataCorrupted(let context): return context.debugDescription
        case DecodingError.keyNotFound(let key, _): return "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context): return "wrong type \(place(context.codingPath))"
        case DecodingError.valueNotFound(_, let context): return "missing value \(place(context.codingPath))"
        default: return "\(error)"
        }
    }

    /// Removes a file or folder; a missing one is fine. Never through a symbolic link: a
    /// link itself is removed, what it points to is not touched.
    public func remove(_ url: URL) {
        guard symlinkProblem(url.deletingLastPathComponent()) == nil, FileManager.default.fileExists(atPath: url.path) else { return }
        try? FileManager.default.removeItem(at: url)
        didChangeFile(url)
    }
}
