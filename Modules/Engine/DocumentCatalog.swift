#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
import Sync

/// What a process knows of the device's documents without opening them: every local record
/// (`Documents/<uuid>/document.json` stays the truth; the catalog holds a copy with the stat of
/// the file it came from) and, for the documents a pass found quiet, what the master table
/// shows of them and the stamps that prove nothing changed since.
///
/// A new process reads the catalog from `<root>/catalog` (a cache: a line per document, parsed
/// by hand because decoding thousands of JSON records took longer than the whole command may),
/// then checks it with one `stat` per record file and rereads only the records that changed.
/// Anything it cannot parse is simply not known, and read from the record files again.
struct DocumentCatalog: Sendable {
    struct Entry: Sendable, Equatable {
        var record: LocalDocumentRecord
        /// The stat of the record file the record was read from (or written to).
        var stamp: FileIdentity
        var quiet: QuietMark?
    }

    /// Entries parsed so far. The file's other lines wait in `unparsed` until asked for: a
    /// command about one document of 10,000 parses one line, not 10,000.
    var entries: [DocumentID: Entry] = [:]
    var unparsed: [DocumentID: ArraySlice<UInt8>] = [:]
    /// The file's document lines in file order, until something needs them all (`index()`):
    /// a command about one document finds its line with `memcmp` and builds no table of 10,000.
    var pending: [ArraySlice<UInt8>] = []
    /// Container-wide stamps this device has acted on (documents/, tombstones/, devices/), so a
    /// command skips discovery, tombstones and the registry when they did not change.
    var containerStamps: [ContainerStampKey: FileStamp] = [:]
    /// What this device last wrote into its registry file: a digest of the applied map and the
    /// file's stamp after writing it. A full pass writes the file again only when either differs.
    var registration: (digest: UInt64, stamp: FileStamp)? {
        didSet { sharedChanged = true }
    }
    /// Every peer's clock reading as the last pass that read the registry found it (a pass reads
    /// it again only when a peer's registry file changed): what the pass says about clocks.
    var clockReadings: [ClockReading] = [] {
        didSet { if clockReadings != oldValue { sharedChanged = true } }
    }
    /// Whether anything changed since the catalog was last written.
    var changed: Bool { sharedChanged || !touched.isEmpty }
    /// Documents whose line changed (or went) since the catalog was last written, and whether
    /// the container stamps or the registration did: a save appends just those lines.
    var touched: Set<DocumentID> = []
    var sharedChanged = false
    /// Lines in the file as this process last read or wrote it (0: none it can append to).
    var fileLines = 0
    /// Lines the file held when it was last written whole (it is written whole again past twice that).
    var baseLines = 0

    private mutating func touch(_ id: DocumentID) { touched.insert(id) }

    /// Record files read while their stamp was recent (a rewrite in the same clock tick would
    /// not change it, so such a file is read again on every look), with the record their bytes
    /// decoded to: the same bytes are that record, not decoded again. A document just made or
    /// imported is looked at by every step of the pass, the save and the tell that follow.
    private var recentlyRead: [DocumentID: (bytes: Data, record: LocalDocumentRecord)] = [:]
    private static let recentlyReadLimit = 64

    /// Record files that are there but could not be read or decoded, and why: such a document
    /// is not known (nothing is guessed from a damaged record), but it does not vanish silently
    /// either — the pass reports it, or rebuilds it from the container under AttemptErrorRecovery.
    private(set) var damaged: [DocumentID: String] = [:]

    init() {}

