import _CryptoExtras
import Crypto
import FileIO
import Foundation
import Model

extension Container {
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
