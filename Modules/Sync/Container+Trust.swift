import _CryptoExtras
import Crypto
import FileIO
import Foundation
import Model

// Who may write into a signed container (Docs/SECURITY.md):
//
//   identity/signing.<device>          the signing record: the root device and its key (self-signed)
//   identity/admitted.<device>.<n>     admission records: devices admitted and removed (signed)
//   identity/encryption.<device>       an encrypted container's key derivation (signed)
//
// The root is admitted by the signing record; every other device by an admission record signed
// by an admitted device. A device removed stops being trusted beyond what the removal lists.

/// The payload of `identity/signing.<device>`: the container is signed from now on, with
/// `device`'s key as the root of its admissions.
struct SigningRecord: Codable, Sendable {
    var format = 1
    var container: UUID
    var device: DeviceID
    var key: Data
    var signedAt: Date
}

/// The payload of `identity/admitted.<device>.<n>`.
struct AdmissionRecord: Codable, Sendable {
    var format = 1
    var admit: [AdmittedDevice]
    var remove: [Removal]
}

/// A device that asks to join a signed container: its registry entry, signed by its own key,
/// whose key no admission record lists yet.
public struct JoinRequest: Sendable, Hashable {
    public var device: DeviceID
    public var name: String
    public var model: String
    public var key: Data
    public var fingerprint: KeyFingerprint { KeyFingerprint(publicKey: key) }
}

/// What the container's trust records say, for `multidoc device list` and `container status`.
public struct TrustSummary: Sendable {
    public var policy: ContainerPolicy
    public var requests: [JoinRequest]
    /// Trust records that were not taken (forged, damaged, from a device not admitted).
    public var problems: [QuarantinedFile]
}

/// What reading a container's trust records found (``Container/loadTrust(container:remembered:)``).
public struct TrustLoad: Sendable {
    /// The root in force (nil: the container is unsigned, or its root is undecided).
    public var root: SigningRoot?
    /// Trust records not taken, each with why; alarms among them.
    public var problems: [QuarantinedFile] = []
    /// The root was trusted on this pass for the first time: the device met the container
    /// signed (front ends show the root's fingerprint and the admitted devices).
    public var firstContact = false
    /// The roots found that the device could not choose between (signing records of two keys,
    /// or none of the root it was told to expect): nothing is read or written until one is pinned.
    public var undecided: [SigningRoot] = []
    /// The root the user said to expect signs nothing here.
    public var expectedRootMissing = false
    /// Trust records the folder had lost, written back from what this device kept.
    public var restored: [String] = []

    public init() {}
}

extension Container {
    static let signingPrefix = "signing."
    static let admissionPrefix = "admitted."
    static let encryptionPrefix = "encryption."
    /// Whether a name of the identity folder is a trust record's, not an identity's.
    static func isTrustRecord(_ name: String) -> Bool {
        [signingPrefix, admissionPrefix, encryptionPrefix].contains { name.hasPrefix($0) }
    }

    // MARK: Loading

