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
        restoreRecords(trust.records, problems: &load.problems)
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
    /// every device. Each one written back is reported among `problems`.
    private func restoreRecords(_ records: [String: Data], problems: inout [QuarantinedFile]) {
        for (name, bytes) in records.sorted(by: { $0.key < $1.key }) {
            let url = identityDirectory.appendingPathComponent(name, isDirectory: false)
            if let present = try? readFile(url, limit: Self.maximumRecordSize), present == bytes { continue }
            do {
                try writeRaw(bytes, to: url)
                problems.append(QuarantinedFile(url: url, reason: "trust record missing from the folder (or changed there): written back as this device accepted it"))
            } catch {
                problems.append(QuarantinedFile(url: url, reason: "trust record missing from the folder, and not written back: \(error.description)"))
            }
        }
    }

    /// Per `<document>/<writer>`, the highest log in the container now that reads as that
    /// writer's, signed by it (the policy before the encryption was learned): a file merely
    /// named like a log (junk planted at sequence 99,999,999) raises no floor.
    func logHeads() -> [String: UInt64] {
        var heads: [String: UInt64] = [:]
        for id in documentIDs() {
            for device in logDevices(id) {
                for sequence in logSequences(id, device: device).reversed() {
                    guard let bytes = try? Array(readFile(logURL(id, device: device, sequence: sequence), limit: TransactionLog.maximumFileSize)),
                          (try? open(bytes, kind: .log, document: id.uuid, writer: device, place: sequence, maximumPayload: bytes.count)) != nil
                    else { continue }
                    heads[LearnedTrust.clearLogKey(id.uuid, device)] = sequence
                    break
                }
            }
        }
        return heads
    }
}
