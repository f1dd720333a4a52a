import FileIO
import Foundation
import Model
import Storage
import Sync

/// What ``DeviceSetup/takeNewIdentity(stores:newID:now:)`` did.
public struct NewIdentityReport: Sendable {
    public let old: DeviceID
    public let new: DeviceID
    /// Documents whose unshipped saves were committed again under the new identity.
    public let resaved: [String]
    /// Saves committed again, over all documents.
    public let saves: Int
    /// The new device key's fingerprint (nil: a change cut short after its key was made).
    public let newFingerprint: KeyFingerprint?
}

extension DeviceSetup {
    /// `multidoc device new-identity`: this root becomes a new device. For a root that was copied,
    /// or restored from a backup, while the original went on saving: both then wrote logs under
    /// one device UUID, the same sequence numbers with different contents, and the copy's saves
    /// wait behind a slot the other one took.
    ///
    /// The unshipped saves of every cloud document (its outbox, still numbered as the old
    /// device's) are committed again as the new device's, in order, and the old device's count
    /// goes back to what it shipped, so the other copy's logs in those slots are imported like
    /// any peer's. Nothing shipped changes; the old UUID stays the other copy's. Refused while
    /// a daemon runs on this root (it would go on with the old identity).
    public func takeNewIdentity(stores: StoreProvider, newID: UUID = UUID(), now: @escaping @Sendable () -> Date = Date.init) throws -> NewIdentityReport {
        let lock: FileLock
        do {
            lock = try FileLock(url: root.daemonLockURL)
            guard try lock.tryLock(.exclusive) else {
                throw EngineError.busy("multidocd runs on \(root.url.path); stop it first (it would go on saving as the old device)")
            }
        } catch let error as FileIOError {
            throw EngineError.io(root.daemonLockURL.path, error.description)
        }
        defer { lock.unlock() }
        // The root of a signed container is the one device that admits others: its key signs
        // the container's trust, and a new identity would leave the container without it.
        let signsAContainer: Bool
        do {
            signsAContainer = try DeviceKey.load(root.deviceKeyURL).map { LearnedTrust.isRoot($0.publicKey, learnedIn: root.trustURL) } ?? false
        } catch {
            throw EngineError.rootUnusable(root.url.path, error.description)
        }
        if signsAContainer {
            throw EngineError.trust(
                "this device's key signs its container as the root, the device that admits the others: a new identity would leave the container without it. To make a copy of this root a device of its own, set the copy up as a new root ('multidoc init --root NEW --container ...') and admit it from here")
        }
        var device = try root.loadDevice(defaultName: identity.name, model: identity.model, newID: { newID })
        // The change is written down first, so that one cut short (a kill, a power loss) is
        // finished by running the command again, with the same new UUID.
        let change = try root.pendingIdentityChange() ?? IdentityChange(old: device.id, new: DeviceID(newID))
        if device.id == change.new, change.old != change.new {
            // Cut short after the device file was written: only the note of the change is left.
            root.removePendingIdentityChange()
            return NewIdentityReport(old: change.old, new: change.new, resaved: [], saves: 0, newFingerprint: nil)
        }
        guard change.old == device.id, change.new != change.old else {
            throw EngineError.rootUnusable(root.url.path, "\(root.identityChangeURL.path) does not match this device; remove it if no identity change is under way")
        }
        try root.savePendingIdentityChange(change)
        let fresh = DeviceIdentity(id: change.new, name: identity.name, model: identity.model)
        let wall = ContainerBounds.clampedWall(now())
        var resaved: [String] = []
        var saves = 0
        // A document never opened here has no store, and so no waiting saves.
        for record in root.records() where record.location == .cloud && stores.exists(record.store, at: root.storeURL(record)) {
            let store = try stores.open(record.store, at: root.storeURL(record), create: false)
            defer { store.close() }
            let count = try store.write { contents -> Int in
                let outbox = contents.sync.outbox.sorted { $0.key < $1.key }
                guard let first = outbox.first?.key, first > 0 else { return 0 }
                var logs: [TransactionLog] = []
                for (sequence, data) in outbox {
                    // Already the new device's (a change cut short after this store): done.
                    if (try? TransactionLog.decode(data, document: record.id, device: change.new, sequence: sequence)) != nil { return 0 }
                    do {
                        logs.append(try TransactionLog.decode(data, document: record.id, device: change.old, sequence: sequence))
                    } catch {
                        throw EngineError.damagedFile(root.storeURL(record).path, "its waiting save \(sequence) cannot be read (\(error)); nothing was changed")
                    }
                }
                // One transaction: the old device's waiting saves become the new one's.
                contents.sync.outbox = [:]
                contents.sync.applied[change.old] = first - 1
                for log in logs {
                    // Each keeps its stamp (the new device's now): its edits win or lose against
                    // everyone else's as they did, instead of outranking everything seen since.
                    _ = try Replicator.stage(
                        logged: log.changes, document: record.id, device: fresh, format: device.logFormat, wall: wall,
                        committedAt: log.committedAt, ship: true, keeping: log.stamp, in: &contents)
                }
                return logs.count
            }
            if count > 0 {
                resaved.append(record.name.rawValue)
                saves += count
            }
        }
        // A new device gets a key of its own: a copy's key is its original's (removing one would
        // remove both), and a removed device's key stays refused wherever it asks to join.
        let fingerprint: KeyFingerprint
        do {
            fingerprint = try DeviceKey.replace(root.deviceKeyURL).fingerprint
        } catch {
            throw EngineError.rootUnusable(root.url.path, error.description)
        }
        device.id = fresh.id
        try root.saveDevice(device)
        root.removePendingIdentityChange()
        return NewIdentityReport(old: change.old, new: change.new, resaved: resaved, saves: saves, newFingerprint: fingerprint)
    }
}

/// An identity change under way (`<root>/identity-change.json`), until every store is done.
public struct IdentityChange: Codable, Sendable, Equatable {
    public var old: DeviceID
    public var new: DeviceID
}

extension DeviceRoot {
    public var identityChangeURL: URL { url.appendingPathComponent("identity-change.json", isDirectory: false) }

    /// The identity change cut short on this root, if any.
    public func pendingIdentityChange() throws(EngineError) -> IdentityChange? {
        guard FileManager.default.fileExists(atPath: identityChangeURL.path) else { return nil }
        do {
            return try JSONDecoder.multidoc.decode(IdentityChange.self, from: try AtomicFile.read(identityChangeURL, limit: 64 * 1024))
        } catch {
            throw EngineError.damagedFile(identityChangeURL.path, "not an identity change (\(error))")
        }
    }

    func savePendingIdentityChange(_ change: IdentityChange) throws(EngineError) {
        do {
            try AtomicFile.write(try JSONEncoder.multidoc.encode(change), to: identityChangeURL)
        } catch {
            throw EngineError.io(identityChangeURL.path, "\(error)")
        }
    }

    func removePendingIdentityChange() {
        try? FileManager.default.removeItem(at: identityChangeURL)
    }
}
