import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage

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
        var record = trashed
        record.folder = nil
        let id = try rekeyAsLocal(record, contents: contents)
        try? FileManager.default.removeItem(at: folder)
        logger.notice("restored document from the trash", metadata: ["name": "\(entry.name)", "old": "\(entry.id)", "new": "\(id)"])
        if settings.useCloud, replicator != nil, containerRefusal == nil {
            let shared = try await moveToCloud(id)
            return await summary(of: localRecord(shared) ?? record)
        }
        guard let restored = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        emit(.documentAdded(await summary(of: restored)))
        return await summary(of: restored)
    }
}