    /// Reads the signing, admission and encryption records of container `id` against the trust
    /// this device learned of it (``LearnedTrust``, kept by ``keys``), sets the policy ``keys``
    /// holds, and keeps what it learned. `remembered`: the root this device trusted before it
    /// kept learned trust (for the container `id` replaced, a signing record of `id` with the
    /// same key wins over the others).
    @discardableResult
    public func loadTrust(container id: UUID, remembered: SigningRoot?) -> TrustLoad {
        var load = TrustLoad()
        let names = listNames(identityDirectory)
        let candidates = signingCandidates(id, names: names, problems: &load.problems)
        let learned = keys?.learned(id)
        guard let root = chooseRoot(id, learned: learned, remembered: remembered, candidates: candidates.map { ($0.root, $0.at) }, load: &load) else {
            var policy = ContainerPolicy()
            policy.undecided = !load.undecided.isEmpty || load.expectedRootMissing
            keys?.setPolicy(policy)
            return load
        }
        load.root = root
        // Another key's signing record for this container is an alarm: the root is decided.
        for candidate in candidates where candidate.root.key != root.key {
            load.problems.append(QuarantinedFile(
                url: identityDirectory.appendingPathComponent(candidate.name, isDirectory: false),
                reason: "signing record of another key (fingerprint \(KeyFingerprint(publicKey: candidate.root.key))) than the root this device trusts (\(KeyFingerprint(publicKey: root.key))): not taken; someone who can write into the folder put it there"))
        }
        var trust = learned ?? LearnedTrust(root: root)
        if let own = candidates.first(where: { $0.root == root }) { trust.records[own.name] = Data(own.bytes) }
        var policy = ContainerPolicy(root: root)
        let admissions = admissionEntries(names, problems: &load.problems)
        let outcome = Self.admitted(root: root, learned: learned, entries: admissions, problems: &load.problems)
        (policy.admitted, policy.removed) = (outcome.admitted, outcome.removed)
        for index in outcome.accepted { trust.records[admissions[index].name] = Data(admissions[index].bytes) }
        trust.admitted.merge(outcome.admitted) { kept, _ in kept }
        trust.removed.merge(outcome.removed) { kept, _ in kept }
        keys?.setPolicy(policy)
        // Encryption: the one this device accepted, else the earliest record an admitted device signed.
        var found: (parameters: EncryptionParameters, name: String, bytes: Data)?
        for name in names where name.hasPrefix(Self.encryptionPrefix) {
            let url = identityDirectory.appendingPathComponent(name, isDirectory: false)
            do {
                let data = try readFile(url, limit: Self.maximumRecordSize)
                let envelope = try open(Array(data), kind: .identity, document: ContainerEnvelope.zero,
                                        writer: DeviceID(String(name.dropFirst(Self.encryptionPrefix.count))), place: nil, maximumPayload: data.count)
                let parameters = try Self.decodeJSON(EncryptionParameters.self, from: Data(envelope.payload))
                guard parameters.container == id else { continue }
                if let known = trust.encryption, known != parameters {
                    throw LogDecodingError(reason: "another encryption record than the one this device accepted")
                }
                if found.map({ parameters.since < $0.parameters.since }) ?? true { found = (parameters, name, data) }
            } catch {
                load.problems.append(QuarantinedFile(url: url, reason: "encryption record not taken: \(Self.summarize(error))"))
            }
        }
        if trust.encryption == nil, let found {
            trust.encryption = found.parameters
            trust.records[found.name] = found.bytes
            // A device that synced here before the encryption keeps reading the clear logs it
            // could have read then; one meeting the container encrypted reads only sealed ones.
            if learned != nil { trust.clearLogs = logHeads() }
        }
        policy.encryption = trust.encryption
        policy.clearLogs = trust.clearLogs
        policy.removed.merge(trust.removed) { kept, _ in kept }
        for device in policy.removed.keys { policy.admitted[device] = nil }
        keys?.setPolicy(policy)
        load.restored = restoreRecords(trust.records, problems: &load.problems)
        if trust != learned, let keys {
            do { try keys.learn(trust, for: id) } catch {
                load.problems.append(QuarantinedFile(url: identityDirectory, reason: "the trust learned here is not kept: \(error)"))
            }
        }
        return load
    }

    /// The signing records of container `id` whose signature holds: the roots it could have.
    public func signingRoots(_ id: UUID) -> [SigningRoot] {
        var problems: [QuarantinedFile] = []
        return signingCandidates(id, names: listNames(identityDirectory), problems: &problems).map(\.root)
    }

    private func signingCandidates(
        _ id: UUID, names: [String], problems: inout [QuarantinedFile]
    ) -> [(root: SigningRoot, at: Date, name: String, bytes: [UInt8])] {
        var candidates: [(root: SigningRoot, at: Date, name: String, bytes: [UInt8])] = []
        for name in names where name.hasPrefix(Self.signingPrefix) {
            let url = identityDirectory.appendingPathComponent(name, isDirectory: false)
            do {
                let (envelope, bytes) = try readEnvelope(url, kind: .identity)
                let record = try Self.decodeJSON(SigningRecord.self, from: Data(envelope.payload))
                guard record.container == id, envelope.header.container == id else { continue }
                guard name == Self.signingPrefix + record.device.description, DeviceID(envelope.header.writer) == record.device else {
                    throw LogDecodingError(reason: "names device \(record.device) but lies under another name")
                }
                try Self.verify(envelope, bytes, key: record.key)
                candidates.append((SigningRoot(container: id, device: record.device, key: record.key), record.signedAt, name, bytes))
            } catch {
                problems.append(QuarantinedFile(url: url, reason: "signing record not taken: \(Self.summarize(error))"))
            }
        }
        return candidates
    }

