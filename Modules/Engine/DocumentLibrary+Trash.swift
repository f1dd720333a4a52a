import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync

/// A deleted document kept on this device: `<root>/Trash/<entry>/` holds its local folder as it
/// was (record and store) and `trashed.json`, this description.
public struct TrashEntry: Sendable, Codable, Equatable {
    public let id: DocumentID
    public let name: String
    public let deletedAt: Date
    /// "this device", or the deleting peer's device UUID.
    public let deletedBy: String
    /// The entry's folder name inside `Trash/`.
    public let folder: String
}

extension DocumentLibrary {
    /// How long a deleted document stays restorable on a device that had it.
    public static let trashDays = 30

    var trashDirectory: URL { root.url.appendingPathComponent("Trash", isDirectory: false) }

    /// Moves a deleted document's local folder into the trash instead of removing it: a delete
    /// (here or by a peer) stays restorable for ``trashDays`` days. A document never opened here
    /// (no store) leaves nothing to restore and is removed.
    func moveToTrash(_ record: LocalDocumentRecord, deletedBy: String) {
        let folder = root.documentDirectory(record.id)
        defer {
            catalog.forget(record.id)
            problems[record.id] = nil
        }
        guard configuration.stores.exists(record.store, at: root.storeURL(record)) else {
            try? FileManager.default.removeItem(at: folder)
            return
        }
        let now = configuration.now()
        let name = "\(now.clampedMilliseconds)-\(record.id)"
        let entry = TrashEntry(id: record.id, name: record.name.rawValue, deletedAt: now, deletedBy: deletedBy, folder: name)
        let target = trashDirectory.appendingPathComponent(name, isDirectory: false)
        do {
            // The description goes in first, so an entry in the trash always has one.
            try AtomicFile.write(try JSONEncoder.multidoc.encode(entry), to: folder.appendingPathComponent("trashed.json", isDirectory: false))
            try AtomicFile.makeDirectory(trashDirectory)
            try FileManager.default.moveItem(at: folder, to: target)
            _ = trash()  // entries past their 30 days go as new ones come
        } catch {
            logger.warning("could not keep a deleted document in the trash; removed", metadata: ["name": "\(record.name)", "error": "\(error)"])
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// What the trash holds, newest first; entries older than ``trashDays`` are removed on the way.
    public func trash() -> [TrashEntry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: trashDirectory.path)) ?? []
        let horizon = configuration.now().addingTimeInterval(-Double(Self.trashDays) * 86_400)
        var entries: [TrashEntry] = []
        for name in names where !name.hasPrefix(".") {
            let folder = trashDirectory.appendingPathComponent(name, isDirectory: false)
            guard let data = try? AtomicFile.read(folder.appendingPathComponent("trashed.json", isDirectory: false), limit: 64 * 1024),
                  let entry = try? JSONDecoder.multidoc.decode(TrashEntry.self, from: data), entry.folder == name else { continue }
            if entry.deletedAt < horizon {
                try? FileManager.default.removeItem(at: folder)
                continue
            }
            entries.append(entry)
        }
        return entries.sorted { ($0.deletedAt, $0.folder) > ($1.deletedAt, $1.folder) }
    }

    /// The contents of a trashed store.
    static func read(_ kind: StoreKind, at url: URL, stores: StoreProvider, name: String) throws(EngineError) -> StoreContents {
        do {
            let store = try stores.open(kind, at: url, create: false)
            defer { store.close() }
            return try store.read()
        } catch {
            throw EngineError.storeFailed(document: name, detail: "the trashed copy cannot be read: \(error.description)")
        }
    }

