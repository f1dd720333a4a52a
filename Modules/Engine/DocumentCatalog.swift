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
    private var entries: [DocumentID: Entry] = [:]
    private var unparsed: [DocumentID: ArraySlice<UInt8>] = [:]
    /// The file's document lines in file order, until something needs them all (`index()`):
    /// a command about one document finds its line with `memcmp` and builds no table of 10,000.
    private var pending: [ArraySlice<UInt8>] = []
    /// Container-wide stamps this device has acted on (documents/, tombstones/, devices/), so a
    /// command skips discovery, tombstones and the registry when they did not change.
    var containerStamps: [String: FileStamp] = [:]
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
    private var touched: Set<DocumentID> = []
    private var sharedChanged = false
    /// Lines in the file as this process last read or wrote it (0: none it can append to).
    private var fileLines = 0
    /// Lines the file held when it was last written whole (it is written whole again past twice that).
    private var baseLines = 0

    private mutating func touch(_ id: DocumentID) { touched.insert(id) }

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
            if let stamp = stamps[index], let cached = entries[id], cached.stamp == stamp, !stamp.isRecent { continue }
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
    private mutating func index() {
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
        let path = recordPath ?? root.recordURL(id).path
        guard let stamp = known ?? FileIdentity(path: path) else {
            damaged[id] = nil
            forget(id)
            return nil
        }
        let cached = entry(id)
        if let cached, cached.stamp == stamp, !stamp.isRecent { return cached.record }
        let record: LocalDocumentRecord
        do {
            let data = try AtomicFile.read(URL(fileURLWithPath: path, isDirectory: false))
            record = try JSONDecoder.multidoc.decode(LocalDocumentRecord.self, from: data)
            guard record.id == id else {
                throw EngineError.damagedFile(path, "it names document \(record.id), not the one of its folder")
            }
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

    mutating func setContainerStamp(_ key: String, _ stamp: FileStamp?) {
        guard containerStamps[key] != stamp else { return }
        containerStamps[key] = stamp
        sharedChanged = true
    }

    // MARK: The file

    private static let header = "multidoc-catalog 2"

    /// Reads the catalog file; an unreadable or foreign one gives an empty catalog. Parsed as
    /// bytes: String's character-by-character splitting cost more than the whole command may.
    static func load(_ url: URL) -> DocumentCatalog {
        var catalog = DocumentCatalog()
        guard let bytes = try? AtomicFile.readBytes(url, limit: 256 * 1024 * 1024) else { return catalog }
        // The non-empty lines (a generic `split` over megabytes was a fifth of a command).
        let lines = Field.split(bytes[...], "\n", omittingEmpty: true)
        // `multidoc-catalog 2<tab>lines when written whole`
        let headerFields = lines.first.map { Field.split($0, "\t") } ?? []
        guard headerFields.first?.elementsEqual(header.utf8) == true else { return catalog }
        catalog.baseLines = headerFields.dropFirst().first.flatMap(Field.uint64).map { Int(clamping: $0) } ?? 0
        catalog.pending.reserveCapacity(lines.count)
        // Later lines win: a save appends the lines that changed (see `save`).
        for line in lines.dropFirst() {
            guard let kind = line.first else { continue }
            if kind == UInt8(ascii: "@") || kind == UInt8(ascii: "#") {
                let fields = Field.split(line, "\t")
                if kind == UInt8(ascii: "@"), fields.count == 3 {
                    catalog.containerStamps[String(decoding: fields[1], as: UTF8.self)] = FileStamp(field: fields[2])
                } else if kind == UInt8(ascii: "#"), fields.count == 3, let digest = Field.uint64(fields[1]),
                          let stamp = FileStamp(field: fields[2]) {
                    catalog.registration = (digest, stamp)
                }
            } else if kind == UInt8(ascii: "~") {
                // `~`, then a tab and `device=offset=name` (the name percent-encoded) per peer.
                catalog.clockReadings = Field.split(line, "\t").dropFirst().compactMap { field in
                    let parts = String(decoding: field, as: UTF8.self).split(separator: "=", maxSplits: 2, omittingEmptySubsequences: false)
                    guard parts.count == 3, let device = DeviceID(String(parts[0])), let offset = Int64(parts[1]),
                          let name = String(parts[2]).removingPercentEncoding else { return nil }
                    return ClockReading(device: device, name: name, offset: offset)
                }
            } else if line.count >= 38 {
                // A document's line, or `-` and the UUID of one that went: kept as bytes until
                // the document is asked for.
                catalog.pending.append(line)
            }
        }
        catalog.sharedChanged = false
        catalog.fileLines = lines.count
        return catalog
    }

    /// Writes the catalog if it changed (not durably: it is a cache, a crash costs one slower
    /// pass). A few changed lines are appended to the file (a command about one document of
    /// 10,000 writes one line, not three megabytes); the whole file is written again when it
    /// holds more than twice the lines it needs, or there is none to append to.
    mutating func save(_ url: URL) throws {
        guard changed else { return }
        var text = ""
        let shared = sharedChanged
        // `appending`: the clock line goes even when empty (it clears what an earlier one said).
        func sharedLines(appending: Bool) {
            for (key, stamp) in containerStamps.sorted(by: { $0.key < $1.key }) {
                text += "@\t\(key)\t\(stamp.field)\n"
            }
            if let registration { text += "#\t\(registration.digest)\t\(registration.stamp.field)\n" }
            guard appending || !clockReadings.isEmpty else { return }
            text += "~"
            for reading in clockReadings {
                let name = reading.name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                text += "\t\(reading.device)=\(reading.offset)=\(name)"
            }
            text += "\n"
        }
        let appended = touched.count + (shared ? containerStamps.count + 2 : 0)
        if fileLines > 0, fileLines + appended <= 2 * baseLines + 64, access(url.path, W_OK) == 0 {
            // A line left torn by a crash ends at this newline and is dropped when read.
            text = "\n"
            for id in touched.sorted() {
                // A touched document is parsed, or gone.
                text += (entries[id]?.line ?? "-\t\(id)") + "\n"
            }
            // Stamps set to nothing are appended as `-`, which reads back as none.
            if shared {
                for key in ["documents", "tombstones", "devices"] where containerStamps[key] == nil { text += "@\t\(key)\t-\n" }
                sharedLines(appending: true)
            }
            try AtomicFile.append(Data(text.utf8), to: url)
            fileLines += appended
        } else {
            index()
            let lines = 1 + containerStamps.count + (registration == nil ? 0 : 1) + (clockReadings.isEmpty ? 0 : 1) + entries.count + unparsed.count
            text = Self.header + "\t\(lines)\n"
            sharedLines(appending: false)
            // Straight into one buffer of about the file's size: a String grown line by line
            // and then copied into Data peaked at three times the catalog (11 MB of a daemon's
            // memory at 10,000 documents).
            var data = Data()
            data.reserveCapacity(text.utf8.count + (entries.count + unparsed.count) * 640)
            data.append(contentsOf: text.utf8)
            for entry in entries.values {
                data.append(contentsOf: entry.line.utf8)
                data.append(UInt8(ascii: "\n"))
            }
            for line in unparsed.values {
                data.append(contentsOf: line)
                data.append(UInt8(ascii: "\n"))
            }
            try AtomicFile.write(data, to: url, durable: false)
            fileLines = lines
            baseLines = lines
        }
        touched = []
        sharedChanged = false
    }
}

// MARK: - Line format

extension DocumentCatalog.Entry {
    /// `uuid  inode:mtime:size  name  store  origin  location  createdAt-ms  createdBy  container|-  quiet|-  /folder|-`
    /// separated by tabs (a document name never holds a control character). Lines of earlier
    /// versions have no folder field.
    var line: String {
        let r = record
        let created = r.createdAt.clampedMilliseconds
        let fields: [String] = [
            r.id.description, "\(stamp.inode):\(stamp.modified):\(stamp.size)", r.name.rawValue, r.store.rawValue,
            r.origin.rawValue, r.location.rawValue, String(created), r.createdBy.description,
            r.container.map { $0.uuidString.lowercased() } ?? "-", quiet?.field ?? "-", r.folder.map { "/" + $0.rawValue } ?? "-",
        ]
        return fields.joined(separator: "\t")
    }

    /// Parses a line (nil if it is not one this build wrote).
    init?(line: ArraySlice<UInt8>) {
        guard let entry = line.withUnsafeBufferPointer({ Self(line: $0) }) else { return nil }
        self = entry
    }

    /// Parsed in place with a ``Field/Cursor``: splitting into arrays of slices first allocated
    /// a score of arrays per line, and parsing the catalog was a fifth of a 10,000-document list.
    init?(line: UnsafeBufferPointer<UInt8>) {
        var fields = Field.Cursor(line)
        let tab = UInt8(ascii: "\t")
        guard let id = fields.next(tab).flatMap(Field.uuid).map(DocumentID.init),
              let stampField = fields.next(tab), let name = fields.next(tab), let store = fields.next(tab),
              let origin = fields.next(tab), let location = fields.next(tab), let created = fields.next(tab).flatMap(Field.int64),
              let createdBy = fields.next(tab).flatMap(Field.uuid).map(DeviceID.init), let containerField = fields.next(tab),
              let quietField = fields.next(tab) else { return nil }
        // Lines of earlier versions have no folder field.
        let folderField = fields.next(tab)
        guard fields.isAtEnd else { return nil }
        var parts = Field.Cursor(stampField)
        let colon = UInt8(ascii: ":")
        guard let inode = parts.next(colon).flatMap(Field.uint64), let modified = parts.next(colon).flatMap(Field.int64),
              let size = parts.next(colon).flatMap(Field.int64), parts.isAtEnd,
              let name = try? DocumentName(String(decoding: name, as: UTF8.self)),
              let store = StoreKind(rawValue: String(decoding: store, as: UTF8.self)),
              let origin = DocumentOrigin(rawValue: String(decoding: origin, as: UTF8.self)),
              let location = DocumentLocation(rawValue: String(decoding: location, as: UTF8.self)) else { return nil }
        var container: UUID?
        if !Field.isDash(containerField) {
            guard let uuid = Field.uuid(containerField) else { return nil }
            container = uuid
        }
        var folder: DocumentName?
        if let folderField, !Field.isDash(folderField) {
            // A name never holds a slash, so `/` marks a folder apart from the `-` of none.
            guard folderField.first == UInt8(ascii: "/"),
                  let named = try? DocumentName(String(decoding: UnsafeBufferPointer(rebasing: folderField.dropFirst()), as: UTF8.self)) else { return nil }
            folder = named
        }
        record = LocalDocumentRecord(
            id: id, name: name, store: store, origin: origin, location: location,
            createdAt: Date(timeIntervalSince1970: Double(created) / 1000), createdBy: createdBy, container: container, folder: folder)
        stamp = FileIdentity(inode: inode, modified: modified, size: size)
        if Field.isDash(quietField) {
            quiet = nil
        } else {
            // A mark that does not parse is only not known: the next pass looks again.
            quiet = QuietMark(field: quietField)
        }
    }
}

/// Parsing of the catalog's fields, as bytes.
enum Field {
    /// The fields of `bytes` between `separator`s, found with `memchr` (the generic `split`
    /// took a sixth of a 10,000-document list); at most `maxSplits` splits.
    static func split(
        _ bytes: ArraySlice<UInt8>, _ separator: Unicode.Scalar, maxSplits: Int = .max, omittingEmpty: Bool = false
    ) -> [ArraySlice<UInt8>] {
        var result: [ArraySlice<UInt8>] = []
        let byte = Int32(UInt8(ascii: separator))
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var start = 0
            while start <= buffer.count {
                var end = buffer.count
                if result.count < maxSplits, start < buffer.count, let found = memchr(base + start, byte, buffer.count - start) {
                    end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                }
                if end > start || !omittingEmpty {
                    result.append(bytes[(bytes.startIndex + start)..<(bytes.startIndex + end)])
                }
                start = end + 1
            }
        }
        return result
    }

    /// The fields of a line one after the other, in place (no array of fields made).
    struct Cursor {
        private let bytes: UnsafeBufferPointer<UInt8>
        /// Where the next field starts; past the end once the last field was taken.
        private var position = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        /// Whether every field was taken.
        var isAtEnd: Bool { position > bytes.count }

        /// The next field up to `separator` (or the end), nil when there is none left.
        mutating func next(_ separator: UInt8) -> UnsafeBufferPointer<UInt8>? {
            guard position <= bytes.count, let base = bytes.baseAddress else { return nil }
            var end = bytes.count
            if position < bytes.count, let found = memchr(base + position, Int32(separator), bytes.count - position) {
                end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
            defer { position = end + 1 }
            return UnsafeBufferPointer(rebasing: bytes[position..<end])
        }

        /// The next field that is not empty (empty ones are skipped), nil when there is none left.
        mutating func nextNonEmpty(_ separator: UInt8) -> UnsafeBufferPointer<UInt8>? {
            while let field = next(separator) {
                if !field.isEmpty { return field }
            }
            return nil
        }
    }

    static func isDash(_ field: UnsafeBufferPointer<UInt8>) -> Bool { field.count == 1 && field.first == UInt8(ascii: "-") }

    static func uuid(_ field: ArraySlice<UInt8>) -> UUID? {
        field.withUnsafeBufferPointer { UUIDText.parse(bytes: $0) }
    }

    static func uuid(_ field: UnsafeBufferPointer<UInt8>) -> UUID? { UUIDText.parse(bytes: field) }

    static func uint64(_ field: ArraySlice<UInt8>) -> UInt64? { field.withUnsafeBufferPointer(uint64) }

    static func uint64(_ field: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard !field.isEmpty, field.count <= 20 else { return nil }
        var value: UInt64 = 0
        for byte in field {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    static func int64(_ field: UnsafeBufferPointer<UInt8>) -> Int64? {
        if field.first == UInt8(ascii: "-") {
            guard let magnitude = uint64(UnsafeBufferPointer(rebasing: field.dropFirst())), magnitude <= UInt64(Int64.max) else { return nil }
            return -Int64(magnitude)
        }
        guard let magnitude = uint64(field), magnitude <= UInt64(Int64.max) else { return nil }
        return Int64(magnitude)
    }
}

extension FileStamp {
    /// `modified,size`, and `,links` for a folder.
    var field: String { links == 0 ? "\(modified),\(size)" : "\(modified),\(size),\(links)" }

    init?(field: ArraySlice<UInt8>) {
        guard let stamp = field.withUnsafeBufferPointer({ Self(field: $0) }) else { return nil }
        self = stamp
    }

    init?(field: UnsafeBufferPointer<UInt8>) {
        var parts = Field.Cursor(field)
        let comma = UInt8(ascii: ",")
        guard let modified = parts.next(comma).flatMap(Field.int64), let size = parts.next(comma).flatMap(Field.int64) else { return nil }
        var links: Int64 = 0
        if let third = parts.next(comma) {
            guard let value = Field.int64(third) else { return nil }
            links = value
        }
        guard parts.isAtEnd else { return nil }
        self.init(modified: modified, size: size, links: links)
    }
}

extension QuietMark {
    /// `viewable;modified-ms|-;stamp|stamp…;device=seq,…;ownLogs;preview;device,…` (no tabs).
    var field: String {
        let modifiedField = modified.map { String($0.clampedMilliseconds) } ?? "-"
        let stampsField = stamps.map(\.field).joined(separator: "|")
        let appliedField = applied.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        let devicesField = devices.map(\.description).joined(separator: ",")
        return "\(viewable ? 1 : 0);\(modifiedField);\(stampsField);\(appliedField);\(ownLogs);\(preview ? 1 : 0);\(devicesField)"
    }

    init?(field: UnsafeBufferPointer<UInt8>) {
        var parts = Field.Cursor(field)
        let semicolon = UInt8(ascii: ";"), comma = UInt8(ascii: ",")
        guard let viewableField = parts.next(semicolon), let modifiedField = parts.next(semicolon),
              let stampsField = parts.next(semicolon), let appliedField = parts.next(semicolon),
              let ownLogs = parts.next(semicolon).flatMap(Field.uint64), let previewField = parts.next(semicolon),
              let devicesField = parts.next(semicolon), parts.isAtEnd else { return nil }
        preview = previewField.first == UInt8(ascii: "1")
        viewable = viewableField.first == UInt8(ascii: "1")
        self.ownLogs = ownLogs
        var devices: [DeviceID] = []
        var deviceFields = Field.Cursor(devicesField)
        while let field = deviceFields.nextNonEmpty(comma) {
            guard let device = Field.uuid(field).map(DeviceID.init) else { return nil }
            devices.append(device)
        }
        self.devices = devices
        if Field.isDash(modifiedField) {
            modified = nil
        } else {
            guard let ms = Field.int64(modifiedField) else { return nil }
            modified = Date(timeIntervalSince1970: Double(ms) / 1000)
        }
        var stamps: [FileStamp] = []
        var stampFields = Field.Cursor(stampsField)
        while let part = stampFields.nextNonEmpty(UInt8(ascii: "|")) {
            guard let stamp = FileStamp(field: part) else { return nil }
            stamps.append(stamp)
        }
        self.stamps = stamps
        var applied: [DeviceID: UInt64] = [:]
        var pairs = Field.Cursor(appliedField)
        while let pair = pairs.nextNonEmpty(comma) {
            var kv = Field.Cursor(pair)
            let equals = UInt8(ascii: "=")
            guard let device = kv.nextNonEmpty(equals).flatMap(Field.uuid).map(DeviceID.init),
                  let sequence = kv.nextNonEmpty(equals).flatMap(Field.uint64), kv.nextNonEmpty(equals) == nil else { return nil }
            applied[device] = sequence
        }
        self.applied = applied
    }
}
