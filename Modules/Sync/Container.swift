#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

/// The shared container folder, as one device sees it. Layout and rules are in
/// Docs/CONTAINER-FORMAT.md; in short, every file is written once, by one device, under a name
/// no other device writes, atomically.
///
/// ```
/// <container>/
///   identity/<deviceID>.json                           ContainerIdentity (seeding device)
///   devices/<deviceID>.json                            DeviceRecord (replaced by its owner only)
///   documents/<docID>/info-<deviceID>.json             DocumentInfo (creator; once)
///   documents/<docID>/logs/<deviceID>/<seq>.log         TransactionLog (seq: 16 digits)
///   documents/<docID>/baselines/<deviceID>-<n>.json     Baseline
///   tombstones/<docID>.<deviceID>.json                  DocumentTombstone
/// ```
public struct Container: Sendable {
    /// The newest container format this build reads, and the one it seeds new containers with.
    /// Format 2 (Docs/CONTAINER-FORMAT.md) writes logs as binary envelopes whose changes may
    /// carry text operations; a container of format 1 keeps format 1 logs until
    /// `multidoc container upgrade` moves it.
    public static let formatVersion = 2
    /// The version of info, tombstone and registry records: their shape is the same in both
    /// formats, so devices of either read them.
    public static let recordFormat = 1

    public let root: URL
    /// Told about every file this device writes or removes in the container, after the change
    /// is durable (for example to nudge a replication engine). Nil: nobody is told.
    public let writeObserver: (any ContainerWriteObserver)?
    /// The device's keys and the container's policy (signed, admitted devices, encrypted).
    /// Nil: a view that neither signs nor checks signatures (tools, dumps, copies).
    public let keys: ContainerKeys?

    /// - Parameters:
    ///   - root: the container folder.
    ///   - writeObserver: told the path (relative to `root`) of every file written or removed.
    ///   - keys: the device's keys, for a container that may be signed or encrypted.
    public init(root: URL, writeObserver: (any ContainerWriteObserver)? = nil, keys: ContainerKeys? = nil) {
        self.root = root
        self.writeObserver = writeObserver
        self.keys = keys
    }

    /// `url`'s path relative to the container root (`documents/<uuid>/logs/<device>/<seq>.log`),
    /// or nil for a path outside the container.
    public func relativePath(of url: URL) -> String? {
        let base = root.standardizedFileURL.path
        let path = url.standardizedFileURL.path
        guard path.hasPrefix(base + "/") else { return nil }
        return String(path.dropFirst(base.count + 1))
    }

    func didChangeFile(_ url: URL) { didChange(url) }

    private func didChange(_ url: URL) {
        guard let writeObserver, let relative = relativePath(of: url) else { return }
        writeObserver.containerDidChange(relative)
    }

    // MARK: Paths

    public var identityDirectory: URL { root.appendingPathComponent("identity", isDirectory: false) }
    public var devicesDirectory: URL { root.appendingPathComponent("devices", isDirectory: false) }
    public var documentsDirectory: URL { root.appendingPathComponent("documents", isDirectory: false) }
    public var tombstonesDirectory: URL { root.appendingPathComponent("tombstones", isDirectory: false) }

