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

extension Container {
    static let signingPrefix = "signing."
    static let admissionPrefix = "admitted."
    static let encryptionPrefix = "encryption."
    /// Whether a name of the identity folder is a trust record's, not an identity's.
    static func isTrustRecord(_ name: String) -> Bool {
        [signingPrefix, admissionPrefix, encryptionPrefix].contains { name.hasPrefix($0) }
    }

    // MARK: Loading

    /// Reads the signing, admission and encryption records of container `id` and sets the
    /// policy ``keys`` holds. `remembered`: the root this device trusted before (for `id`, it
    /// wins over whatever signing records the container holds now; for the container `id`
    /// replaced, a signing record of `id` with the same key wins over the others). Returns the root in force (nil: the
    /// container is unsigned) and the records not taken.
    @discardableResult
    public func loadTrust(container id: UUID, remembered: SigningRoot?) -> (root: SigningRoot?, problems: [QuarantinedFile]) {
        var problems: [QuarantinedFile] = []
        let names = listNames(identityDirectory)
        var candidates: [(root: SigningRoot, at: Date)] = []
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
                candidates.append((SigningRoot(container: id, device: record.device, key: record.key), record.signedAt))
            } catch {
                problems.append(QuarantinedFile(url: url, reason: "signing record not taken: \(Self.summarize(error))"))
            }
        }
        let earliest = candidates.min { ($0.at, KeyFingerprint(publicKey: $0.root.key)) < ($1.at, KeyFingerprint(publicKey: $1.root.key)) }
        // A container that follows one this device remembers signed (its root reset it) is
        // signed by the same key: that record wins over any other, earlier or not.
        let sameKey = candidates.filter { $0.root.key == remembered?.key }.min { $0.at < $1.at }
        guard let root = remembered?.container == id ? remembered : (sameKey ?? earliest)?.root else {
            keys?.setPolicy(ContainerPolicy())
            return (nil, problems)
        }
        var policy = ContainerPolicy(root: root)
        let admissions = admissionEntries(names, problems: &problems)
        (policy.admitted, policy.removed) = Self.admitted(root: root, entries: admissions, problems: &problems)
        keys?.setPolicy(policy)
        // Encryption: the earliest record signed by an admitted device.
        var encryption: EncryptionParameters?
        for name in names where name.hasPrefix(Self.encryptionPrefix) {
            let url = identityDirectory.appendingPathComponent(name, isDirectory: false)
            do {
                let data = try readFile(url, limit: Self.maximumRecordSize)
                let envelope = try open(Array(data), kind: .identity, document: ContainerEnvelope.zero,
                                        writer: DeviceID(String(name.dropFirst(Self.encryptionPrefix.count))), place: nil, maximumPayload: data.count)
                let parameters = try Self.decodeJSON(EncryptionParameters.self, from: Data(envelope.payload))
                guard parameters.container == id else { continue }
                if encryption.map({ parameters.since < $0.since }) ?? true { encryption = parameters }
            } catch {
                problems.append(QuarantinedFile(url: url, reason: "encryption record not taken: \(Self.summarize(error))"))
            }
        }
        policy.encryption = encryption
        keys?.setPolicy(policy)
        return (root, problems)
    }

    /// One admission record as read: its writer, number, content and bytes (checked later,
    /// against the keys admitted so far).
    struct AdmissionEntry {
        var url: URL
        var writer: DeviceID
        var number: UInt64
        var record: AdmissionRecord
        var envelope: ContainerEnvelope
        var bytes: [UInt8]
    }

    /// The most admission records read: a container flooded with them is refused beyond this
    /// (reported), rather than read on every pass.
    static let maximumAdmissionRecords = 4096

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
        let names = names.filter { $0.hasPrefix(Self.admissionPrefix) }
        if names.count > Self.maximumAdmissionRecords {
            problems.append(QuarantinedFile(url: identityDirectory, reason: "\(names.count) admission records, more than the \(Self.maximumAdmissionRecords) a device reads; the rest are not taken"))
        }
        return names.prefix(Self.maximumAdmissionRecords).compactMap { name in
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
                problems.append(QuarantinedFile(url: url, reason: "admission record not taken: \(Self.summarize(error))"))
                return nil
            }
        }.sorted { ($0.writer, $0.number) < ($1.writer, $1.number) }
    }

    /// The admitted and removed devices: starting from the root, every record signed by a
    /// device admitted so far (within its removal's cap, if removed) adds its admissions; then
    /// removals cap their devices' records, and the whole is done again until nothing changes.
    static func admitted(
        root: SigningRoot, entries: [AdmissionEntry], problems: inout [QuarantinedFile]
    ) -> (admitted: [DeviceID: AdmittedDevice], removed: [DeviceID: Removal]) {
        var caps: [DeviceID: UInt64] = [:]
        var admitted: [DeviceID: AdmittedDevice] = [:]
        var removed: [DeviceID: Removal] = [:]
        var valid: [Bool] = []
        // Each record's signature is checked once per key (a device's key never changes here):
        // a flood of forged records costs one check each, not one per round.
        var checked: [Int: (key: Data, good: Bool)] = [:]
        func signatureHolds(_ index: Int, _ key: Data) -> Bool {
            if let done = checked[index], done.key == key { return done.good }
            let good = (try? verify(entries[index].envelope, entries[index].bytes, key: key)) != nil
            checked[index] = (key, good)
            return good
        }
        for _ in 0...entries.count {
            admitted = [root.device: AdmittedDevice(device: root.device, key: root.key)]
            valid = Array(repeating: false, count: entries.count)
            var grew = true
            while grew {
                grew = false
                for (index, entry) in entries.enumerated() where !valid[index] {
                    guard let signer = admitted[entry.writer], caps[entry.writer].map({ entry.number <= $0 }) ?? true,
                          signatureHolds(index, signer.key) else { continue }
                    valid[index] = true
                    grew = true
                    for device in entry.record.admit where admitted[device.device] == nil { admitted[device.device] = device }
                }
            }
            removed = [:]
            for (index, entry) in entries.enumerated() where valid[index] {
                for removal in entry.record.remove where admitted[removal.device]?.key == removal.key && removed[removal.device] == nil {
                    removed[removal.device] = removal
                }
            }
            let newCaps = removed.mapValues(\.admissions)
            if newCaps == caps { break }
            caps = newCaps
        }
        for (index, entry) in entries.enumerated() where !valid[index] {
            problems.append(QuarantinedFile(url: entry.url,
                                            reason: "admission record not taken: signed by device \(entry.writer), which is not admitted (or was removed before it)"))
        }
        for device in removed.keys { admitted[device] = nil }
        return (admitted, removed)
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
                  let key = try? keys?.policy.key(for: writer, kind: .identity, document: ContainerEnvelope.zero, place: 0).get(),
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
