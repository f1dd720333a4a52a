import Model

/// What gets a stuck device going again: the command to run, and where. Carried by the error or
/// problem that names the stuck state (``SyncError/wayOut``), so every front end prints the same
/// way out without reading the problem's words.
public enum WayOut: Sendable, Hashable, CustomStringConvertible {
    /// Two copies of this device's root (a copy, a restored backup) saved under one device UUID:
    /// this root becomes a device of its own.
    case newIdentity
    /// A log is missing for good: a device that applied it writes a baseline that covers it.
    case repair(writer: DeviceID)
    /// A file of `writer` is damaged and stays so (not a delivery still in progress): it is
    /// removed, and its writer supplies what it held again (a baseline for a log, the file again
    /// for a tombstone).
    case replaceDamaged(writer: DeviceID)
    /// A log another device made is not in the container yet: that device ships it.
    case syncOn(DeviceID)
    /// The container's identity changed and this device stays local until it adopts the new one.
    case adopt
    /// The container has no identity left (none, or only damaged files): a device that synced
    /// with it writes the one it remembers again, if it is the folder meant.
    case restoreIdentity
    /// The container is signed and this device is not admitted: an admitted device admits it.
    case admit(fingerprint: String)
    /// The container is encrypted and this device does not hold its key.
    case unlock
    /// The container refuses this device's writes (permissions, space, a file in a folder's place).
    case makeWritable
    /// A clock is wrong: this device's (nil), another device's (its name), or one of the two.
    case setClock(device: String?, orThisOne: Bool)

    /// The command that gets out, when there is one to type.
    public var command: String? {
        switch self {
        case .newIdentity: "multidoc device new-identity --yes"
        case .repair, .replaceDamaged: "multidoc container repair"
        case .syncOn: "multidoc sync"
        case .adopt: "multidoc container adopt"
        case .restoreIdentity: "multidoc container repair"
        case .admit(let fingerprint): "multidoc device admit \(fingerprint)"
        case .unlock: "multidoc container unlock"
        case .makeWritable: "multidoc sync"
        case .setClock: nil
        }
    }

    public var description: String {
        switch self {
        case .newIdentity:
            "run `multidoc device new-identity --yes` on this device (its root was copied, or restored from a backup, and both copies saved as one device); then `multidoc sync`"
        case .repair(let writer):
            "if the log was lost, run `multidoc container repair` on device \(writer) (or on a device that has the log)"
        case .replaceDamaged(let writer):
            "if it stays so, remove it from the container and run `multidoc container repair` on device \(writer), which wrote it and then supplies what it held"
        case .syncOn(let device):
            "run `multidoc sync` on device \(device); if the log was lost, check `multidoc container verify`"
        case .adopt:
            "saves wait here; run `multidoc container adopt` to sync with this container, or point --container at the one you meant"
        case .restoreIdentity:
            "saves wait here; if this is the container you meant and it lost its identity file, run `multidoc container repair`, which writes the identity this device remembers again; otherwise point --container at the one you meant (a replica still filling needs no repair: wait for it)"
        case .admit(let fingerprint):
            "an admitted device runs `multidoc device admit \(fingerprint)`"
        case .unlock:
            "run `multidoc container unlock` with the passphrase"
        case .makeWritable:
            "make the container folder writable by this user (permissions, free space, a file where a folder belongs), then run `multidoc sync`"
        case .setClock(nil, _):
            "set this device's clock right (`timedatectl set-ntp true`); nothing waits for it meanwhile"
        case .setClock(let device?, let orThisOne):
            "set device \(device)'s clock right" + (orThisOne ? " (or this device's, whichever is wrong)" : "") + "; nothing waits for it meanwhile"
        }
    }
}
