#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
import Sync

extension DocumentCatalog {
}

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
    /// `viewable;modified-ms|-;stamp|stamp…;device=seq,…;ownLogs;preview;device,…` (no tabs);
    /// `preview` is 1 for a mark of a previewed document, 0 for a downloaded one.
    var field: String {
        let modifiedField = modified.map { String($0.clampedMilliseconds) } ?? "-"
        let stampsField = stamps.map(\.field).joined(separator: "|")
        let appliedField = applied.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        let devicesField = devices.map(\.description).joined(separator: ",")
        return "\(viewable ? 1 : 0);\(modifiedField);\(stampsField);\(appliedField);\(ownLogs);\(life == .previewed ? 1 : 0);\(devicesField)"
    }

    init?(field: UnsafeBufferPointer<UInt8>) {
        var parts = Field.Cursor(field)
        let semicolon = UInt8(ascii: ";"), comma = UInt8(ascii: ",")
        guard let viewableField = parts.next(semicolon), let modifiedField = parts.next(semicolon),
              let stampsField = parts.next(semicolon), let appliedField = parts.next(semicolon),
              let ownLogs = parts.next(semicolon).flatMap(Field.uint64), let previewField = parts.next(semicolon),
              let devicesField = parts.next(semicolon), parts.isAtEnd else { return nil }
        life = previewField.first == UInt8(ascii: "1") ? .previewed : .downloaded
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
