import Foundation
import Logging
import Model
import Storage
import Sync

// A signed (and optionally encrypted) container, as the library runs it (Docs/SECURITY.md):
// the trust check after each identity check, the move to signed or encrypted, admission and
// removal of devices. The records themselves and their checks are Sync's.

/// What `multidoc device list` shows.
public struct DeviceList: Sendable, Encodable {
    public struct Entry: Sendable, Encodable {
        public var device: String
        public var name: String
        public var fingerprint: String?
        /// `admitted`, `asks to join`, `removed`, `registered` (an unsigned container), or `this device`.
        public var state: String
        public var isThisDevice: Bool
        /// Why this entry needs a closer look before admitting it (a device asking to join
        /// under the name of an admitted device or of another request); nil when nothing does.
        public var warning: String?
    }

    public var signed: Bool
    public var encrypted: Bool
    /// The root device's fingerprint (the first admitted device).
    public var root: String?
    public var thisDevice: String
    public var thisFingerprint: String?
    /// Why this device has no fingerprint (its key cannot be used), with the way out.
    public var keyProblem: String?
    public var devices: [Entry]
    /// Trust records not taken, each with why.
    public var problems: [String]
}

/// What `container upgrade --sign/--encrypt` did.
public struct ContainerSecuring: Sendable, Encodable {
    public var signed: Bool
    public var encrypted: Bool
    public var root: String
    /// Registered devices that must be admitted (`multidoc device admit FINGERPRINT`).
    public var waitingForAdmission: [String]
    /// Registered devices whose build cannot sign (with `--force`: moved anyway).
    public var devicesNotReady: [String]
}

extension DocumentLibrary {
    /// After an identity check that agreed on `current`: reads the container's trust records,
    /// remembers its root the first time it is signed, re-seals this device's own files once,
    /// and says when this device is not admitted or lacks the container key.
    /// `loaded`: the records as read for `current` already in this pass, if they were.
    func checkTrust(_ container: Container, current: UUID, loaded earlier: TrustLoad?, report: inout SyncReport) throws {
        var device = try root.loadDevice(defaultName: identity.name, model: identity.model, newID: configuration.newUUID)
        // The root remembered for another container still counts: a container its root reset
        // is signed by the same key.
        let loaded = earlier ?? container.loadTrust(container: current, remembered: device.signingRoot)
        for problem in loaded.problems { quarantine(problem, in: &report) }
        if loaded.root == nil, loaded.expectedRootMissing || !loaded.undecided.isEmpty {
            let found = loaded.undecided.map { KeyFingerprint(publicKey: $0.key).description }
            throw EngineError.trust(loaded.expectedRootMissing
                ? "the container is not signed by the root this device expects (\(keys.expectedRoot ?? "?"))\(found.isEmpty ? "" : "; it is signed by \(found.joined(separator: ", "))"): nothing is read or written; point --container at the right folder, or run `multidoc container trust FINGERPRINT` with the root's fingerprint as a device that synced there before shows it"
                : "the container holds signing records of \(found.count) keys (\(found.joined(separator: ", "))) and this device has never synced with it: someone who can write into the folder added one; compare with `multidoc device list` on a device that synced there before, then run `multidoc container trust FINGERPRINT`")
        }
        guard let signingRoot = loaded.root else { return }
        if device.signingRoot != signingRoot {
            device.signingRoot = signingRoot
            device.resealed = nil
            try root.saveDevice(device)
            logger.notice("container is signed", metadata: ["root": "\(signingRoot.device)", "fingerprint": "\(KeyFingerprint(publicKey: signingRoot.key))"])
        }
        let policy = keys.policy
        if loaded.firstContact {
            let admitted = policy.admitted.values.sorted { $0.device < $1.device }.map { "\($0.device) \($0.fingerprint)" }
            report.problems.append(.firstContact(root: KeyFingerprint(publicKey: signingRoot.key).description, admitted: admitted))
            logger.notice("first contact with a signed container", metadata: [
                "root": "\(KeyFingerprint(publicKey: signingRoot.key))", "admitted": "\(admitted)"])
        }
        let fingerprint = (try? keys.signingKey().fingerprint.description) ?? "unknown"
        if policy.admitted[identity.id] == nil {
            report.problems.append(.notAdmitted(
                "this device (fingerprint \(fingerprint)) is not admitted to the signed container: its saves wait until an admitted device runs 'multidoc device admit \(fingerprint)'"))
        }
        if policy.encryption != nil, !container.holdsContainerKey {
            report.problems.append(.locked("the container is encrypted and this device does not hold its key"))
            return
        }
        let wanted = policy.encryption == nil ? 1 : 2
        if (device.resealed ?? 0) < wanted {
            let outcome = container.resealOwnFiles(device: identity.id)
            for problem in outcome.problems { quarantine(problem, in: &report) }
            device.resealed = wanted
            try root.saveDevice(device)
            logger.notice("signed this device's files", metadata: ["files": "\(outcome.resealed)", "encrypted": "\(wanted == 2)"])
        }
    }