    /// The root in force for container `id`: the one this device learned or remembered; on first
    /// contact the one signing record found (or the one of the root the user said to expect).
    /// Nil: the container is unsigned, or the root is undecided (`load` says which).
    private func chooseRoot(
        _ id: UUID, learned: LearnedTrust?, remembered: SigningRoot?, candidates: [(root: SigningRoot, at: Date)], load: inout TrustLoad
    ) -> SigningRoot? {
        if let learned { return learned.root }
        if let remembered, remembered.container == id { return remembered }
        // A container that follows one this device remembers signed (its root reset it) is
        // signed by the same key.
        if let sameKey = candidates.filter({ $0.root.key == remembered?.key }).min(by: { $0.at < $1.at }) { return sameKey.root }
        var roots: [SigningRoot] = []
        for candidate in candidates.sorted(by: { $0.at < $1.at }) where !roots.contains(where: { $0.key == candidate.root.key }) {
            roots.append(candidate.root)
        }
        if let expected = keys?.expectedRoot {
            if let match = roots.first(where: { KeyFingerprint(publicKey: $0.key).matches(admission: expected) }) {
                load.firstContact = true
                return match
            }
            load.expectedRootMissing = true
            load.undecided = roots
            load.problems.append(QuarantinedFile(url: identityDirectory, reason: roots.isEmpty
                ? "no signing record of the root this device was told to expect (\(expected)): the container is not trusted"
                : "signed by \(roots.map { KeyFingerprint(publicKey: $0.key).description }.joined(separator: ", ")), not by the root this device was told to expect (\(expected)): the container is not trusted"))
            return nil
        }
        guard roots.count <= 1 else {
            load.undecided = roots
            load.problems.append(QuarantinedFile(url: identityDirectory, reason: "signing records of \(roots.count) keys (\(roots.map { KeyFingerprint(publicKey: $0.key).description }.joined(separator: ", "))): at most one is the container's root; compare with `multidoc device list` on a device that synced here before, then run `multidoc container trust FINGERPRINT`"))
            return nil
        }
        load.firstContact = roots.first != nil
        return roots.first
    }

    /// Every trust record this device accepted that the folder lost (or holds otherwise), written
    /// back: a removal, an admission or the encryption deleted from `identity/` comes back for
    /// every device. Returns the names written.
    private func restoreRecords(_ records: [String: Data], problems: inout [QuarantinedFile]) -> [String] {
        var restored: [String] = []
        for (name, bytes) in records.sorted(by: { $0.key < $1.key }) {
            let url = identityDirectory.appendingPathComponent(name, isDirectory: false)
            if let present = try? readFile(url, limit: Self.maximumRecordSize), present == bytes { continue }
            do {
                try writeRaw(bytes, to: url)
                restored.append(name)
                problems.append(QuarantinedFile(url: url, reason: "trust record missing from the folder (or changed there): written back as this device accepted it"))
            } catch {
                problems.append(QuarantinedFile(url: url, reason: "trust record missing from the folder, and not written back: \(error.description)"))
            }
        }
        return restored
    }

    /// Per `<document>/<writer>`, the highest log in the container now.
    func logHeads() -> [String: UInt64] {
        var heads: [String: UInt64] = [:]
        for id in documentIDs() {
            for device in logDevices(id) {
                if let last = logSequences(id, device: device).last { heads[LearnedTrust.clearLogKey(id.uuid, device)] = last }
            }
        }
        return heads
    }

    /// One admission record as read: its writer, number, content and bytes (checked later,
    /// against the keys admitted so far).
    struct AdmissionEntry {
        var url: URL
        var name: String { url.lastPathComponent }
        var writer: DeviceID
        var number: UInt64
        var record: AdmissionRecord
        var envelope: ContainerEnvelope
        var bytes: [UInt8]
    }

    /// How many records not taken are named one by one; beyond, one line counts the rest (a
    /// flood is reported, and no limit on how many records are read decides who is trusted).
    static let namedProblems = 16

    /// The highest number an admission record may carry: a device writes one per admission or
    /// removal, so a name numbered beyond (planted, say) is refused rather than taken as the
    /// place to count on from.
    static let maximumAdmissionNumber: UInt64 = 1 << 20