    /// Brings a deleted document back as a new document (a new UUID: a tombstone is forever)
    /// with the text it had, shared through the container when UseCloud is on. `query` is a
    /// name, a UUID or a UUID prefix of an entry of ``trash()``; the newest entry of a name wins.
    ///
    /// As safe as `new`: the document is made with its final record at once (a cloud document
    /// when UseCloud is on, published now or, with the container away or refused, by the first
    /// pass that can), and the trash entry goes only after. Its UUID comes from this device and
    /// the entry, so a restore killed part way and run again finishes the same document instead
    /// of making another.
    public func restore(_ query: String) async throws -> DocumentSummary {
        let entries = trash()
        let lowered = query.lowercased()
        let matches = entries.filter { $0.name == query || $0.id.description == lowered }
        let prefixed = lowered.count >= 4 ? entries.filter { $0.id.description.hasPrefix(lowered) } : []
        guard let entry = matches.first ?? (prefixed.count == 1 ? prefixed.first : nil) else {
            if prefixed.count > 1 {
                throw EngineError.ambiguousName(query, candidates: prefixed.map { ($0.name, $0.id.description) })
            }
            throw EngineError.notInTrash(query, suggestions: Suggestions.closest(to: query, among: entries.map(\.name)))
        }
        let folder = trashDirectory.appendingPathComponent(entry.folder, isDirectory: false)
        let id = DocumentID(Self.restoredUUID(entry, device: identity.id))
        if localRecord(id) == nil {
            let trashed: LocalDocumentRecord
            do {
                trashed = try JSONDecoder.multidoc.decode(
                    LocalDocumentRecord.self, from: try AtomicFile.read(folder.appendingPathComponent("document.json", isDirectory: false)))
            } catch {
                throw EngineError.damagedFile(folder.path, "its record cannot be read (\(error))")
            }
            let storeURL = folder.appendingPathComponent(trashed.storeFolder.rawValue, isDirectory: false)
                .appendingPathComponent(trashed.store.fileName, isDirectory: false)
            let contents = try Self.read(trashed.store, at: storeURL, stores: configuration.stores, name: entry.name)
            let shares = settings.useCloud && replicator != nil
            var record = trashed
            record.id = id
            record.folder = nil
            record.origin = .created
            record.createdBy = identity.id
            record.createdAt = configuration.now()
            record.location = shares ? .cloud : .local
            record.container = shares ? containerID : nil
            // A store left by a restore killed before its record is made again.
            try? FileManager.default.removeItem(at: root.documentDirectory(id))
            do {
                let store = try configuration.stores.open(record.store, at: root.storeURL(record), create: true)
                defer { store.close() }
                var restored = contents
                restored.sync.outbox = [:]
                restored.sync.applied = [identity.id: max(1, contents.sync.applied[identity.id] ?? 0)]
                try store.write { $0 = restored }
            } catch {
                try? FileManager.default.removeItem(at: root.documentDirectory(id))
                throw EngineError.storeFailed(document: entry.name, detail: "the restored copy cannot be written: \(error)")
            }
            try saveRecord(record)
        }
        try? FileManager.default.removeItem(at: folder)
        guard let restored = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        logger.notice("restored document from the trash", metadata: ["name": "\(entry.name)", "old": "\(entry.id)", "new": "\(id)"])
        if restored.location == .cloud, let cloud, cloud.container.isAvailable, !cloud.container.isPublished(id, by: identity.id) {
            // Now if it can; otherwise the next pass publishes it, as it does a new document's.
            if let document = try? await open(restored) {
                do { try publish(document, baseline: true) } catch {
                    logger.notice("restored document not published yet", metadata: ["name": "\(entry.name)", "error": "\(error)"])
                }
            }
        }
        let summary = await summary(of: restored)
        emit(.documentAdded(summary))
        return summary
    }

    /// The UUID a restore of `entry` on `device` gives the document: the same for a retry, and
    /// another for every other entry and device (two devices restoring their copies of one
    /// document make two documents, as two `new` would).
    static func restoredUUID(_ entry: TrashEntry, device: DeviceID) -> UUID {
        func hash(_ seed: UInt64) -> UInt64 {
            var hash = FNV1a()
            hash.mix(seed)
            hash.mix(uuid: device.uuid)
            hash.mix(uuid: entry.id.uuid)
            for byte in entry.folder.utf8 { hash.mix(byte: byte) }
            return hash.value
        }
        let first = hash(0), second = hash(0x7265_7374_6f72_6564)  // "restored"
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: first >> UInt64(8 * index))
            bytes[index + 8] = UInt8(truncatingIfNeeded: second >> UInt64(8 * index))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8: made by this program
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // the RFC 9562 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
