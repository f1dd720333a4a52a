import FileIO
import Foundation
import Model

// The container's protocol, as the Engine sees it: what a changed path is, which identity is in
// force and whether this device may sync with it, what is deleted, what is new, and a reset.
// Each returns a typed result; the Engine decides what to do with it (policy) and keeps the
// device's own records. Nothing outside Sync parses a container path or elects an identity.

/// What a file that changed in the container is, as far as a sync loop cares.
public enum ContainerChange: Sendable, Hashable {
    /// One device's log, as its path names it (`documents/<uuid>/logs/<device>/<16 digits>.log`):
    /// a reader may import just that log (``Replicator/importArrived(_:logs:into:)``).
    case log(DocumentID, writer: DeviceID, sequence: UInt64)
    /// Any other file in one document's folder: an info file, a baseline, a copy, with the
    /// device that wrote it when the name says (`writer` is nil for anything else).
    case document(DocumentID, writer: DeviceID?)
    /// A writer's temporary file (``ContainerFiles/isTemporary(_:)``): it holds nothing to read,
    /// and the file it becomes is reported when it is renamed into place.
    case temporary
    /// A folder of the layout itself (`documents/`, `tombstones/`, …, a document's folder, its
    /// `logs/` or `baselines/`): created or removed. Nothing to import by itself: the watcher
    /// reports the files a new folder holds, and a document's removal comes with a tombstone.
    case folder
    /// A device's registry file: it matters only for pruning, which full passes do.
    case registry
    /// Anything else (identity, tombstones, the folders themselves, an unknown name): every
    /// document may be concerned. `writer` is the device whose name the file carries
    /// (`identity/<device>.json`, `tombstones/<doc>.<device>.json`), if any.
    case containerWide(writer: DeviceID?)
}

/// The outcome of checking the container's identity against the one a device remembers.
public enum IdentityCheck: Sendable {
    /// The device syncs with `current`. `remember` is set when the device must remember a
    /// new identity: it seeded the container, joined it, or lost a seeding race.
    /// `format`: the container's format in force (the highest of its identity's files).
    case agreed(current: UUID, remember: UUID?, format: Int)
    /// The container's identity is not the one the device synced with (a reset, or another
    /// container in its place): the device's policy decides whether to adopt it.
    case changed(remembered: UUID, found: UUID?, error: SyncError)
}

/// Tombstones found in the container, and the files that looked like tombstones but are not.
public struct TombstoneScan: Sendable {
    public var deleted: Set<DocumentID> = []
    /// Who deleted each document (the first tombstone's device).
    public var deletedBy: [DocumentID: DeviceID] = [:]
    /// Every device with a valid tombstone of each deleted document.
    public var deleters: [DocumentID: Set<DeviceID>] = [:]
    public var problems: [QuarantinedFile] = []
}

/// Documents in the container that a device does not have yet, and what kept others back.
public struct Discovery: Sendable {
    /// New documents, each with its creator's info file.
    public var found: [DocumentInfo] = []
    /// Folders that cannot be read as a document (a link where a folder belongs).
    public var problems: [QuarantinedFile] = []
    /// Folders whose info file has not arrived (or is not readable yet): looked at again.
    public var waiting: [DocumentID] = []
    /// Folders of deleted documents that came back, removed.
    public var stragglersRemoved: [DocumentID] = []
}

extension Container {
    // MARK: Changes