    /// The numbers of `device`'s admission records that carry `key`'s signature (junk or
    /// forgeries under its name do not count).
    func admissionNumbers(of device: DeviceID, key: Data) -> [UInt64] {
        let prefix = "\(Self.admissionPrefix)\(device)."
        return listNames(identityDirectory).compactMap { name -> UInt64? in
            guard name.hasPrefix(prefix), let number = UInt64(name.dropFirst(prefix.count)), (1...Self.maximumAdmissionNumber).contains(number),
                  let (envelope, bytes) = try? readEnvelope(identityDirectory.appendingPathComponent(name, isDirectory: false), kind: .admission),
                  DeviceID(envelope.header.writer) == device, envelope.header.place == number,
                  (try? Self.verify(envelope, bytes, key: key)) != nil
            else { return nil }
            return number
        }
    }

    private func admissionEntries(_ names: [String], problems: inout [QuarantinedFile]) -> [AdmissionEntry] {
        var refused: [QuarantinedFile] = []
        let entries = names.filter { $0.hasPrefix(Self.admissionPrefix) }.compactMap { name -> AdmissionEntry? in
            let url = identityDirectory.appendingPathComponent(name, isDirectory: false)
            do {
                guard let place = filePlace(of: url), let writer = place.writer, let number = place.place else {
                    throw LogDecodingError(reason: "not named admitted.<device>.<number>")
                }
                guard (1...Self.maximumAdmissionNumber).contains(number) else {
                    throw LogDecodingError(reason: "numbered \(number), outside the 1…\(Self.maximumAdmissionNumber) a device writes")
                }
                let (envelope, bytes) = try readEnvelope(url, kind: .admission)
                guard DeviceID(envelope.header.writer) == writer, envelope.header.place == number else {
                    throw LogDecodingError(reason: "its header names another device or number than its name")
                }
                let record = try Self.decodeJSON(AdmissionRecord.self, from: Data(envelope.payload))
                return AdmissionEntry(url: url, writer: writer, number: number, record: record, envelope: envelope, bytes: bytes)
            } catch {
                refused.append(QuarantinedFile(url: url, reason: "admission record not taken: \(Self.summarize(error))"))
                return nil
            }
        }.sorted { ($0.writer, $0.number) < ($1.writer, $1.number) }
        problems += Self.summarized(refused)
        return entries
    }

    /// `refused`, the first ``namedProblems`` of them named and the rest counted in one line.
    static func summarized(_ refused: [QuarantinedFile]) -> [QuarantinedFile] {
        guard refused.count > namedProblems, let first = refused.first else { return refused }
        return Array(refused.prefix(namedProblems)) + [QuarantinedFile(
            url: first.url.deletingLastPathComponent(),
            reason: "\(refused.count - namedProblems) more trust records not taken (\(refused.count) in all): a flood of files nobody admitted signed; remove them")]
    }

