import FileIO
import Foundation
import Logging
import Model
import Storage
import Settings
import Sync

// The container's identity as the library checks it on each pass.
extension DocumentLibrary {
    /// Whether to go on syncing with this container; asks the front end's policy if its
    /// identity changed (seed 002). The container's protocol (election, seeding, adoption) is
    /// Sync's; what to do with local records is decided here.
    func checkIdentity(_ container: Container, report: inout SyncReport) async throws -> Bool {
        var device = try root.loadDevice(defaultName: identity.name, model: identity.model, newID: configuration.newUUID)
        // The trust this device remembers comes first: in a signed container, an unsigned
        // identity file cannot take the election.
        let trust = device.signingRoot.map { root in (container: root.container, loaded: container.loadTrust(container: root.container, remembered: root)) }
        let outcome: (check: IdentityCheck, inForce: Set<UUID>, replaced: Set<UUID>, passedOver: [QuarantinedFile])
        do {
            outcome = try container.checkIdentity(
                // Only a device that never synced through a container seeds one: a folder that
                // is empty where this device's container was is an unmounted drive or a replica
                // not filled yet, whatever this device shares (`container adopt` starts anew).
                remembered: device.containerID, canSeed: { [remembered = device.containerID] in
                    remembered == nil && !self.allRecords().contains { $0.location == .cloud }
                },
                device: identity.id, now: configuration.now(),
                newID: configuration.newUUID())
        } catch {
            if case .unknownFormat = error.kind { throw EngineError.containerFormat(error.description) }
            throw EngineError.containerUnavailable(error.description)
        }
        containersInForce = outcome.inForce
        replicator?.refusedContainers = outcome.replaced
        for file in outcome.passedOver { quarantine(file, in: &report) }
        switch outcome.check {
        case .agreed(let current, let remember, let found):
            // The format a device has seen of a container is its own state and only moves
            // forward: what a file in the container says (a damaged or removed format file)
            // never takes it back to a weaker format, whose saves its stores would not show.
            let seen = device.containerID == current ? device.containerFormat ?? 1 : 1
            let format = max(seen, found)
            if found < seen {
                report.problems.append(.formatKept(seen: seen, found: found))
            }
            if let remember { device.containerID = remember }
            if remember != nil || (device.containerFormat ?? 1) != format {
                device.containerFormat = format
                try root.saveDevice(device)
            }
            // What the replicator writes on its own (baselines) follows the container's format.
            replicator?.format = device.logFormat
            // The records read above stand when the container is the one remembered.
            try checkTrust(container, current: current, loaded: trust?.container == current ? trust?.loaded : nil, report: &report)
            return true
        case .changed(let remembered, let found, let error):
            let message = error.description
            // A container left without an identity gets it back from a device that remembers
            // it; one that has another identity is adopted (or --container points elsewhere).
            let wayOut: WayOut = found == nil && container.keys?.policy.root == nil && container.hasLostItsIdentity ? .restoreIdentity : .adopt
            if let containerRefusal, containerRefusal == message + "; staying local" {
                // Asked already in this process, and nothing changed since.
                report.containerError = .containerUnavailable(containerRefusal)
                report.problems.append(.containerChanged(message, wayOut: wayOut))
                return false
            }
            emit(.containerChanged(message))
            logger.warning("container identity changed", metadata: ["remembered": "\(remembered)", "found": "\(found?.uuidString ?? "none")"])
            switch configuration.onContainerChange(message) {
            case .adoptNew:
                let adopted: (identity: ContainerIdentity, shared: Set<DocumentID>)
                do {
                    adopted = try container.adopt(replacing: remembered, device: identity.id, now: configuration.now(), newID: configuration.newUUID())
                } catch {
                    throw EngineError.containerUnavailable(error.description)
                }
                // What was shared under another identity stays behind: a record says where it
                // was shared (records of earlier versions fall back on what the replica holds).
                for var record in allRecords() where record.location == .cloud
                    && !(record.container.map { $0 == adopted.identity.containerID } ?? adopted.shared.contains(record.id)) {
                    await closeDocument(record.id)
                    record.location = .local
                    record.container = nil
                    try saveRecord(record)
                    report.problems.append(.keptLocal(name: record.name.rawValue))
                }
                containersInForce = [adopted.identity.containerID]
                replicator?.refusedContainers.insert(remembered)
                catalog.setContainerStamp(.documents, nil)
                catalog.setContainerStamp(.tombstones, nil)
                device.containerID = adopted.identity.containerID
                device.containerFormat = adopted.identity.format
                try root.saveDevice(device)
                // The adopted container's trust, before anything of it is read.
                try checkTrust(container, current: adopted.identity.containerID, loaded: nil, report: &report)
                return true
            case .stayLocal:
                // Nothing is demoted: a mistyped --container or a replica that is briefly wrong
                // must not detach every document for good. Saves wait in their outboxes until
                // the known identity is back or the user adopts this container.
                let refusal = message + "; staying local"
                containerRefusal = refusal
                report.containerError = .containerUnavailable(refusal)
                report.problems.append(.containerChanged(message, wayOut: wayOut))
                return false
            }
        }
    }
}
