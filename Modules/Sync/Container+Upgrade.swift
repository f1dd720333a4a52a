import Foundation
import Model

extension Container {
    /// The name of the identity file that moves a container to `format`: written by `device`
    /// beside the identity it upgrades (write-once files: the seeding device's own file stays).
    static func upgradeFileName(format: Int, device: DeviceID) -> String { "format-\(format).\(device).json" }

    /// Devices whose registry entry does not say they read `format` (their build is older, or
    /// they have not registered since they were updated), apart from `except`.
    public func devicesNotReading(format: Int, except: DeviceID) -> [DeviceRecord] {
        deviceRecords().filter { $0.device != except && ($0.reads ?? 1) < format }.sorted { $0.name < $1.name }
    }

    /// Moves the container to format 2 (Docs/CONTAINER-FORMAT.md, "Moving to format 2"): a
    /// second identity file of the identity in force says format 2. From then on every device
    /// writes format 2 logs (text merges as operations), and builds that read only format 1
    /// refuse the container, as they refuse any newer format. Returns the identity in force and
    /// whether the container was already of that format.
    /// - Throws: ``SyncError`` when the container is unavailable, not seeded, or not writable.
    public func upgrade(device: DeviceID, now: Date) throws(SyncError) -> (identity: ContainerIdentity, already: Bool) {
        let identities = try identities()
        guard let current = Self.elect(identities) else {
            throw SyncError(.malformedFile, path: identityDirectory.path, detail: "the container has no identity yet; run `multidoc sync` on a device first")
        }
        if Self.format(of: current.containerID, in: identities) >= Self.formatVersion { return (current, true) }
        let upgraded = ContainerIdentity(
            format: Self.formatVersion, containerID: current.containerID, seededBy: device, seededAt: now, replaces: current.replaces)
        try writeJSON(upgraded, to: identityDirectory.appendingPathComponent(Self.upgradeFileName(format: Self.formatVersion, device: device), isDirectory: false))
        return (upgraded, false)
    }
}