    /// The admitted and removed devices. Starting from the root and what this device learned
    /// before, every record signed by a device admitted so far (a removed device's only as its
    /// removal pins or caps) adds its admissions; then the one removal signed by the most senior
    /// remover (the root, then devices in the order they were admitted) takes effect, and the
    /// whole is done again until no removal is left. Removals only accumulate, so this ends
    /// after at most one round per device, and neither the order nor the number of records in
    /// the folder changes the outcome. Returns the indices of the records accepted.
    static func admitted(
        root: SigningRoot, learned: LearnedTrust?, entries: [AdmissionEntry], problems: inout [QuarantinedFile]
    ) -> (admitted: [DeviceID: AdmittedDevice], removed: [DeviceID: Removal], accepted: [Int]) {
        var removed = learned?.removed ?? [:]
        removed[root.device] = nil
        var admitted: [DeviceID: AdmittedDevice] = [:]
        var valid: [Bool] = []
        var refused: [QuarantinedFile] = []
        // Each record's signature is checked once per key (a device's key never changes here):
        // a flood of forged records costs one check each, not one per round.
        var checked: [Int: (key: Data, good: Bool)] = [:]
        func signatureHolds(_ index: Int, _ key: Data) -> Bool {
            if let done = checked[index], done.key == key { return done.good }
            let good = (try? verify(entries[index].envelope, entries[index].bytes, key: key)) != nil
            checked[index] = (key, good)
            return good
        }
        // A record accepted before is taken only as it was then.
        let rewritten = Set(entries.indices.filter { index in
            guard let kept = learned?.records[entries[index].name] else { return false }
            return kept != Data(entries[index].bytes)
        })
        for index in rewritten {
            refused.append(QuarantinedFile(url: entries[index].url, reason: "admission record not taken: rewritten after this device accepted it (the accepted one is kept)"))
        }
        var seniority: [DeviceID: Int] = [:]
        while true {
            admitted = [root.device: AdmittedDevice(device: root.device, key: root.key)]
            seniority = [root.device: 0]
            valid = Array(repeating: false, count: entries.count)
            func close() {
                var grew = true
                while grew {
                    grew = false
                    for (index, entry) in entries.enumerated() where !valid[index] && !rewritten.contains(index) {
                        guard let signer = admitted[entry.writer] else { continue }
                        if let removal = removed[entry.writer],
                           removal.key != signer.key || !removal.accepts(kind: .admission, document: ContainerEnvelope.zero, place: entry.number, bytes: entry.bytes) {
                            continue
                        }
                        guard signatureHolds(index, signer.key) else { continue }
                        valid[index] = true
                        grew = true
                        for device in entry.record.admit where admitted[device.device] == nil {
                            admitted[device.device] = device
                            seniority[device.device] = seniority.count
                        }
                    }
                }
            }
            // Seniority follows the records, as every device reads them; devices this one
            // learned of whose records the folder lost come after.
            close()
            for device in (learned?.admitted.values ?? [:].values).sorted(by: { $0.device < $1.device }) where admitted[device.device] == nil {
                admitted[device.device] = device
                seniority[device.device] = seniority.count
            }
            close()
            let pending = entries.indices.filter { valid[$0] }.flatMap { index in
                entries[index].record.remove.filter { removal in
                    removal.device != root.device && removed[removal.device] == nil && admitted[removal.device]?.key == removal.key
                }.map { (index: index, removal: $0) }
            }
            guard let next = pending.min(by: { a, b in
                let (ea, eb) = (entries[a.index], entries[b.index])
                return (seniority[ea.writer] ?? Int.max, ea.writer, ea.number, a.removal.device)
                    < (seniority[eb.writer] ?? Int.max, eb.writer, eb.number, b.removal.device)
            }) else { break }
            removed[next.removal.device] = next.removal
        }
        for (index, entry) in entries.enumerated() where !valid[index] && !rewritten.contains(index) {
            refused.append(QuarantinedFile(url: entry.url,
                                           reason: "admission record not taken: signed by device \(entry.writer), which is not admitted (or was removed before it)"))
        }
        problems += summarized(refused)
        for device in removed.keys { admitted[device] = nil }
        return (admitted, removed, entries.indices.filter { valid[$0] })
    }

    /// Reads an envelope of `kind` without checking its signature (the caller knows the key).
    private func readEnvelope(_ url: URL, kind: ContainerEnvelope.Kind) throws -> (ContainerEnvelope, [UInt8]) {
        let bytes = Array(try readFile(url, limit: Self.maximumRecordSize))
        let envelope = try ContainerEnvelope(decoding: bytes, maximumPayload: bytes.count)
        guard envelope.kind == kind else { throw LogDecodingError(reason: "is a \(envelope.kind.name) file where a \(kind.name) belongs") }
        return (envelope, bytes)
    }

    /// Checks that `envelope`, read from `bytes`, carries `key`'s signature over every byte
    /// before it (the one signature check, for every kind of file).
    static func verify(_ envelope: ContainerEnvelope, _ bytes: [UInt8], key: Data) throws(LogDecodingError) {
        guard envelope.isSigned, let signature = envelope.signature, let length = envelope.signedLength, length <= bytes.count else {
            throw LogDecodingError(reason: "unsigned")
        }
        guard KeyFingerprint(publicKey: key).bytes == envelope.header.fingerprint,
              DeviceKey.isValid(signature: signature, of: bytes[0..<length], publicKey: Array(key)) else {
            throw LogDecodingError(
                reason: "bad signature (claimed writer \(DeviceID(envelope.header.writer)), whose key is \(KeyFingerprint(publicKey: key))); forged or damaged")
        }
    }

    // MARK: Identities of a signed container

