#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
import Sync

extension DocumentCatalog {
    // MARK: The file

    static let header = "multidoc-catalog 2"

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
                    // A key this build does not know is dropped: its stamp only saves work.
                    if let key = ContainerStampKey(rawValue: String(decoding: fields[1], as: UTF8.self)) {
                        catalog.containerStamps[key] = FileStamp(field: fields[2])
                    }
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
                text += "@\t\(key.rawValue)\t\(stamp.field)\n"
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
                for key in [ContainerStampKey.documents, .tombstones, .devices] where containerStamps[key] == nil { text += "@\t\(key.rawValue)\t-\n" }
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