    /// What the file at `url` is (see ``ContainerChange``).
    public func classify(_ url: URL) -> ContainerChange {
        guard let relative = relativePath(of: url) else { return .containerWide(writer: nil) }
        let parts = relative.split(separator: "/")
        // A temporary name anywhere on the way: readers skip it and all below it (a device's
        // document folder made ahead is one).
        if parts.contains(where: { ContainerFiles.isTemporary(String($0)) }) { return .temporary }
        if parts.count >= 2, parts[0] == "documents", let id = DocumentID(String(parts[1])) {
            if parts.count == 2 || (parts.count == 3 && (parts[2] == "logs" || parts[2] == "baselines")) { return .folder }
            // Only the lower-case spelling of the device's folder is where its logs go.
            if parts.count == 5, parts[2] == "logs", let device = DeviceID(String(parts[3])), device.description == parts[3],
               let sequence = Self.sequence(fromLogName: String(parts[4])) {
                return .log(id, writer: device, sequence: sequence)
            }
            return .document(id, writer: Self.writer(of: parts.dropFirst(2)))
        }
        if parts.count == 1, ["documents", "devices", "tombstones", "identity"].contains(parts[0]) { return .folder }
        if parts.first == "devices" { return .registry }
        if parts.count == 2, parts[0] == "identity", parts[1].hasSuffix(".json") {
            return .containerWide(writer: DeviceID(String(parts[1].dropLast(5))))
        }
        if parts.count == 2, parts[0] == "tombstones", parts[1].hasSuffix(".json") {
            let pieces = parts[1].dropLast(5).split(separator: ".")
            return .containerWide(writer: pieces.count == 2 ? DeviceID(String(pieces[1])) : nil)
        }
        return .containerWide(writer: nil)
    }

    /// The device whose name a file below `documents/<uuid>/` carries, if any.
    static func writer(of rest: ArraySlice<Substring>) -> DeviceID? {
        guard let first = rest.first else { return nil }
        switch first {
        case "logs":
            return rest.dropFirst().first.flatMap { DeviceID(String($0)) }
        case "baselines":
            guard rest.count == 2, let name = rest.last, name.count > 36 else { return nil }
            return DeviceID(String(name.prefix(36)))
        default:
            guard rest.count == 1, first.hasPrefix("info-"), first.hasSuffix(".json") else { return nil }
            return DeviceID(String(first.dropFirst(5).dropLast(5)))
        }
    }

    // MARK: Identity

    /// Checks the container's identity for a device that remembers `remembered` (nil: it never
    /// synced). Seeds the container when it has no identity and the device may seed it
    /// (`canSeed`: it has no cloud documents of another container); follows the winner of a
    /// seeding race. `inForce` is every identity present that no reset replaced: documents
    /// published under any other one are left-overs of a reset (``discover(known:only:inForce:deleted:)``).
    /// `passedOver`: the files of the identity folder that are not identities (damaged, or
    /// unsigned in a signed container): they have no effect, and the caller reports them.
    /// - Throws: ``SyncError`` when the container cannot be read, has a newer format, or cannot
    ///   be seeded.
    public func checkIdentity(
        remembered: UUID?, canSeed: () -> Bool, device: DeviceID, now: Date, newID: UUID
    ) throws(SyncError) -> (check: IdentityCheck, inForce: Set<UUID>, replaced: Set<UUID>, passedOver: [QuarantinedFile]) {
        let scan = try scanIdentities()
        let (check, inForce, replaced) = try checkIdentity(
            scan.identities, remembered: remembered, canSeed: canSeed, device: device, now: now, newID: newID)
        return (check, inForce, replaced, scan.passedOver)
    }