    /// Why identity file `identity` (read from `url`; `envelope`: its envelope and bytes, nil
    /// for a plain JSON file) does not count for a device that has seen container
    /// `root.container` signed, or nil when it counts:
    ///
    /// - one that only restates the signed container (its UUID, replacing nothing of it, a
    ///   format this build reads) counts signed or not: it tells the device nothing it does not
    ///   know (the container's first identity file is written before it is signed);
    /// - one of a newer format of the signed container counts when an admitted device signed it;
    /// - anything else (another container, a reset) counts only as a reset signed by the root:
    ///   a new identity that replaces the signed container, signed with the root's key.
    ///
    /// What the folder says can thus neither replace the signed container nor stop its devices
    /// (a format no build reads), however it is written.
    func identityRefusal(_ identity: ContainerIdentity, envelope: (ContainerEnvelope, [UInt8])?, at url: URL, root: SigningRoot) -> String? {
        let replaces = identity.replaces ?? []
        let restates = identity.containerID == root.container && !replaces.contains(root.container)
        if restates, identity.format <= Self.formatVersion { return nil }
        let rootName = "the root (fingerprint \(KeyFingerprint(publicKey: root.key)))"
        guard let (envelope, bytes) = envelope, envelope.isSigned else {
            return "unsigned, in a signed container: only an identity signed by \(rootName) replaces it"
        }
        let writer = DeviceID(envelope.header.writer)
        guard filePlace(of: url)?.writer == writer else { return "signed by device \(writer), whose name it does not carry" }
        if restates {
            guard envelope.header.container == root.container,
                  let key = try? keys?.policy.key(for: writer, kind: .identity, document: ContainerEnvelope.zero, place: 0, bytes: bytes).get(),
                  (try? Self.verify(envelope, bytes, key: key)) != nil
            else { return "format \(identity.format), not signed by an admitted device" }
            return nil
        }
        guard identity.containerID != root.container, replaces.contains(root.container), writer == root.device,
              envelope.header.container == root.container || envelope.header.container == identity.containerID
                || replaces.contains(envelope.header.container),
              (try? Self.verify(envelope, bytes, key: root.key)) != nil
        else {
            return "names container \(identity.containerID.uuidString.lowercased()) in place of the signed one; only a reset signed by \(rootName) does"
        }
        return nil
    }

    // MARK: Join requests

    /// Devices whose registry entry carries a key no admission lists: they ask to join. Each
    /// entry must be signed by the key it carries.
    public func joinRequests() -> [JoinRequest] {
        guard let keys, let root = keys.policy.root else { return [] }
        let policy = keys.policy
        return listNames(devicesDirectory).filter { $0.hasSuffix(".json") }.compactMap { name -> JoinRequest? in
            let url = devicesDirectory.appendingPathComponent(name, isDirectory: false)
            guard let device = DeviceID(String(name.dropLast(5))), policy.admitted[device] == nil, policy.removed[device] == nil,
                  let bytes = try? Array(readFile(url, limit: Self.maximumRegistrySize)),
                  var envelope = try? ContainerEnvelope(decoding: bytes, maximumPayload: bytes.count),
                  envelope.kind == .registry, DeviceID(envelope.header.writer) == device, envelope.header.container == root.container
            else { return nil }
            if envelope.isEncrypted {
                guard (try? unseal(&envelope, keys: keys, container: root.container)) != nil else { return nil }
            }
            guard let record = try? Self.decodeJSON(DeviceRecord.self, from: Data(envelope.payload)), record.device == device,
                  let key = record.key, (try? Self.verify(envelope, bytes, key: key)) != nil else { return nil }
            return JoinRequest(device: device, name: record.name, model: record.model, key: key)
        }
    }

    /// The policy, the join requests and the trust records not taken (`device list`).
    public func trustSummary() -> TrustSummary {
        let policy = keys?.policy ?? ContainerPolicy()
        var problems: [QuarantinedFile] = []
        if let root = policy.root { problems = loadTrust(container: root.container, remembered: root).problems }
        // The policy as just read again.
        return TrustSummary(policy: keys?.policy ?? policy, requests: joinRequests(), problems: problems)
    }

    // MARK: Writing trust records

    /// Signs container `id` with this device's key as its root (`container upgrade --sign`).
    /// Returns the root in force: this device's, or the one already there.
    public func sign(container id: UUID, now: Date) throws(SyncError) -> SigningRoot {
        if let root = keys?.policy.root, root.container == id { return root }
        if let existing = loadTrust(container: id, remembered: nil).root { return existing }
        guard let keys else { throw SyncError(.keyUnusable, path: root.path, detail: "no device key") }
        let key = try keys.signingKey()
        let record = SigningRecord(container: id, device: keys.device, key: Data(key.publicKey), signedAt: now)
        let url = identityDirectory.appendingPathComponent(Self.signingPrefix + keys.device.description, isDirectory: false)
        var envelope = ContainerEnvelope(
            kind: .identity,
            header: .init(container: id, document: ContainerEnvelope.zero, writer: keys.device.uuid, place: 0,
                          writtenAt: UInt64(clamping: now.clampedMilliseconds), fingerprint: key.fingerprint.bytes),
            payload: Array(Self.encodeJSON(record)))
        envelope.flags = ContainerEnvelope.signedFlag | ContainerEnvelope.checksumFlag
        envelope.signature = try key.signature(for: envelope.signedPart)
        try writeRaw(Data(envelope.encoded), to: url)
        let root = SigningRoot(container: id, device: keys.device, key: Data(key.publicKey))
        loadTrust(container: id, remembered: root)
        return root
    }