    /// A pass that looks at the container's identity and trust records again (a long-lived
    /// library, the daemon's or the TUI's, may not have since they changed).
    /// - Throws: the pass's container error.
    private func refreshTrust() async throws {
        identityChecked = false
        if let error = await sync(documents: []).containerError { throw error }
    }

    /// The devices of the container and where each stands (`multidoc device list`).
    public func deviceList() async throws -> DeviceList {
        let replicator = try usableCloud()
        try await refreshTrust()
        let container = replicator.container
        let summary = container.trustSummary()
        let policy = summary.policy
        let ownKey = Result { () throws(SyncError) in try keys.signingKey() }
        let own = try? ownKey.get()
        var entries: [DeviceList.Entry] = []
        var seen: Set<DeviceID> = []
        func add(_ device: DeviceID, _ name: String, _ key: Data?, _ state: String, warning: String? = nil) {
            guard seen.insert(device).inserted else { return }
            entries.append(DeviceList.Entry(
                device: device.description, name: name, fingerprint: key.map { KeyFingerprint(publicKey: $0).description },
                state: device == identity.id ? "this device, \(state)" : state, isThisDevice: device == identity.id, warning: warning))
        }
        let records = Dictionary(container.deviceRecords().map { ($0.device, $0) }, uniquingKeysWith: { first, _ in first })
        let names = records.mapValues(\.name).merging(summary.requests.map { ($0.device, $0.name) }, uniquingKeysWith: { first, _ in first })
        if policy.isSigned {
            for admitted in policy.admitted.values.sorted(by: { $0.device < $1.device }) {
                add(admitted.device, names[admitted.device] ?? (admitted.device == identity.id ? identity.name : "?"), admitted.key,
                    admitted.device == policy.root?.device ? "admitted (root)" : "admitted")
            }
            let admittedNames = Set(policy.admitted.keys.compactMap { names[$0] ?? ($0 == identity.id ? identity.name : nil) }.map(Self.nameKey))
            let requestNames = Dictionary(grouping: summary.requests, by: { Self.nameKey($0.name) })
            for request in summary.requests.sorted(by: { $0.name < $1.name }) {
                let key = Self.nameKey(request.name)
                let warning: String? = admittedNames.contains(key)
                    ? "its name is an admitted device's: compare the fingerprint on the device itself before admitting it"
                    : (requestNames[key]?.count ?? 0) > 1
                    ? "another device asks to join under the same name: compare the fingerprint on the device itself before admitting it"
                    : nil
                add(request.device, request.name, request.key, "asks to join", warning: warning)
            }
            if policy.admitted[identity.id] == nil { add(identity.id, identity.name, own.map { Data($0.publicKey) }, "not admitted") }
            for removal in policy.removed.values.sorted(by: { $0.device < $1.device }) {
                add(removal.device, names[removal.device] ?? "?", removal.key, "removed")
            }
        } else {
            add(identity.id, identity.name, own.map { Data($0.publicKey) }, "registered")
            for record in records.values.sorted(by: { $0.name < $1.name }) { add(record.device, record.name, record.key, "registered") }
        }
        return DeviceList(
            signed: policy.isSigned, encrypted: policy.encryption != nil,
            root: policy.root.map { KeyFingerprint(publicKey: $0.key).description }, thisDevice: identity.id.description,
            thisFingerprint: own?.fingerprint.description, keyProblem: Self.keyProblem(ownKey), devices: entries,
            problems: summary.problems.map(\.description))
    }