    private func checkIdentity(
        _ identities: [ContainerIdentity], remembered: UUID?, canSeed: () -> Bool, device: DeviceID, now: Date, newID: UUID
    ) throws(SyncError) -> (check: IdentityCheck, inForce: Set<UUID>, replaced: Set<UUID>) {
        let current = Self.elect(identities)
        let replaced = Self.replacedIDs(identities)
        let inForce = Set(identities.map(\.containerID)).subtracting(replaced)
        guard let remembered else {
            let seeded: ContainerIdentity
            if let current { seeded = current } else { seeded = try seedIdentity(device: device, now: now, newID: newID) }
            return (.agreed(current: seeded.containerID, remember: seeded.containerID, format: Self.format(of: seeded.containerID, in: identities + [seeded])),
                    inForce.union([seeded.containerID]), replaced)
        }
        if current?.containerID == remembered {
            return (.agreed(current: remembered, remember: nil, format: Self.format(of: remembered, in: identities)), inForce, replaced)
        }
        if !replaced.contains(remembered), identities.contains(where: { $0.containerID == remembered }), let current {
            // Two devices seeded an empty container at once; the smaller UUID wins for all.
            return (.agreed(current: current.containerID, remember: current.containerID, format: Self.format(of: current.containerID, in: identities)), inForce, replaced)
        }
        // A device that has seen the container signed seeds no unsigned one in its place: a new
        // identity of a signed container is the root's to sign (``reset(device:now:newID:)``).
        if current == nil, keys?.policy.root == nil, canSeed() {
            let seeded = try seedIdentity(device: device, now: now, newID: newID)
            return (.agreed(current: seeded.containerID, remember: seeded.containerID, format: seeded.format), inForce.union([seeded.containerID]), replaced)
        }
        let found = current?.containerID
        let error = SyncError(
            .identityChanged(remembered: remembered.uuidString.lowercased(), found: found?.uuidString.lowercased()), path: root.path)
        return (.changed(remembered: remembered, found: found, error: error), inForce, replaced)
    }

    /// The format of the container `id`: the highest format among its identity files (a
    /// container moved to format 2 has a second identity file of the same UUID saying so).
    static func format(of id: UUID, in identities: [ContainerIdentity]) -> Int {
        identities.filter { $0.containerID == id }.map(\.format).max() ?? 1
    }

    /// Adopts the container's identity after it changed: the one in force, or a new one seeded
    /// as replacing `remembered` when it has none. Returns the adopted identity and the
    /// documents present that were shared under it (folders of the old container may still be
    /// in this replica; they are not).
    public func adopt(
        replacing remembered: UUID, device: DeviceID, now: Date, newID: UUID
    ) throws(SyncError) -> (identity: ContainerIdentity, shared: Set<DocumentID>) {
        let identities = try identities()
        var current = Self.elect(identities)
        // The format in force: an upgraded container has a second identity file saying so.
        if let id = current?.containerID { current?.format = Self.format(of: id, in: identities) }
        let adoptedID = current?.containerID ?? newID
        // Listed so that a folder this device cannot read stops the adoption: taken for an
        // empty one, it would turn every cloud document into a local one.
        let present = try names(in: documentsDirectory).compactMap { DocumentID($0) }
        let shared = Set(present.filter { !isLeftOver($0, inForce: [adoptedID]) })
        let adopted: ContainerIdentity
        if let current {
            adopted = current
        } else {
            if let root = keys?.policy.root { throw Self.unsignedSeedRefused(remembered: remembered, root: root, at: self.root) }
            adopted = try seedIdentity(device: device, now: now, newID: adoptedID, replacing: [remembered])
        }
        return (adopted, shared)
    }

    /// Why a device that has seen container `root.container` signed does not seed a new,
    /// unsigned identity in its place.
    static func unsignedSeedRefused(remembered: UUID, root: SigningRoot, at url: URL) -> SyncError {
        SyncError(
            .identityChanged(remembered: remembered.uuidString.lowercased(), found: nil), path: url.path,
            detail: "this device has seen container \(root.container.uuidString.lowercased()) signed (root fingerprint \(KeyFingerprint(publicKey: root.key))), and a new identity in its place must be signed by that root: it does not seed an unsigned one; nothing was changed. If the container was emptied on purpose, its root device runs `multidoc container reset --yes`; if it is not the folder you meant, point --container at the right one")
    }