    /// Writes an admission record admitting `admit` and removing `remove`.
    /// - Throws: ``SyncError`` when this device is not admitted itself, or cannot write.
    public func writeAdmission(admit: [AdmittedDevice], remove: [Removal]) throws(SyncError) {
        guard let keys, keys.policy.root != nil else {
            throw SyncError(.notAdmitted, path: root.path, detail: "the container is not signed; run `multidoc container upgrade --sign` first")
        }
        guard keys.policy.admitted[keys.device] != nil else {
            throw SyncError(.notAdmitted, path: root.path, detail: "only an admitted device admits or removes others")
        }
        // Numbered after this device's own records; a file under its name that is not one of
        // them (junk, a forgery, a number planted far ahead) is stepped over or ignored, so
        // nobody without its key stops it from admitting.
        let own = admissionNumbers(of: keys.device, key: Data(try keys.signingKey().publicKey))
        var number = (own.max() ?? 0) + 1
        func url(_ number: UInt64) -> URL {
            identityDirectory.appendingPathComponent("\(Self.admissionPrefix)\(keys.device).\(number)", isDirectory: false)
        }
        while number <= Self.maximumAdmissionNumber, FileManager.default.fileExists(atPath: url(number).path) { number += 1 }
        guard number <= Self.maximumAdmissionNumber else {
            throw SyncError(.writeFailed, path: identityDirectory.path, detail: "every admission record number of this device up to \(Self.maximumAdmissionNumber) is taken; remove the files named admitted.\(keys.device).<n> that `multidoc device list` reports as not taken")
        }
        let url = url(number)
        guard let sealed = try sealRecord(Self.encodeJSON(AdmissionRecord(admit: admit, remove: remove)), at: url, place: number) else {
            throw SyncError(.notAdmitted, path: root.path, detail: "the container is not signed")
        }
        try writeRaw(Data(sealed), to: url)
        if let root = keys.policy.root { loadTrust(container: root.container, remembered: root) }
    }

    /// Encrypts the container from now on with a key derived from `passphrase`, and keeps the
    /// key on this device. The container must be signed (encryption without signatures would
    /// not say who wrote what).
    public func encrypt(passphrase: String, now: Date, costLog2: Int = 15) throws(SyncError) -> EncryptionParameters {
        guard let keys, let root = keys.policy.root else {
            throw SyncError(.notAdmitted, path: self.root.path, detail: "the container is not signed; encryption needs `--sign` too")
        }
        if let existing = keys.policy.encryption {
            _ = try unlock(passphrase: passphrase)
            return existing
        }
        let salt = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
        let key = try Self.deriveKey(passphrase: passphrase, salt: salt, costLog2: costLog2, blockSize: 8, parallelism: 1)
        let check: Data
        do {
            check = try ChaChaPoly.seal(Data(Self.checkText.utf8), using: key, authenticating: Data(UUIDText.bytes(root.container))).combined
        } catch {
            throw SyncError(.writeFailed, path: self.root.path, detail: "sealing failed: \(error)")
        }
        let parameters = EncryptionParameters(
            container: root.container, salt: salt, costLog2: costLog2, blockSize: 8, parallelism: 1, check: check, since: now)
        try keys.remember(key, for: root.container)
        let url = identityDirectory.appendingPathComponent(Self.encryptionPrefix + keys.device.description, isDirectory: false)
        guard let sealed = try sealRecord(Self.encodeJSON(parameters), at: url) else {
            throw SyncError(.notAdmitted, path: self.root.path, detail: "the container is not signed")
        }
        try writeRaw(Data(sealed), to: url)
        loadTrust(container: root.container, remembered: root)
        return parameters
    }