    /// Every record, checked against the record files (one `stat` each; changed or new ones are
    /// read again, vanished ones dropped).
    mutating func refresh(_ root: DeviceRoot) {
        let documents = root.documentsDirectory.path
        let folder = DirectoryHandle(path: documents)
        // The folders named by a document's UUID in its lower-case form (the only one the root
        // uses), and their record files relative to the folder.
        let found = (folder?.entries(".") ?? []).compactMap { entry -> (id: DocumentID, record: String)? in
            guard !entry.name.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }),
                  let id = DocumentID(entry.name) else { return nil }
            return (id, entry.name + "/document.json")
        }
        // The `stat`s are the cost: made on every core (relative to the open folder), then
        // compared here.
        let stamps = SideBySide.compute(found.count) { index in folder.flatMap { FileIdentity(in: $0, found[index].record) } }
        let ids = found.map(\.id)
        let seen = Set(ids)
        parseAll()
        for (index, id) in ids.enumerated() {
            // Most records did not change: no path made for them.
            if let stamp = stamps[index], let cached = entries[id], cached.stamp == stamp, !stamp.isRecent {
                if !recentlyRead.isEmpty { recentlyRead[id] = nil }
                continue
            }
            refresh(id, root, recordPath: documents + "/" + found[index].record, stamp: stamps[index])
        }
        for id in Array(entries.keys) + Array(unparsed.keys) where !seen.contains(id) {
            entries[id] = nil
            unparsed[id] = nil
            touch(id)
        }
        for id in Array(damaged.keys) where !seen.contains(id) { damaged[id] = nil }
    }

    /// The entry of `id`, parsed from its line on first use (a line that does not parse is
    /// dropped: the record file is read again).
    private mutating func entry(_ id: DocumentID) -> Entry? {
        if let entry = entries[id] { return entry }
        let found: ArraySlice<UInt8>?
        if pending.isEmpty {
            found = unparsed.removeValue(forKey: id)
        } else {
            // Gone or unreadable since the file was read.
            guard !touched.contains(id) else { return nil }
            found = Self.lastLine(of: id, in: pending)
        }
        guard let line = found else { return nil }
        guard let entry = Entry(line: line), entry.record.id == id else {
            touch(id)
            return nil
        }
        entries[id] = entry
        return entry
    }

    /// The last line of `id` in `lines`, nil if there is none or the last says it went.
    private static func lastLine(of id: DocumentID, in lines: [ArraySlice<UInt8>]) -> ArraySlice<UInt8>? {
        let key = Array(id.description.utf8)
        for line in lines.reversed() {
            let match = line.withUnsafeBufferPointer { buffer -> Int in
                guard let base = buffer.baseAddress, buffer.count >= 38 else { return 0 }
                if base[36] == UInt8(ascii: "\t"), memcmp(base, key, 36) == 0 { return 1 }
                if base[0] == UInt8(ascii: "-"), base[1] == UInt8(ascii: "\t"), memcmp(base + 2, key, 36) == 0 { return 2 }
                return 0
            }
            if match == 1 { return line }
            if match == 2 { return nil }
        }
        return nil
    }

    /// Puts every line not parsed yet into `unparsed`, by document (later lines win).
    mutating func index() {
        guard !pending.isEmpty else { return }
        unparsed.reserveCapacity(pending.count)
        for line in pending {
            if line.first == UInt8(ascii: "-") {
                if line.count == 38, let id = Field.uuid(line.dropFirst(2)).map(DocumentID.init), !touched.contains(id) {
                    unparsed[id] = nil
                }
            } else if let id = Field.uuid(line.prefix(36)).map(DocumentID.init), entries[id] == nil, !touched.contains(id) {
                unparsed[id] = line
            }
        }
        pending = []
    }

    /// Parses every line not parsed yet, on every core (a line that does not parse is dropped,
    /// as in ``entry(_:)``).
    private mutating func parseAll() {
        index()
        guard !unparsed.isEmpty else { return }
        let lines = Array(unparsed)
        let parsed = SideBySide.compute(lines.count) { Entry(line: lines[$0].value) }
        unparsed = [:]
        entries.reserveCapacity(entries.count + lines.count)
        for (index, line) in lines.enumerated() {
            if let entry = parsed[index], entry.record.id == line.key {
                entries[line.key] = entry
            } else {
                touch(line.key)
            }
        }
    }

    /// The names the catalog holds that start with `prefix`, as text (not checked against the
    /// record files; lines are not parsed, names not validated).
    mutating func names(startingWith prefix: String) -> [String] {
        index()
        var result: [String] = entries.values.lazy.map(\.record.name.rawValue).filter { $0.hasPrefix(prefix) }
        let start = Array(prefix.utf8)
        for line in unparsed.values {
            let fields = Field.split(line, "\t", maxSplits: 3)
            if fields.count > 2, fields[2].starts(with: start) { result.append(String(decoding: fields[2], as: UTF8.self)) }
        }
        return result
    }

    /// The documents the catalog knows under `name` (not checked against the record files).
    mutating func candidates(named name: String) -> [DocumentID] {
        let bytes = Array(name.utf8)
        var matches: [DocumentID] = []
        let lines: [(DocumentID?, ArraySlice<UInt8>)] = pending.isEmpty ? unparsed.map { ($0.key, $0.value) } : pending.map { (nil, $0) }
        for (known, line) in lines {
            // The name is the third field, after the UUID (36 bytes) and the record's stamp:
            // parse only lines whose third field is this name.
            let matched = line.withUnsafeBufferPointer { buffer -> Bool in
                guard let base = buffer.baseAddress, buffer.count > 38,
                      let second = memchr(base + 37, Int32(UInt8(ascii: "\t")), buffer.count - 37) else { return false }
                let start = base.distance(to: second.assumingMemoryBound(to: UInt8.self)) + 1
                guard start + bytes.count < buffer.count, buffer[start + bytes.count] == UInt8(ascii: "\t") else { return false }
                return memcmp(base + start, bytes, bytes.count) == 0
            }
            if matched, let id = known ?? Field.uuid(line.prefix(36)).map(DocumentID.init) { matches.append(id) }
        }
        for id in matches { _ = entry(id) }
        return entries.values.filter { $0.record.name.rawValue == name }.map(\.record.id)
    }

    /// One record, checked against its file. Returns it, or nil if there is none.
    @discardableResult
    mutating func refresh(_ id: DocumentID, _ root: DeviceRoot, recordPath: String? = nil, stamp known: FileIdentity?? = nil) -> LocalDocumentRecord? {
        let path = recordPath ?? root.recordPath(id)
        guard let stamp = known ?? FileIdentity(path: path) else {
            damaged[id] = nil
            forget(id)
            return nil
        }
        let cached = entry(id)
        if let cached, cached.stamp == stamp, !stamp.isRecent {
            recentlyRead[id] = nil
            return cached.record
        }
        let record: LocalDocumentRecord
        do {
            let data = Data(try AtomicFile.readBytes(path: path))
            if let seen = recentlyRead[id], seen.bytes == data {
                record = seen.record
            } else {
                record = try JSONDecoder.multidoc.decode(LocalDocumentRecord.self, from: data)
                guard record.id == id else {
                    throw EngineError.damagedFile(path, "it names document \(record.id), not the one of its folder")
                }
            }
            // A few at a time: a first pass over thousands of new records keeps none of them.
            recentlyRead[id] = stamp.isRecent && recentlyRead.count < Self.recentlyReadLimit ? (data, record) : nil
        } catch is FileIOError {
            // Not read this time (no descriptor left, an I/O error, permissions): not damage.
            forget(id)
            return nil
        } catch {
            damaged[id] = Self.reason(error)
            forget(id)
            return nil
        }
        damaged[id] = nil
        let quiet = cached.flatMap { $0.record == record ? $0.quiet : nil }
        let fresh = Entry(record: record, stamp: stamp, quiet: quiet)
        if cached != fresh {
            entries[id] = fresh
            touch(id)
        }
        return record
    }

    /// One line about why a record file could not be used.
    private static func reason(_ error: any Error) -> String {
        switch error {
        case let error as FileIOError: error.detail ?? error.description
        case let error as EngineError: error.description
        case is DecodingError: "not a record multidoc can read"
        default: "\(error)"
        }
    }

    /// Whether the record file of `id` is the one this catalog knows (this process wrote or read
    /// it last): an event for it is this device's own write, or already seen.
    mutating func knows(_ id: DocumentID, _ root: DeviceRoot) -> Bool {
        let stamp = FileIdentity(path: root.recordURL(id).path)
        return stamp == entry(id)?.stamp
    }

    /// Makes room for `count` more documents at once (a first pass discovering 10,000 grew the
    /// table step by step, each step holding the old table and the new).
    mutating func reserve(more count: Int) {
        guard count > 64 else { return }
        entries.reserveCapacity(entries.count + count)
    }

    /// Notes a record this process just wrote.
    mutating func wrote(_ record: LocalDocumentRecord, _ root: DeviceRoot) {
        guard let stamp = FileIdentity(path: root.recordURL(record.id).path) else { return }
        let quiet = entry(record.id).flatMap { $0.record == record ? $0.quiet : nil }
        entries[record.id] = Entry(record: record, stamp: stamp, quiet: quiet)
        touch(record.id)
    }

    /// Drops what the catalog holds of `id` (a line not parsed yet included).
    mutating func forget(_ id: DocumentID) {
        recentlyRead[id] = nil
        if entries.removeValue(forKey: id) != nil || unparsed.removeValue(forKey: id) != nil || !pending.isEmpty { touch(id) }
    }

    /// Every record the catalog holds (all lines parsed).
    var records: [LocalDocumentRecord] {
        mutating get {
            parseAll()
            return entries.values.map(\.record)
        }
    }
    var count: Int {
        mutating get { index(); return entries.count + unparsed.count }
    }
    /// The documents the catalog holds (not checked against the record files).
    var ids: Set<DocumentID> {
        mutating get { index(); return Set(entries.keys).union(unparsed.keys) }
    }
    /// The quiet mark of `id` (read in place: copying the whole entry for it was a tenth of a
    /// 10,000-document list).
    mutating func quiet(_ id: DocumentID) -> QuietMark? {
        if let index = entries.index(forKey: id) { return entries.values[index].quiet }
        return entry(id)?.quiet
    }

    mutating func setQuiet(_ id: DocumentID, _ mark: QuietMark?) {
        guard let current = entry(id), current.quiet != mark else { return }
        entries[id]?.quiet = mark
        touch(id)
    }

    mutating func setContainerStamp(_ key: ContainerStampKey, _ stamp: FileStamp?) {
        guard containerStamps[key] != stamp else { return }
        containerStamps[key] = stamp
        sharedChanged = true
    }
}
