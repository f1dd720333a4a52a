#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

extension Container {
    /// Every document folder's UUID.
    func documentIDs() -> [DocumentID] {
        // Read on every discovery, 10,000 names and more: `readdir` and a UUID parse each (a
        // name that parses is never an ignored one), sorted as UUIDs (the order of their text).
        guard symlinkProblem(documentsDirectory) == nil, let folder = DirectoryHandle(path: documentsDirectory.path),
              let entries = folder.entries(".") else { return [] }
        return entries.compactMap { DocumentID($0.name) }.sorted()
    }

    /// The info files of a document: the creator's first.
    /// Whether any device's info file of `id` stands (whole, naming `id`): a device joining later
    /// finds the document.
    public func isListed(_ id: DocumentID) -> Bool { !infos(id).isEmpty }

    func infos(_ id: DocumentID) -> [DocumentInfo] {
        listNames(documentDirectory(id))
            .filter { $0.hasPrefix("info-") && $0.hasSuffix(".json") }
            .compactMap { name -> DocumentInfo? in
                guard let info: DocumentInfo = try? readJSON(documentDirectory(id).appendingPathComponent(name, isDirectory: false), limit: Self.maximumRecordSize),
                      info.document == id, info.format <= Self.formatVersion else { return nil }
                return info
            }
            .sorted { ($0.createdAt, $0.createdBy) < ($1.createdAt, $1.createdBy) }
    }

    /// Whether a document's folder is left over from a container that was reset: it has info
    /// files and every one names a container identity other than those in force (`inForce`:
    /// the identities present that no reset replaced). Info files without a container (written
    /// by earlier versions) never make a left-over.
    func isLeftOver(_ id: DocumentID, inForce: Set<UUID>) -> Bool {
        guard !inForce.isEmpty else { return false }
        let infos = infos(id)
        return !infos.isEmpty && infos.allSatisfy { info in info.container.map { !inForce.contains($0) } ?? false }
    }

    /// Stamps of a document's folders (`logs/`, `baselines/`, the document's own folder, then
    /// each `logs/<device>/` in the order of `devices`). Files in the container are written once and renamed into place, so
    /// a new, removed or renamed file changes one of them: equal stamps mean nothing arrived.
    public struct ChangeStamps: Sendable, Equatable {
        public var stamps: [FileStamp]
        /// The device folders stamped after the first two.
        public var devices: [DeviceID]

        public init(stamps: [FileStamp], devices: [DeviceID]) {
            self.stamps = stamps
            self.devices = devices
        }

        /// How many stamps come before the device folders' (`logs/`, `baselines/`, the
        /// document's folder).
        public static let folderStamps = 3

        /// Where the stamp of `device`'s log folder is in ``stamps``, or nil when it has none.
        public func index(of device: DeviceID) -> Int? {
            guard let position = devices.firstIndex(of: device) else { return nil }
            let index = Self.folderStamps + position
            return index < stamps.count ? index : nil
        }

        /// These stamps with `device`'s log folder stamped as in `earlier` (when both stamp it):
        /// a comparison with `earlier` that passes over what `device` did there.
        public func keeping(_ device: DeviceID, as earlier: ChangeStamps) -> ChangeStamps {
            guard let index = index(of: device), let before = earlier.index(of: device) else { return self }
            var kept = self
            kept.stamps[index] = earlier.stamps[before]
            return kept
        }
    }

    /// The ``ChangeStamps`` of a document. With `earlier` (stamps this device trusted before):
    /// when `logs/` has the same stamp, no device folder came or went (that would change it),
    /// so the same device folders are stamped without listing `logs/` again.
    public func changeStamps(_ id: DocumentID, earlier: ChangeStamps? = nil, in documents: DirectoryHandle? = nil) -> ChangeStamps {
        // Called for every document on every pass and list: paths as strings relative to the
        // open `documents/` folder when the caller has one, and at most one `readdir` (URLs and
        // the listing's filters cost more than the `stat`s). Links are not followed into: a
        // link where a device folder belongs is stamped as what it is. The document's folder is
        // stamped too: its info files land there, and one removed or replaced is published
        // again by a device that holds the document (its next full pass looks at it).
        guard let documents = documents ?? DirectoryHandle(path: root.path + "/documents") else {
            return ChangeStamps(stamps: [FileStamp(modified: -1, size: 0), FileStamp(modified: -1, size: 0), FileStamp(modified: -1, size: 0)], devices: [])
        }
        let logs = id.description + "/logs"
        var stamps = [FileStamp(in: documents, logs), FileStamp(in: documents, id.description + "/baselines"), FileStamp(in: documents, id.description)]
        var devices: [DeviceID]
        if let earlier, earlier.stamps.first == stamps[0], stamps[0].modified != -1 {
            devices = earlier.devices
        } else {
            // Only what an import reads: folders named by a device's UUID.
            devices = (documents.entries(logs) ?? []).compactMap { $0.isFolderOrUnknown ? DeviceID($0.name) : nil }.sorted()
        }
        for device in devices { stamps.append(FileStamp(in: documents, logs + "/" + device.description)) }
        return ChangeStamps(stamps: stamps, devices: devices)
    }

    /// The container's `documents/` folder, open for ``changeStamps(_:earlier:in:)`` over many
    /// documents (nil if it cannot be opened).
    public func documentsFolder() -> DirectoryHandle? { DirectoryHandle(path: root.path + "/documents") }

    /// Devices with logs for a document.
    public func logDevices(_ id: DocumentID) -> [DeviceID] {
        listNames(documentDirectory(id).appendingPathComponent("logs", isDirectory: false)).compactMap(DeviceID.init)
    }

    /// The sequence numbers of a device's logs present for a document, ascending.
    public func logSequences(_ id: DocumentID, device: DeviceID) -> [UInt64] {
        // A log name is never an ignored one: no need for listNames' filter, which dominated an
        // import's time in a folder of hundreds of logs.
        let folder = logsDirectory(id, device: device)
        guard symlinkProblem(folder) == nil else { return [] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .compactMap(Self.sequence(fromLogName:)).sorted()
    }

    /// Conflict copies found in a document's folders (reported, never imported).
    func conflictCopies(_ id: DocumentID) -> [URL] { listing(id).conflictCopies }

    /// Conflict copies in the container's own folders (`identity/`, `devices/`, `tombstones/`);
    /// reported, never read. A document's folder is checked by ``conflictCopies(_:)``.
    func sharedConflictCopies() -> [URL] {
        [identityDirectory, devicesDirectory, tombstonesDirectory].flatMap { directory in
            ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
                .filter(ContainerFiles.isConflictCopy)
                .sorted()
                .map { directory.appendingPathComponent($0, isDirectory: false) }
        }
    }
}
