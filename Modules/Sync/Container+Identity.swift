#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

extension Container {
    // MARK: Availability and identity

    /// Whether the folder is there and usable: a folder (links followed) this user may read and
    /// search. Two system calls: every save and pass asks.
    public var isAvailable: Bool {
        var info = stat()
        return stat(rootPath, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR && access(rootPath, R_OK | X_OK) == 0
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
                damaged = damaged ?? SyncError(
                    .malformedFile, path: url.path,
                    detail: "not a container identity (\(Self.summarize(error))), and no good one is there: on a device that synced with this container, run `multidoc container repair`, which writes the identity it remembers again")
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

    /// Whether this folder was a container that lost its identity, rather than an empty one (a
    /// mistyped path, an unmounted drive): it has an identity folder, or documents.
    public var hasLostItsIdentity: Bool {
        if FileManager.default.fileExists(atPath: identityDirectory.path) { return true }
        return ((try? names(in: documentsDirectory)) ?? []).contains { DocumentID($0) != nil }
    }

    /// Writes `remembered` again as the identity of a container that lost it (no identity file
    /// left, or only damaged ones), for a device that synced with it (`multidoc container
    /// repair`). A pass never does this on its own: an empty folder where the container was is as
    /// likely an unmounted drive, or a replica not filled yet.
    /// - Returns: false when the container has an identity, or never was one (an empty folder):
    ///   nothing to do.
    /// - Throws: ``SyncError`` when the container cannot be read or written, or this device has
    ///   seen it signed (a signed container's identity is its root's to sign: `container reset`).
    public func restoreIdentity(_ remembered: UUID, format: Int, device: DeviceID, now: Date) throws(SyncError) -> Bool {
        let identities: [ContainerIdentity]
        do {
            identities = try scanIdentities().identities
        } catch {
            // Only damaged files (passed over once a good one is there): the folder was read.
            guard case .malformedFile = error.kind else { throw error }
            identities = []
        }
        guard identities.isEmpty, hasLostItsIdentity else { return false }
        if let root = keys?.policy.root { throw Self.unsignedSeedRefused(remembered: remembered, root: root, at: self.root) }
        let identity = ContainerIdentity(format: min(max(format, 1), Self.formatVersion), containerID: remembered, seededBy: device, seededAt: now)
        try writeJSON(identity, to: identityDirectory.appendingPathComponent("\(device).json", isDirectory: false))
        return true
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
}
