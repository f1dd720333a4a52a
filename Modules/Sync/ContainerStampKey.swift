/// What a device stamps of the container between passes, to skip reading what did not change
/// (kept in the device's catalog, `@` lines of `<root>/catalog`). The raw value is the key
/// written there.
public enum ContainerStampKey: String, Sendable, Hashable, CaseIterable, Comparable {
    /// `documents/`: a document folder added or removed (discovery reads info files again).
    case documents
    /// `tombstones/`: a deletion written or removed.
    case tombstones
    /// What peers wrote to `devices/` (``Container/peerRegistryStamp(excluding:)``): the
    /// registry, read again for pruning.
    case devices
    /// The same registry stamp, for the peers' clocks read from it (``ClockReading``).
    case clocks

    public static func < (lhs: ContainerStampKey, rhs: ContainerStampKey) -> Bool { lhs.rawValue < rhs.rawValue }
}