    /// Why this device has no fingerprint, and the way out: a key that cannot be used signs
    /// nothing, which a signed container refuses.
    static func keyProblem(_ key: Result<DeviceKey, SyncError>) -> String? {
        guard case .failure(let error) = key else { return nil }
        return "\(error.description); move it aside and run any command to make a new one (a signed container admits its new fingerprint again)"
    }

    /// A name as two devices' names are compared: case and surrounding spaces ignored.
    nonisolated static func nameKey(_ name: String) -> String { name.trimmingCharacters(in: .whitespaces).lowercased() }

    /// Admits the devices asking to join whose fingerprints are `fingerprints` (after the user
    /// compared them with what those devices show). Returns the names admitted.
    /// - Throws: ``EngineError/trust(_:)`` when a fingerprint is shorter than
    ///   ``Sync/KeyFingerprint/admissionDigits`` hex digits, matches no request (or several), or
    ///   this device may not admit.
    public func admit(fingerprints: [String]) async throws -> [String] {
        for text in fingerprints where KeyFingerprint.digits(text).count < KeyFingerprint.admissionDigits {
            throw EngineError.trust(
                "'\(text)' is \(KeyFingerprint.digits(text).count) hex digits; admission takes the whole fingerprint (\(KeyFingerprint.admissionDigits) hex digits, as `multidoc device list` shows it on the joining device): a key matching a few digits is quick to make")
        }
        let replicator = try usableCloud()
        try await refreshTrust()
        let requests = replicator.container.joinRequests()
        var chosen: [JoinRequest] = []
        for text in fingerprints {
            let matches = requests.filter { $0.fingerprint.matches(admission: text) }
            guard matches.count == 1, let request = matches.first else {
                let known = requests.map { "\($0.name) \($0.fingerprint)" }.joined(separator: ", ")
                throw EngineError.trust(matches.isEmpty
                    ? "no device asking to join has fingerprint \(text)" + (known.isEmpty ? " (none asks now: the device must run 'multidoc sync' first)" : "; asking: \(known)")
                    : "\(text) matches \(matches.count) devices asking to join; give more of the fingerprint")
            }
            chosen.append(request)
        }
        do {
            try replicator.container.writeAdmission(admit: chosen.map { AdmittedDevice(device: $0.device, key: $0.key) }, remove: [])
        } catch {
            throw EngineError.trust(error.description)
        }
        logger.notice("admitted devices", metadata: ["devices": "\(chosen.map { "\($0.name) \($0.fingerprint)" })"])
        identityChecked = false
        await sync()
        return chosen.map(\.name)
    }