    /// Empties the container and seeds a new identity naming the old ones as replaced, so that
    /// devices whose replica still holds an old identity file know it was reset.
    ///
    /// A signed container is reset by its root only: the new identity is signed with the root's
    /// key (devices that have seen the container signed take no other), and the new container
    /// is signed by the same key, so they stay signed when they adopt it.
    /// - Throws: ``SyncError`` if the container is unavailable, is signed and this device is
    ///   not its root (nothing is changed then), or the new identity cannot be written.
    @discardableResult
    public func reset(device: DeviceID, now: Date, newID: UUID = UUID()) throws(SyncError) -> ContainerIdentity {
        try checkAvailable()
        let signedRoot = keys?.policy.root
        if let signedRoot, signedRoot.device != device || keys?.device != device {
            throw SyncError(
                .notAdmitted, path: root.path,
                detail: "the container is signed, and only its root (device \(signedRoot.device), fingerprint \(KeyFingerprint(publicKey: signedRoot.key))) resets it; nothing was changed")
        }
        var old = ((try? identities()) ?? []).map(\.containerID)
        if let signedRoot, !old.contains(signedRoot.container) { old.append(signedRoot.container) }
        for url in [identityDirectory, devicesDirectory, documentsDirectory, tombstonesDirectory] {
            guard symlinkProblem(url) == nil else { continue }
            try? FileManager.default.removeItem(at: url)
            didChangeFile(url)
        }
        let seeded = try seedIdentity(device: device, now: now, newID: newID, replacing: old)
        if signedRoot != nil { _ = try sign(container: seeded.containerID, now: now) }
        return seeded
    }

    // MARK: Deletes and discovery

    /// Reads every tombstone and removes the folders of deleted documents that came back (a
    /// straggler log delivered after the delete: the tombstone wins).
    public func applyTombstones() -> TombstoneScan {
        let scan = scanTombstones()
        for id in scan.tombstones.keys where FileManager.default.fileExists(atPath: documentDirectory(id).path) {
            remove(documentDirectory(id))
        }
        return TombstoneScan(
            deleted: Set(scan.tombstones.keys),
            deletedBy: scan.tombstones.compactMapValues { $0.map(\.deletedBy).min() },
            deleters: scan.tombstones.mapValues { Set($0.map(\.deletedBy)) },
            problems: scan.problems)
    }

    /// Whether any tombstone names the document, valid or not: a device moving a local document
    /// to the cloud gives it a new UUID then (a damaged tombstone may be a delete still on its
    /// way). Nothing is deleted or hidden by this; what is, only valid tombstones decide.
    public func isDeleted(_ id: DocumentID) -> Bool { !tombstones(of: id).isEmpty }

    /// Whether one of the document's tombstones is valid (``tombstone(named:registered:)``).
    func hasValidTombstone(_ id: DocumentID) -> Bool {
        tombstones(of: id).contains { tombstone(named: $0).tombstone != nil }
    }

    /// The documents present that a device does not know yet: not in `known`, not deleted, not
    /// left over from a reset container, with an info file. `only` limits the look to some
    /// documents (a targeted pass; their tombstones are checked one by one).
    public func discover(known: Set<DocumentID>, only: Set<DocumentID>?, inForce: Set<UUID>, deleted: Set<DocumentID>) -> Discovery {
        var discovery = Discovery()
        let candidates = (only.map { Array($0).sorted() } ?? documentIDs()).filter { !known.contains($0) }
        guard !candidates.isEmpty else { return discovery }
        // Only a valid tombstone counts (the rule that applying them follows): a file that is
        // refused there hides nothing here, or a device joining later would lack a document every
        // other device keeps. Most candidates have no tombstone at all: the names tell.
        let named = Set(listNames(tombstonesDirectory).compactMap { name in
            name.split(separator: ".", maxSplits: 1).first.flatMap { DocumentID(String($0)) }
        })
        for id in candidates {
            if named.contains(id), hasValidTombstone(id) {
                // A folder of a deleted document came back (a straggler log delivered after the
                // delete): the tombstone wins.
                remove(documentDirectory(id))
                discovery.stragglersRemoved.append(id)
                continue
            }
            // One the device remembers deleted is not found again, even while its tombstone is
            // lost; its folder goes once the tombstone is back (written again by the pass that
            // applies tombstones).
            if deleted.contains(id) { continue }
            let infos = infos(id)
            // A folder of the container before a reset, still in this replica: not a document here.
            if !inForce.isEmpty, !infos.isEmpty, infos.allSatisfy({ info in info.container.map { !inForce.contains($0) } ?? false }) {
                continue
            }
            guard let info = infos.first else {
                discovery.waiting.append(id)
                let logs = documentDirectory(id).appendingPathComponent("logs", isDirectory: false)
                if only == nil, let problem = symlinkProblem(logs) {
                    discovery.problems.append(QuarantinedFile(url: documentDirectory(id), reason: problem))
                }
                continue
            }
            discovery.found.append(info)
        }
        return discovery
    }