    /// Derives the container key from `passphrase` and keeps it when it is the container's.
    /// - Throws: ``SyncError/Kind/locked`` for a wrong passphrase, with nothing kept.
    public func unlock(passphrase: String) throws(SyncError) -> Bool {
        guard let keys, let parameters = keys.policy.encryption else { return false }
        let key = try Self.deriveKey(
            passphrase: passphrase, salt: parameters.salt, costLog2: parameters.costLog2, blockSize: parameters.blockSize,
            parallelism: parameters.parallelism)
        guard let box = try? ChaChaPoly.SealedBox(combined: parameters.check),
              let opened = try? ChaChaPoly.open(box, using: key, authenticating: Data(UUIDText.bytes(parameters.container))),
              opened == Data(Self.checkText.utf8)
        else {
            throw SyncError(.locked, path: root.path, detail: "wrong passphrase: it does not open the container's key check; nothing was changed")
        }
        try keys.remember(key, for: parameters.container)
        return true
    }

    static let checkText = "multidoc container key check"

    static func deriveKey(passphrase: String, salt: Data, costLog2: Int, blockSize: Int, parallelism: Int) throws(SyncError) -> SymmetricKey {
        // At most 256 MiB of memory (128·r·N·p bytes): a hostile record must not exhaust the device.
        guard (10...20).contains(costLog2), (1...16).contains(blockSize), (1...4).contains(parallelism), salt.count >= 8,
              128 * blockSize * (1 << costLog2) * parallelism <= 1 << 28 else {
            throw SyncError(.malformedFile, path: "identity/encryption", detail: "key derivation parameters out of range (cost 2^\(costLog2), r \(blockSize), p \(parallelism))")
        }
        do {
            return try KDF.Scrypt.deriveKey(
                from: Data(passphrase.utf8), salt: salt, outputByteCount: 32, rounds: 1 << costLog2, blockSize: blockSize,
                parallelism: parallelism)
        } catch {
            throw SyncError(.locked, path: "identity/encryption", detail: "key derivation failed: \(error)")
        }
    }

    static func encodeJSON(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return (try? encoder.encode(value)) ?? Data()
    }
}

extension Container {
    /// The digests of the files `device` wrote that this device accepts now, for its removal to
    /// pin (``Removal/pinned``): its logs up to `logs[document]`, its info files of those
    /// documents, and its admission records. Nil when they would not fit in one trust record
    /// (the removal then caps by number).
    public func pins(of device: DeviceID, logs: [DocumentID: UInt64]) -> [String: String]? {
        var pinned: [String: String] = [:]
        func pin(_ url: URL, kind: ContainerEnvelope.Kind, document: UUID, place: UInt64) {
            guard let name = Removal.pinName(kind: kind, document: document, place: place),
                  let bytes = try? Array(readFile(url, limit: TransactionLog.maximumFileSize)),
                  ContainerEnvelope.isEnvelope(Data(bytes.prefix(8))),
                  (try? open(bytes, kind: kind, document: document, writer: device, place: kind == .info ? nil : place, maximumPayload: bytes.count)) != nil
            else { return }
            pinned[name] = FileDigest.of(bytes)
        }
        for (id, last) in logs {
            for sequence in logSequences(id, device: device) where sequence <= last {
                pin(logURL(id, device: device, sequence: sequence), kind: .log, document: id.uuid, place: sequence)
            }
            pin(infoURL(id, device: device), kind: .info, document: id.uuid, place: 0)
        }
        let prefix = "\(Self.admissionPrefix)\(device)."
        for name in listNames(identityDirectory) where name.hasPrefix(prefix) {
            guard let number = UInt64(name.dropFirst(prefix.count)) else { continue }
            pin(identityDirectory.appendingPathComponent(name, isDirectory: false), kind: .admission, document: ContainerEnvelope.zero, place: number)
        }
        // About 80 bytes a file; a trust record is read up to maximumRecordSize.
        guard pinned.count * 96 < Self.maximumRecordSize / 2 else { return nil }
        return pinned
    }

    /// Whether this device holds the key of the encrypted container it syncs with.
    public var holdsContainerKey: Bool {
        guard let keys, let root = keys.policy.root else { return false }
        return keys.sealingKey(for: root.container) != nil
    }

    /// The highest number of the admission records `device` signed with `key` (the cap its
    /// removal keeps; files under its name it did not sign do not raise it).
    public func admissionCount(of device: DeviceID, key: Data) -> UInt64 {
        admissionNumbers(of: device, key: key).max() ?? 0
    }
}