    public func documentDirectory(_ id: DocumentID) -> URL { documentsDirectory.appendingPathComponent(id.description, isDirectory: false) }
    /// A device's next document folder, made ahead (``Replicator/prepareDocumentFolder()``): a
    /// dot name, which every reader skips.
    public func spareDocumentDirectory(device: DeviceID) -> URL {
        documentsDirectory.appendingPathComponent(".spare-\(device)", isDirectory: false)
    }
    public func infoURL(_ id: DocumentID, device: DeviceID) -> URL {
        Self.infoURL(inDocumentFolder: documentDirectory(id), device: device)
    }
    /// Whether any device's info file of the document is in its folder (it is published).
    func hasInfoFile(_ id: DocumentID) -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: documentDirectory(id).path)) ?? []
        return names.contains { $0.hasPrefix("info-") && $0.hasSuffix(".json") }
    }
    public func logsDirectory(_ id: DocumentID, device: DeviceID) -> URL {
        Self.logsDirectory(inDocumentFolder: documentDirectory(id), device: device)
    }
    static func infoURL(inDocumentFolder folder: URL, device: DeviceID) -> URL {
        folder.appendingPathComponent("info-\(device).json", isDirectory: false)
    }
    static func logsDirectory(inDocumentFolder folder: URL, device: DeviceID) -> URL {
        folder.appendingPathComponent("logs", isDirectory: false).appendingPathComponent(device.description, isDirectory: false)
    }
    public func logURL(_ id: DocumentID, device: DeviceID, sequence: UInt64) -> URL {
        logsDirectory(id, device: device).appendingPathComponent(Self.logFileName(sequence), isDirectory: false)
    }
    public func baselinesDirectory(_ id: DocumentID) -> URL { documentDirectory(id).appendingPathComponent("baselines", isDirectory: false) }
    public func tombstoneURL(_ id: DocumentID, device: DeviceID) -> URL {
        tombstonesDirectory.appendingPathComponent("\(id).\(device).json", isDirectory: false)
    }
    public func deviceRecordURL(_ device: DeviceID) -> URL { devicesDirectory.appendingPathComponent("\(device).json", isDirectory: false) }

    static func logFileName(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits + ".log"
    }

    private static let logSuffix = Array(".log".utf8)

    /// The sequence of a finished log's name (16 decimal digits, `.log`), or nil. Such a name is
    /// never a temporary, backup or conflict name, so readers need no other check.
    static func sequence(fromLogName name: String) -> UInt64? {
        var value: UInt64 = 0
        var count = 0
        for byte in name.utf8 {
            if count < 16 {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflowSum) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                guard !overflowTimes, !overflowSum else { return nil }
                value = sum
            } else if count >= 20 || byte != logSuffix[count - 16] {
                return nil
            }
            count += 1
        }
        return count == 20 && value > 0 && value <= ContainerBounds.maximumSequence ? value : nil
    }

    // MARK: Availability and identity

    /// Whether the folder is there and readable.
    public var isAvailable: Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory)
            && isDirectory.boolValue && FileManager.default.isReadableFile(atPath: root.path)
            && FileManager.default.isExecutableFile(atPath: root.path)
    }

    /// Throws ``SyncError/Kind/containerUnavailable`` unless the folder is usable.
    public func checkAvailable() throws(SyncError) {
        guard isAvailable else {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory)
            let detail = !exists ? "no such folder"
                : !isDirectory.boolValue ? "not a folder (a file is where the container belongs)"
                : "permission denied: this user may not read it; give it read and search permission (chmod u+rx) or run as its owner"
            throw SyncError(.containerUnavailable, path: root.path, detail: detail)
        }
    }

    /// The identity in force: of all seeded identities, the one with the smallest container UUID.
    /// Two devices that seed an empty container at once thus agree, deterministically, once each
    /// sees the other's file. Nil if the container has never been seeded.
    ///
    /// Identities that another identity file says it replaces are out of the election: in a
    /// replicated folder the new identity of a reset may arrive before the old file's deletion.
    public func identity() throws(SyncError) -> ContainerIdentity? {
        Self.elect(try identities())
    }

    /// The identity in force among `identities` (see ``identity()``).
    static func elect(_ identities: [ContainerIdentity]) -> ContainerIdentity? {
        let replaced = replacedIDs(identities)
        return identities.filter { !replaced.contains($0.containerID) }.min { $0.containerID.uuidString < $1.containerID.uuidString }
    }

    /// Every container UUID that some identity file says it replaces.
    static func replacedIDs(_ identities: [ContainerIdentity]) -> Set<UUID> {
        Set(identities.flatMap { $0.replaces ?? [] })
    }

    /// Every identity file present (see ``scanIdentities()``).
    func identities() throws(SyncError) -> [ContainerIdentity] { try scanIdentities().identities }

    /// Every identity file present, and the files of the identity folder passed over.
    ///
    /// A file that is not an identity is passed over while a good one is there, and has no
    /// effect: one stray or damaged file must not stop every device from syncing, nor move the
    /// container back to an older format (a damaged `format-2.<device>.json` would otherwise
    /// leave only the format 1 file of its identity). It is returned, so every pass names it.
    /// With no good file at all it is an error: seeding a new identity beside a damaged one
    /// would split the devices.
    func scanIdentities() throws(SyncError) -> (identities: [ContainerIdentity], passedOver: [QuarantinedFile]) {
        try checkAvailable()
        var result: [ContainerIdentity] = []
        var passedOver: [QuarantinedFile] = []
        var damaged: SyncError?
        // A folder that cannot be listed is not an empty one: seeding beside identities this
        // device cannot see would split the devices.
        for name in try names(in: identityDirectory) where name.hasSuffix(".json") && !Self.isTrustRecord(name) {
            let url = identityDirectory.appendingPathComponent(name, isDirectory: false)
            let identity: ContainerIdentity
            var envelope: (ContainerEnvelope, [UInt8])?
            do {
                let data = try readFile(url, limit: Self.maximumRecordSize)
                if keys?.policy.root != nil, ContainerEnvelope.isEnvelope(data) {
                    // Checked below, against what this device knows of the signed container.
                    let bytes = Array(data)
                    let read = try ContainerEnvelope(decoding: bytes, maximumPayload: bytes.count)
                    guard read.kind == .identity else { throw LogDecodingError(reason: "is a \(read.kind.name) file where an identity belongs") }
                    envelope = (read, bytes)
                    identity = try Self.decodeJSON(ContainerIdentity.self, from: Data(read.payload))
                } else {
                    identity = try Self.decodeJSON(ContainerIdentity.self, from: try openRecord(data, at: url))
                }
            } catch {
                damaged = damaged ?? SyncError(.malformedFile, path: url.path, detail: "not a container identity (\(Self.summarize(error))); remove it, or run `multidoc container verify`")
                passedOver.append(QuarantinedFile(url: url, reason: Self.passedOverReason(name: name, problem: Self.summarize(error))))
                continue
            }
            // In a container this device has seen signed, an identity file counts only as far
            // as its signature carries it (``identityRefusal(_:envelope:at:root:)``).
            if let root = keys?.policy.root, let refusal = identityRefusal(identity, envelope: envelope, at: url, root: root) {
                passedOver.append(QuarantinedFile(url: url, reason: Self.passedOverReason(name: name, problem: refusal)))
                continue
            }
            guard identity.format <= Self.formatVersion else {
                throw SyncError(.unknownFormat(found: identity.format, supported: Self.formatVersion), path: url.path)
            }
            result.append(identity)
        }
        if result.isEmpty, let damaged { throw damaged }
        return (result, passedOver)
    }

    /// Why an identity file was passed over, and the way out.
    static func passedOverReason(name: String, problem: String) -> String {
        let upgrade = name.hasPrefix("format-")
            ? "; remove it, then run `multidoc container upgrade` to write the container's format again"
            : "; remove it (`multidoc container verify` checks the rest)"
        return "not a container identity (\(problem)): passed over, it has no effect" + upgrade
    }

    /// Seeds the container's identity if it has none. Returns the identity in force.
    /// `replacing` names the identities it replaces (a reset, or adopting a container whose old
    /// identity this device remembers).
    func seedIdentity(device: DeviceID, now: Date, newID: UUID = UUID(), replacing: [UUID] = []) throws(SyncError) -> ContainerIdentity {
        if let existing = try identity() { return existing }
        let identity = ContainerIdentity(containerID: newID, seededBy: device, seededAt: now, replaces: replacing.isEmpty ? nil : replacing)
        try writeJSON(identity, to: identityDirectory.appendingPathComponent("\(device).json", isDirectory: false))
        return try self.identity() ?? identity
    }

    // MARK: Reading

    /// Names in a folder, without ignored names, sorted; a folder that does not exist has none.
    /// - Throws: ``SyncError/Kind/containerUnavailable`` naming the folder when it is there but
    ///   cannot be listed (no permission, a file where the folder belongs, a symbolic link on
    ///   its path): for readers that must not take such a folder for an empty one.
    func names(in url: URL) throws(SyncError) -> [String] {
        if let problem = symlinkProblem(url) { throw SyncError(.containerUnavailable, path: url.path, detail: problem) }
        do {
            return try DirectoryHandle.names(at: url.path).filter { !ContainerFiles.isIgnored($0) }.sorted()
        } catch {
            throw SyncError(.containerUnavailable, path: url.path, detail: error.detail ?? "cannot list it: \(error.description)")
        }
    }

    /// Names in a folder, without ignored names, sorted. Missing folder, or a folder reached
    /// through a symbolic link: empty. For readers that may miss a folder they cannot list
    /// (``names(in:)`` throws instead).
    func listNames(_ url: URL) -> [String] {
        guard symlinkProblem(url) == nil else { return [] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [])
            .filter { !ContainerFiles.isIgnored($0) }
            .sorted()
    }

    // MARK: Confinement and limits

    /// The largest identity, registry, info or tombstone file a reader accepts.
    public static let maximumRecordSize = 1024 * 1024
    /// The largest registry file a reader accepts, and the largest a device writes: about 100
    /// bytes a document, so a device with more than 10,000 documents outgrew the record limit
    /// and every peer ignored its registration (its logs were never pruned).
    public static let maximumRegistrySize = 64 * 1024 * 1024
    /// The largest baseline a reader accepts.
    public static let maximumBaselineSize = 128 * 1024 * 1024

    /// Why `url` must not be used, if one of its components below the container's root is a
    /// symbolic link (or the path is not inside the container at all). Nothing is ever read,
    /// written or removed through a link: a link to `/etc/passwd` or to another folder would
    /// let a hostile container reach outside itself.
    public func symlinkProblem(_ url: URL) -> String? {
        let base = root.standardizedFileURL.path
        let path = url.standardizedFileURL.path
        guard path == base || path.hasPrefix(base.hasSuffix("/") ? base : base + "/") else {
            return "\(path) is outside the container"
        }
        var current = base
        for component in path.dropFirst(base.count).split(separator: "/") {
            current += (current.hasSuffix("/") ? "" : "/") + component
            var info = stat()
            guard lstat(current, &info) == 0 else { return nil }  // the rest does not exist yet
            if (info.st_mode & S_IFMT) == S_IFLNK {
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: current)) ?? "?"
                return "\(current) is a symbolic link (to \(target)); links in the container are never followed"
            }
        }
        return nil
    }

    /// Reads a file of the container: no symbolic links on the way, at most `limit` bytes.
    func readFile(_ url: URL, limit: Int) throws(FileIOError) -> Data {
        if let problem = symlinkProblem(url) {
            throw FileIOError(path: url.path, operation: "read", errno: ELOOP, detail: problem)
        }
        return try AtomicFile.read(url, limit: limit, followSymlinks: false)
    }

    /// Whether `url` is a folder itself (not a link to one).
    static func isFolder(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Every document folder's UUID.
    func documentIDs() -> [DocumentID] {
        // Read on every discovery, 10,000 names and more: `readdir` and a UUID parse each (a
        // name that parses is never an ignored one), sorted as UUIDs (the order of their text).
        guard symlinkProblem(documentsDirectory) == nil, let folder = DirectoryHandle(path: documentsDirectory.path),
              let entries = folder.entries(".") else { return [] }
        return entries.compactMap { DocumentID($0.name) }.sorted()
    }

    /// Tombstoned documents, with every valid tombstone found for each.
    func tombstones() -> [DocumentID: [DocumentTombstone]] { scanTombstones().tombstones }

    /// Every tombstone file, read: the valid ones per document, and the files that are not
    /// tombstones (damaged, the wrong shape, naming another document, a newer format, links,
    /// from a device that never registered). Each is judged by ``tombstone(named:registered:)``.
    ///
    /// A damaged tombstone is reported and not applied: deleting is final, so it must not rest
    /// on a file that may be a partial delivery or garbage. It is read again on the next pass.
    func scanTombstones() -> (tombstones: [DocumentID: [DocumentTombstone]], problems: [QuarantinedFile]) {
        var result: [DocumentID: [DocumentTombstone]] = [:]
        var problems: [QuarantinedFile] = []
        let registered = registeredDevices()
        for name in listNames(tombstonesDirectory) {
            switch tombstone(named: name, registered: registered) {
            case .valid(let tombstone): result[tombstone.document, default: []].append(tombstone)
            case .refused(let problem): problems.append(problem)
            }
        }
        return (result, problems)
    }

    /// The one rule for whether a file in `tombstones/` deletes a document: its name is
    /// `<document>.<device>.json`, it reads as a tombstone (signed by an admitted device, in a
    /// signed container), of a format this build knows, naming the document and device its
    /// name says, written by a registered device. Applying tombstones, discovery and `container
    /// verify` all ask it, so a file it refuses has no effect anywhere: it neither deletes a
    /// document nor hides one from a device that joins later.
    ///
    /// `registered`: the devices with a registry file, when the caller listed them (nil: looked up).
    func tombstone(named name: String, registered: Set<DeviceID>? = nil) -> TombstoneVerdict {
        let url = tombstonesDirectory.appendingPathComponent(name, isDirectory: false)
        func refused(_ reason: String, writer: DeviceID? = nil) -> TombstoneVerdict {
            // Its writer, or a device that applied it, writes it again once it is gone.
            .refused(QuarantinedFile(url: url, reason: reason, wayOut: writer.map { .replaceDamaged(writer: $0) }))
        }
        let parts = name.hasSuffix(".json") ? name.dropLast(5).split(separator: ".", omittingEmptySubsequences: false) : []
        guard parts.count == 2, let id = DocumentID(String(parts[0])), let device = DeviceID(String(parts[1])) else {
            return refused("not a tombstone name (<document>.<device>.json)")
        }
        let tombstone: DocumentTombstone
        do {
            tombstone = try readJSON(url, limit: Self.maximumRecordSize)
        } catch {
            return refused(Self.isFolder(url)
                ? "a folder where a tombstone belongs; not applied: remove it or move it out of the container"
                : "not a tombstone, not applied (\(Self.summarize(error)))", writer: device)
        }
        guard tombstone.format <= Self.formatVersion else {
            return refused("format version \(tombstone.format) is newer than this build's \(Self.formatVersion)")
        }
        guard tombstone.document == id, tombstone.deletedBy == device else {
            return refused("names document \(tombstone.document) by \(tombstone.deletedBy), not what its name says", writer: device)
        }
        guard registered?.contains(device) ?? isRegistered(device) else {
            return refused("written by device \(device), which never registered in this container; not applied")
        }
        return .valid(tombstone)
    }

    /// The tombstones of one document (cheaper than ``tombstones()`` for a targeted check).
    func tombstones(of id: DocumentID) -> [String] {
        listNames(tombstonesDirectory).filter { $0.hasPrefix("\(id).") && $0.hasSuffix(".json") }
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

    /// Stamps of a document's folders (`logs/`, `baselines/`, each `logs/<device>/` in the
    /// order of `devices`). Files in the container are written once and renamed into place, so
    /// a new, removed or renamed file changes one of them: equal stamps mean nothing arrived.
    public struct ChangeStamps: Sendable, Equatable {
        public var stamps: [FileStamp]
        /// The device folders stamped after the first two.
        public var devices: [DeviceID]

        public init(stamps: [FileStamp], devices: [DeviceID]) {
            self.stamps = stamps
            self.devices = devices
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

    /// Baselines of a document with their file URLs, largest coverage first.
    func baselines(_ id: DocumentID) -> [(url: URL, baseline: Baseline)] {
        listNames(baselinesDirectory(id))
            .filter { $0.hasSuffix(".json") }
            .compactMap { name -> (URL, Baseline)? in
                let url = baselinesDirectory(id).appendingPathComponent(name, isDirectory: false)
                guard let baseline = try? readBaseline(url), baseline.document == id,
                      baseline.format <= Self.formatVersion, baseline.problem() == nil else { return nil }
                return (url, baseline)
            }
            .sorted { $0.1.coverage > $1.1.coverage }
    }

    /// A baseline file of either form, checked against where it lies: JSON (format 1, or a
    /// signed container's envelope around JSON) or a format 2 envelope around the binary payload
    /// (``Baseline/envelope(container:)``).
    func readBaseline(_ url: URL) throws -> Baseline {
        let data = try readFile(url, limit: Self.maximumBaselineSize)
        guard ContainerEnvelope.isEnvelope(data) else { return try Self.decodeJSON(Baseline.self, from: try openRecord(data, at: url)) }
        guard let place = filePlace(of: url), place.kind == .baseline else { throw LogDecodingError(reason: "not a baseline's place in the container") }
        let envelope = try open(
            Array(data), kind: .baseline, document: place.document, writer: place.writer, place: place.place, maximumPayload: data.count)
        if Baseline.isBinary(envelope.payload) { return try Baseline.decoded(envelope) }
        return try Self.decodeJSON(Baseline.self, from: Data(envelope.payload))
    }

    /// The names of `device`'s baselines of a document (none read).
    func baselineNames(_ id: DocumentID, by device: DeviceID) -> [String] {
        let prefix = device.description + "-"
        return listNames(baselinesDirectory(id)).filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }
    }

    /// Every registered device.
    /// An entry whose file name and content disagree, or that claims sequences no device can
    /// reach, is not a registration (`container verify` names it).
    public func deviceRecords() -> [DeviceRecord] {
        listNames(devicesDirectory).filter { $0.hasSuffix(".json") }.compactMap(deviceRecord(named:))
    }

    /// One device's registry entry, if it is there and is one (see ``deviceRecords()``).
    func deviceRecord(_ device: DeviceID) -> DeviceRecord? { deviceRecord(named: "\(device).json") }

    private func deviceRecord(named name: String) -> DeviceRecord? {
        guard let record: DeviceRecord = try? readJSON(devicesDirectory.appendingPathComponent(name, isDirectory: false), limit: Self.maximumRegistrySize),
              name == "\(record.device).json",
              record.applied.values.allSatisfy({ ContainerBounds.problem(applied: $0) == nil }) else { return nil }
        return record
    }

    /// A stamp of what peers wrote to the registry: every registry file but `own`'s, by name,
    /// inode, time and size, folded into one value (`modified` is the newest file's time, -1
    /// for none). This device rewriting its own file does not change it, so a pass after a
    /// command that registered does not read every peer's record again; a peer's file replaced
    /// within one tick of the file system's clock does (the rename brings a new inode).
    public func peerRegistryStamp(excluding own: DeviceID) -> FileStamp {
        guard symlinkProblem(devicesDirectory) == nil, let folder = DirectoryHandle(path: devicesDirectory.path) else {
            return FileStamp(modified: -1, size: 0)
        }
        let ownName = own.description + ".json"
        let names = (folder.entries(".") ?? []).map(\.name).filter { $0.hasSuffix(".json") && $0 != ownName }.sorted()
        var hash = FNV1a()
        var newest: Int64 = -1
        for name in names {
            for byte in name.utf8 { hash.mix(UInt64(byte)) }
            guard let identity = FileIdentity(in: folder, name) else { continue }
            hash.mix(identity.inode)
            hash.mix(UInt64(bitPattern: identity.modified))
            hash.mix(UInt64(bitPattern: identity.size))
            newest = max(newest, identity.modified)
        }
        return FileStamp(modified: newest, size: Int64(bitPattern: hash.value))
    }

    /// The devices with a registry file (read or not): a tombstone from any other device is
    /// not applied.
    func registeredDevices() -> Set<DeviceID> {
        Set(listNames(devicesDirectory).compactMap { name in
            name.hasSuffix(".json") ? DeviceID(String(name.dropLast(5))) : nil
        })
    }

    /// Whether this device's registry file is there.
    public func isRegistered(_ device: DeviceID) -> Bool {
        FileManager.default.fileExists(atPath: deviceRecordURL(device).path)
    }

    /// Whether a file (or anything) is at the path of a log (one `lstat`).
    public func hasLog(_ id: DocumentID, device: DeviceID, sequence: UInt64) -> Bool {
        var info = stat()
        return lstat(logURL(id, device: device, sequence: sequence).path, &info) == 0
    }

    /// Reads and validates one log file.
    ///
    /// The log's stamp is taken as every reader takes it (``ContainerBounds/clamped(_:)``),
    /// whatever this device's clock says.
    /// `refusing`: container identities a format 2 log must not name (replaced by a reset).
    public func readLog(
        _ id: DocumentID, device: DeviceID, sequence: UInt64, refusing: Set<UUID> = []
    ) throws(LogDecodingError) -> TransactionLog {
        let url = logURL(id, device: device, sequence: sequence)
        let data: Data
        do {
            data = try readFile(url, limit: TransactionLog.maximumFileSize)
        } catch {
            throw LogDecodingError(reason: error.detail ?? error.description)
        }
        return try decodeLog(data, id, device: device, sequence: sequence, refusing: refusing)
    }

    /// Validates and decodes the bytes of one log (``readLog(_:device:sequence:refusing:)``
    /// without the file: a log still in a device's outbox).
    public func decodeLog(
        _ data: Data, _ id: DocumentID, device: DeviceID, sequence: UInt64, refusing: Set<UUID> = []
    ) throws(LogDecodingError) -> TransactionLog {
        var log: TransactionLog
        if ContainerEnvelope.isEnvelope(data) {
            let envelope = try open(
                Array(data), kind: .log, document: id.uuid, writer: device, place: sequence, maximumPayload: TransactionLog.maximumFileSize,
                refusing: refusing)
            log = try TransactionLog.decoded(envelope, document: id, device: device, sequence: sequence)
        } else {
            if let keys, keys.policy.isSigned { throw LogDecodingError(reason: "refused: unsigned, in a signed container (claimed writer \(device))") }
            log = try TransactionLog.decode(data, document: id, device: device, sequence: sequence, refusing: refusing)
        }
        log.stamp = ContainerBounds.clamped(log.stamp)
        return log
    }

    // MARK: Writing

    /// Writes a JSON record atomically (temporary dot-name, fsync, rename, fsync directory).
    func writeJSON(_ value: some Encodable, to url: URL, pretty: Bool = true, limit: Int = maximumRecordSize) throws(SyncError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw SyncError(.writeFailed, path: url.path, detail: "\(error)")
        }
        try writeRecord(data, to: url, limit: limit)
    }

    /// Writes a record's JSON (signed and sealed first in a signed container), atomically.
    func writeRecord(_ json: Data, to url: URL, limit: Int) throws(SyncError) {
        var data = json
        if let sealed = try sealRecord(data, at: url) { data = Data(sealed) }
        try writeRaw(data, to: url, limit: limit)
    }

    /// Writes a format 2 file: `envelope` sealed as the container wants it (``seal(_:)``), at
    /// most `limit` bytes.
    func writeEnvelope(_ envelope: ContainerEnvelope, to url: URL, limit: Int) throws(SyncError) {
        try writeRaw(Data(try seal(envelope)), to: url, limit: limit)
    }

    /// ``writeRaw(_:to:)`` of at most `limit` bytes: a device never writes a file its peers
    /// would refuse.
    private func writeRaw(_ data: Data, to url: URL, limit: Int) throws(SyncError) {
        guard data.count <= limit else {
            throw SyncError(.writeFailed, path: url.path, detail: "\(data.count) bytes, more than the \(limit) bytes a reader accepts")
        }
        try writeRaw(data, to: url)
    }

    /// Writes finished bytes atomically (temporary dot-name, fsync, rename, fsync directory),
    /// never through a link.
    func writeRaw(_ data: Data, to url: URL) throws(SyncError) {
        if let problem = symlinkProblem(url) { throw SyncError(.writeFailed, path: url.path, detail: problem) }
        do {
            try AtomicFile.makeDirectory(url.deletingLastPathComponent(), below: root)
            // Into the empty file a document folder made ahead brings, when it is there.
            try AtomicFile.write(data, to: url, durability: .durable, usingSpare: true)
        } catch {
            throw SyncError(.writeFailed, path: url.path, detail: error.description)
        }
        didChange(url)
    }

    /// Writes a log file unless it is already there (a retry after a crash writes the same bytes).
    public func writeLog(_ data: Data, document: DocumentID, device: DeviceID, sequence: UInt64) throws(SyncError) -> URL {
        let url = logURL(document, device: device, sequence: sequence)
        if let problem = symlinkProblem(url) { throw SyncError(.writeFailed, path: url.path, detail: problem) }
        do {
            try AtomicFile.makeDirectory(url.deletingLastPathComponent(), below: root)
            try AtomicFile.writeOnce(data, to: url, usingSpare: true)
        } catch {
            throw SyncError(.writeFailed, path: url.path, detail: error.description)
        }
        didChange(url)
        return url
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
    static func summarize(_ error: any Error) -> String {
        switch error {
        case let error as FileIOError: return error.detail ?? error.description
        case DecodingError.dataCorrupted(let context): return context.debugDescription
        case DecodingError.keyNotFound(let key, _): return "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context): return "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.valueNotFound(_, let context): return "missing value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: return "\(error)"
        }
    }

    /// Removes a file or folder; a missing one is fine. Never through a symbolic link: a
    /// link itself is removed, what it points to is not touched.
    public func remove(_ url: URL) {
        guard symlinkProblem(url.deletingLastPathComponent()) == nil, FileManager.default.fileExists(atPath: url.path) else { return }
        try? FileManager.default.removeItem(at: url)
        didChange(url)
    }
}

/// What ``Container/tombstone(named:registered:)`` decided about one file in `tombstones/`.
enum TombstoneVerdict {
    /// It deletes its document.
    case valid(DocumentTombstone)
    /// It has no effect, and why (reported by the pass that applies tombstones and by verify).
    case refused(QuarantinedFile)

    var tombstone: DocumentTombstone? {
        if case .valid(let tombstone) = self { return tombstone }
        return nil
    }
}