    /// Whether this device's info file for `id` is in the container (a document created here
    /// but not yet published is published by the next pass).
    /// A damaged one counts as missing: its device writes it again.
    public func isPublished(_ id: DocumentID, by device: DeviceID) -> Bool {
        guard let info: DocumentInfo = try? readJSON(infoURL(id, device: device), limit: Self.maximumRecordSize) else { return false }
        return info.document == id && info.format <= Self.formatVersion
    }

    /// Conflict copies made by a replication engine: in the container's own folders, and (with
    /// `document`) in one document's folders. Reported, never imported.
    public func conflictCopies(in document: DocumentID?) -> [QuarantinedFile] {
        let urls = document.map(conflictCopies) ?? sharedConflictCopies()
        return urls.map { QuarantinedFile(url: $0, reason: "conflict copy made by the replication engine, not imported") }
    }
}

/// A folder of the container's layout whose stamp tells whether anything in it changed.
public enum ContainerFolder: Sendable {
    case documents, tombstones, devices
}

/// What `multidoc container status` shows of a container.
public struct ContainerSummary: Sendable {
    public var identity: ContainerIdentity?
    public var devices: [DeviceRecord]
    public var documents: Int
    public var tombstones: Int
    public var logs: Int
    /// Who may write (Docs/SECURITY.md): nil for an unsigned container.
    public var trust: TrustState?
    /// Files of the identity folder that are not identities: passed over, with no effect.
    public var passedOver: [QuarantinedFile] = []
}

/// A signed container's trust, as `container status` shows it.
public struct TrustState: Sendable, Encodable {
    public var root: String
    public var encrypted: Bool
    public var admitted: Int
    public var removed: Int
    public var askingToJoin: Int
}

extension Container {
    /// The stamp of one of the layout's folders (a new, removed or renamed file in it changes it).
    public func stamp(_ folder: ContainerFolder) -> FileStamp {
        switch folder {
        case .documents: FileStamp(path: documentsDirectory.path)
        case .tombstones: FileStamp(path: tombstonesDirectory.path)
        case .devices: FileStamp(path: devicesDirectory.path)
        }
    }

    /// The stamp of a device's registry file.
    public func registryStamp(of device: DeviceID) -> FileStamp { FileStamp(path: deviceRecordURL(device).path) }

    /// Identity, devices, and how many documents, tombstones and logs the container holds.
    /// - Throws: ``SyncError`` when the identity cannot be read or has a newer format.
    public func summary() throws(SyncError) -> ContainerSummary {
        let (identities, passedOver) = try scanIdentities()
        var identity = Self.elect(identities)
        // The format in force: an upgraded container has a second identity file saying so.
        if let id = identity?.containerID { identity?.format = Self.format(of: id, in: identities) }
        let documents = documentIDs()
        let logs = documents.reduce(0) { total, id in
            total + logDevices(id).reduce(0) { $0 + logSequences(id, device: $1).count }
        }
        // The trust this device remembers, or else what the container's records say.
        if let id = identity?.containerID, keys?.policy.root == nil { loadTrust(container: id, remembered: nil) }
        let trust = keys.flatMap { keys -> TrustState? in
            let policy = keys.policy
            guard let root = policy.root else { return nil }
            return TrustState(
                root: KeyFingerprint(publicKey: root.key).description, encrypted: policy.encryption != nil, admitted: policy.admitted.count,
                removed: policy.removed.count, askingToJoin: joinRequests().count)
        }
        return ContainerSummary(
            identity: identity, devices: deviceRecords(), documents: documents.count, tombstones: tombstones().count, logs: logs, trust: trust,
            passedOver: passedOver)
    }
}