    /// Removes an admitted device (by fingerprint, device UUID or name): what it wrote so far,
    /// as far as this device has it, stays accepted; nothing it signs later is.
    public func removeDevice(_ query: String) async throws -> String {
        let replicator = try usableCloud()
        try await refreshTrust()
        let policy = keys.policy
        let records = Dictionary(replicator.container.deviceRecords().map { ($0.device, $0.name) }, uniquingKeysWith: { first, _ in first })
        let matches = policy.admitted.values.filter { admitted in
            admitted.fingerprint.matches(prefix: query) || admitted.device.description.hasPrefix(query.lowercased())
                || records[admitted.device] == query
        }
        guard matches.count == 1, let target = matches.first else {
            throw EngineError.trust(matches.isEmpty ? "no admitted device matches '\(query)' ('multidoc device list' shows them)"
                : "'\(query)' matches \(matches.count) admitted devices; give a fingerprint")
        }
        guard target.device != identity.id else {
            throw EngineError.trust("a device does not remove itself; remove it from another admitted device")
        }
        // What the removed device wrote that this device applied stays accepted.
        var logs: [DocumentID: UInt64] = [:]
        for record in allRecords() where record.location == .cloud {
            guard let document = try? await handler.open(record, create: false, forPass: true) else { continue }
            if let applied = try? document.store.read().sync.applied[target.device] { logs[record.id] = applied }
            if FileManager.default.fileExists(atPath: replicator.container.infoURL(record.id, device: target.device).path) {
                logs[record.id] = logs[record.id] ?? 0
            }
            await closeIfThePassOpened(record.id)
        }
        let admissions = replicator.container.admissionCount(of: target.device, key: target.key)
        // Pinned by content: a file it rewrites later, under the same name or not, is refused.
        let pinned = replicator.container.pins(of: target.device, logs: logs)
        if pinned == nil { logger.warning("removal caps by number: the removed device's files are too many to pin", metadata: ["device": "\(target.device)"]) }
        do {
            try replicator.container.writeAdmission(
                admit: [], remove: [Removal(device: target.device, key: target.key, logs: logs, admissions: admissions, pinned: pinned)])
        } catch {
            throw EngineError.trust(error.description)
        }
        let name = records[target.device] ?? target.device.description
        logger.notice("removed device", metadata: ["device": "\(target.device)", "fingerprint": "\(target.fingerprint)"])
        identityChecked = false
        await sync()
        return name
    }

    /// Moves the container to signed (and, with `passphrase`, encrypted) files: this device
    /// becomes the root of its admissions, publishes every cloud document it has under its own
    /// signature (an info file and a baseline, so a device joining later needs no unsigned file),
    /// and re-seals its own files. Other devices re-seal theirs once admitted.
    public func secureContainer(passphrase: String?, force: Bool) async throws -> ContainerSecuring {
        let replicator = try usableCloud()
        if (root.savedDevice()?.containerFormat ?? 1) < Container.formatVersion {
            let moved = try await upgradeContainer(force: force)
            guard moved.format >= Container.formatVersion else {
                return ContainerSecuring(signed: false, encrypted: false, root: "", waitingForAdmission: [], devicesNotReady: moved.devicesNotReady)
            }
        }
        let report = await sync()
        if let error = report.containerError { throw error }
        let container = replicator.container
        let notReady = container.deviceRecords().filter { $0.device != identity.id && $0.key == nil }.map { "\($0.name) (\($0.device))" }
        if !notReady.isEmpty, !force {
            return ContainerSecuring(signed: keys.policy.isSigned, encrypted: keys.policy.encryption != nil, root: "", waitingForAdmission: [],
                                     devicesNotReady: notReady)
        }
        guard let id = containerID else { throw EngineError.containerUnavailable("the container has no identity yet; run 'multidoc sync' first") }
        let signingRoot: SigningRoot
        do {
            signingRoot = try container.sign(container: id, now: configuration.now())
            var device = try root.loadDevice(defaultName: identity.name, model: identity.model, newID: configuration.newUUID)
            device.signingRoot = signingRoot
            device.resealed = nil
            try root.saveDevice(device)
            guard keys.policy.admitted[identity.id] != nil else {
                throw SyncError(.notAdmitted, path: container.root.path, detail: "the container is signed already, and this device is not admitted; ask an admitted device to run 'multidoc device admit \((try? keys.signingKey().fingerprint.description) ?? "")'")
            }
            if let passphrase { _ = try container.encrypt(passphrase: passphrase, now: configuration.now()) }
        } catch let error as SyncError {
            throw EngineError.trust(error.description)
        }
        // Published under this device's signature: a device joining later finds every document.
        for record in allRecords() where record.location == .cloud {
            guard let document = try? await handler.open(record, create: false, forPass: true) else { continue }
            let info = DocumentInfo(
                document: record.id, name: record.name, createdBy: record.createdBy, createdByName: identity.name, createdAt: record.createdAt,
                store: record.store, container: id)
            try replicator.publish(info, store: document.store, baseline: true)
            await closeIfThePassOpened(record.id)
        }
        identityChecked = false
        await sync()
        let waiting = container.joinRequests().map { "\($0.name) \($0.fingerprint)" }
        logger.notice("container secured", metadata: ["root": "\(signingRoot.device)", "encrypted": "\(passphrase != nil)"])
        return ContainerSecuring(
            signed: true, encrypted: keys.policy.encryption != nil, root: KeyFingerprint(publicKey: signingRoot.key).description,
            waitingForAdmission: waiting, devicesNotReady: notReady)
    }

