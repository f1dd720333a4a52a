#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage
import Synchronization
import Text

/// Ships one device's saves into the container and imports its peers' logs: the log-shipping
/// half of the Sync module, one document at a time. Stateless apart from its configuration,
/// so every process of a device can use its own.
public struct Replicator: Sendable {
    public let container: Container
    public let device: DeviceIdentity
    /// A device writes a baseline when this many logs are not yet covered by one
    /// (Ensembles rebases past 50 events; logs are smaller here, so 100).
    public var baselineThreshold: Int
    /// The most logs applied in one store transaction (bounds memory during a big import).
    public var importBatchSize: Int
    /// What ``commit(document:to:ship:_:)`` writes: the container's format and identity (the
    /// Engine commits through the static `commit` with what the device file remembers).
    public var format: LogFormat = .version1
    /// Container identities a reset replaced: a format 2 log naming one of them is a left-over
    /// of the old container (a replica's stale folder) and is refused.
    public var refusedContainers: Set<UUID> = []
    /// When this machine started (a power loss can only have undone commits made before): only
    /// such logs of this device are taken back by ``flush(_:in:)`` (`resequence`).
    public var bootedAt: @Sendable () -> Date = Replicator.systemBootTime
    /// After shipping a document's logs, make the next one's file ahead (an empty, synced
    /// `.tmp-<sequence>.log.spare` beside them, which the next ``flush(_:in:)`` fills): the
    /// next save makes no file while it waits. For long-lived processes, whose next save comes.
    public var preparesNextLog = false
    let now: @Sendable () -> Date

    /// The weight of the logs one import transaction reads at most (past its last log; see
    /// ``importWeight(of:)``): a backlog of 4,000 saves of 64 edits each was 260,000 text
    /// operations in one transaction (372 MB). Each transaction's commit compares every object
    /// of the store, so a bound in plain changes as low as the text operations need made a
    /// backlog of 100,000 plain changes five transactions and a third slower.
    public static let importBatchWeight = 100_000

    /// What a log weighs against ``importBatchWeight``: a change counts one, a text operation
    /// five (its scalars, ids and the text state it grows stay in memory until the commit).
    static func importWeight(of log: TransactionLog) -> Int {
        log.changes.reduce(0) { $0 + 1 + 5 * ($1.texts?.values.reduce(0) { $0 + $1.count } ?? 0) }
    }

    public init(container: Container, device: DeviceIdentity, baselineThreshold: Int = 100, importBatchSize: Int = 5_000, now: @escaping @Sendable () -> Date = Date.init) {
        self.container = container
        self.device = device
        self.baselineThreshold = baselineThreshold
        self.importBatchSize = importBatchSize
        self.now = now
    }
}