    /// Pins the root whose fingerprint is `fingerprint` (whole, as a device that synced with the
    /// container before shows it) as the one this device trusts for its container: after a first
    /// contact it should not have trusted, or when signing records of two keys leave it
    /// undecided. `replacing`: forget a root learned before (what was learned under it goes).
    /// Returns the root's fingerprint.
    /// - Throws: ``EngineError/trust(_:)`` when the fingerprint is short, no signing record of
    ///   the container carries it, or another root is learned and `replacing` is false.
    public func trustRoot(fingerprint: String, replacing: Bool) async throws -> String {
        guard KeyFingerprint.digits(fingerprint).count >= KeyFingerprint.admissionDigits else {
            throw EngineError.trust("'\(fingerprint)' is \(KeyFingerprint.digits(fingerprint).count) hex digits; give the root's whole fingerprint (\(KeyFingerprint.admissionDigits) hex digits)")
        }
        let replicator = try usableCloud()
        _ = await sync(documents: [])
        guard let id = root.savedDevice()?.containerID else {
            throw EngineError.trust("this device has not synced with the container yet; run 'multidoc sync' first")
        }
        let roots = replicator.container.signingRoots(id)
        guard let chosen = roots.first(where: { KeyFingerprint(publicKey: $0.key).matches(admission: fingerprint) }) else {
            let found = roots.map { KeyFingerprint(publicKey: $0.key).description }
            throw EngineError.trust("no signing record of the container carries fingerprint \(fingerprint)" + (found.isEmpty ? " (it is not signed)" : "; found: \(found.joined(separator: ", "))"))
        }
        if let learned = keys.learned(id), learned.root.key != chosen.key, !replacing {
            throw EngineError.trust("this device trusts another root for this container (\(KeyFingerprint(publicKey: learned.root.key))); add --replace to trust \(KeyFingerprint(publicKey: chosen.key)) instead and forget what was learned under the other")
        }
        do {
            try keys.pin(chosen, for: id, expected: nil)
        } catch {
            throw EngineError.trust(error.description)
        }
        var device = try root.loadDevice(defaultName: identity.name, model: identity.model, newID: configuration.newUUID)
        if device.signingRoot != chosen {
            device.signingRoot = chosen
            device.resealed = nil
            try root.saveDevice(device)
        }
        logger.notice("root pinned", metadata: ["fingerprint": "\(KeyFingerprint(publicKey: chosen.key))"])
        // A whole pass: the device registers (asks to join) and syncs under the root it trusts.
        identityChecked = false
        if let error = await sync().containerError { throw error }
        return KeyFingerprint(publicKey: chosen.key).description
    }

    /// Keeps the key of this encrypted container, derived from `passphrase`.
    public func unlockContainer(passphrase: String) async throws -> Bool {
        let replicator = try usableCloud()
        try await refreshTrust()
        do {
            guard try replicator.container.unlock(passphrase: passphrase) else { return false }
        } catch {
            throw EngineError.trust(error.description)
        }
        logger.notice("container unlocked")
        identityChecked = false
        await sync()
        return true
    }
}
