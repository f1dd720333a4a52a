#if canImport(Glibc)
import Glibc
#endif
import Crypto
import FileIO
import Foundation
import Model
import Synchronization

/// A device admitted to a signed container: its UUID and Ed25519 public key.
public struct AdmittedDevice: Codable, Sendable, Hashable {
    public var device: DeviceID
    public var key: Data

    public init(device: DeviceID, key: Data) {
        self.device = device
        self.key = key
    }

    public var fingerprint: KeyFingerprint { KeyFingerprint(publicKey: key) }
}

/// A device removed from a signed container. What it wrote before its removal stays accepted,
/// as far as the remover had it: the files `pinned` names, by content (a log, an info file or
/// an admission record it rewrites afterwards, same name or not, is refused). Removals written
/// without pins cap by number instead: logs up to `logs[document]` (and the info files of those
/// documents), admission records up to `admissions`. Anything else signed by its key, however
/// it is dated, is refused.
public struct Removal: Codable, Sendable, Hashable {
    public var device: DeviceID
    public var key: Data
    public var logs: [DocumentID: UInt64]
    public var admissions: UInt64
    /// The files accepted, by ``pinName(kind:document:place:)``: the digest of each.
    public var pinned: [String: String]?

    public init(device: DeviceID, key: Data, logs: [DocumentID: UInt64], admissions: UInt64, pinned: [String: String]? = nil) {
        self.device = device
        self.key = key
        self.logs = logs
        self.admissions = admissions
        self.pinned = pinned
    }
}

/// The root of a signed container's trust: the device that signed it first, and its key.
/// A device remembers it the first time it sees the container signed and from then on trusts
/// no other (a signing record removed or replaced in the container changes nothing).
public struct SigningRoot: Codable, Sendable, Hashable {
    public var container: UUID
    public var device: DeviceID
    public var key: Data

    public init(container: UUID, device: DeviceID, key: Data) {
        self.container = container
        self.device = device
        self.key = key
    }
}

/// An encrypted container's key derivation: scrypt(passphrase, salt) with these parameters,
/// and `check`, a sealed known text that tells a right passphrase from a wrong one.
public struct EncryptionParameters: Codable, Sendable, Hashable {
    public var container: UUID
    public var salt: Data
    /// log₂ of scrypt's N.
    public var costLog2: Int
    public var blockSize: Int
    public var parallelism: Int
    public var check: Data
    /// From when every content file must be sealed (files written before stay readable).
    public var since: Date
}

/// What a container demands of its files, as this device knows it.
public struct ContainerPolicy: Sendable, Hashable {
    /// Nil: an unsigned container (every file is taken on its path's word, as in format 1).
    public var root: SigningRoot?
    public var admitted: [DeviceID: AdmittedDevice] = [:]
    public var removed: [DeviceID: Removal] = [:]
    public var encryption: EncryptionParameters?
    /// Per `<document>/<writer>`, the highest log that may be clear in an encrypted container
    /// (``LearnedTrust/clearLogs``).
    public var clearLogs: [String: UInt64] = [:]
    /// The roots a device meeting the container for the first time found and could not choose
    /// between (signing records of two keys, or none of the root it was told to expect): until
    /// the user pins one (`multidoc container trust`), nothing is read or written.
    public var undecided = false

    public init(root: SigningRoot? = nil) { self.root = root }

    public var isSigned: Bool { root != nil }

    /// The key whose signature a file of `kind` at `place` from `writer` must carry, or why
    /// no key is accepted. `bytes`: the file, which a removed device's pins are checked against.
    func key(for writer: DeviceID, kind: ContainerEnvelope.Kind, document: UUID, place: UInt64, bytes: [UInt8]) -> Result<Data, LogDecodingError> {
        if let admitted = admitted[writer] { return .success(admitted.key) }
        if let removal = removed[writer] {
            if removal.accepts(kind: kind, document: document, place: place, bytes: bytes) { return .success(removal.key) }
            return .failure(LogDecodingError(reason: "refused: claims device \(writer), which was removed from the container (fingerprint \(KeyFingerprint(publicKey: removal.key))); only what it wrote before its removal is accepted"))
        }
        return .failure(LogDecodingError(reason: "refused: claims device \(writer), which is not admitted to this signed container (`multidoc device list` shows who asks to join)"))
    }
}

/// A device's keys for the container it syncs with: its signing key (`<root>/device.key`),
/// the container key of an encrypted container (`<root>/container.key`), and the container's
/// policy as last read (``Container/loadTrust(remembered:)``). Shared by every copy of a
/// ``Container``; the policy changes when admission records arrive.
public final class ContainerKeys: Sendable {
    public let device: DeviceID
    let signer: Result<DeviceKey, SyncError>
    /// Where the container key is kept (nil: nowhere; tests).
    let containerKeyURL: URL?
    /// Where the trust this device learned is kept (nil: in memory only; tests, tools).
    let trustURL: URL?
    /// The container keys held, raw (CryptoKit's key type is not Sendable), and the trust learned.
    let state: Mutex<(policy: ContainerPolicy, sealing: [UUID: Data], trust: TrustFile, trustStamp: [Int64])>

    static let containerKeyTag = "multidoc-container-key-1"

    /// Loads (or makes) the device key at `keyURL` and any container key at `containerKeyURL`.
    /// `trustURL`: the trust file (``LearnedTrust``).
    public init(device: DeviceID, keyURL: URL, containerKeyURL: URL?, trustURL: URL? = nil) {
        self.device = device
        self.signer = Result { () throws(SyncError) in try DeviceKey.loadOrCreate(keyURL) }
        self.containerKeyURL = containerKeyURL
        self.trustURL = trustURL
        self.state = Mutex((ContainerPolicy(), containerKeyURL.map(Self.loadContainerKeys) ?? [:], trustURL.flatMap(TrustFile.load) ?? TrustFile(), []))
    }

    /// Keys held in memory only (tests, tools).
    public init(device: DeviceID, key: DeviceKey) {
        self.device = device
        self.signer = .success(key)
        self.containerKeyURL = nil
        self.trustURL = nil
        self.state = Mutex((ContainerPolicy(), [:], TrustFile(), []))
    }

    public var policy: ContainerPolicy { state.withLock { $0.policy } }
    public func setPolicy(_ policy: ContainerPolicy) { state.withLock { $0.policy = policy } }

    /// This device's signing key, or why there is none.
    public func signingKey() throws(SyncError) -> DeviceKey { try signer.get() }

    /// The key of encrypted container `id`, if this device holds it.
    func sealingKey(for id: UUID) -> SymmetricKey? { state.withLock { $0.sealing[id] }.map { SymmetricKey(data: $0) } }

    /// Keeps `key` as container `id`'s key, in memory and in `<root>/container.key` (0600).
    func remember(_ key: SymmetricKey, for id: UUID) throws(SyncError) {
        let raw = key.withUnsafeBytes { Data($0) }
        let all = state.withLock { state in
            state.sealing[id] = raw
            return state.sealing
        }
        guard let containerKeyURL else { return }
        let lines = all.sorted { $0.key.uuidString < $1.key.uuidString }.map { id, key in
            "\(Self.containerKeyTag) \(id.uuidString.lowercased()) \(key.base64EncodedString())\n"
        }
        do {
            try AtomicFile.write(Data(lines.joined().utf8), to: containerKeyURL, mode: 0o600)
        } catch {
            throw SyncError(.keyUnusable, path: containerKeyURL.path, detail: "cannot keep the container key: \(error.description)")
        }
    }

    private static func loadContainerKeys(_ url: URL) -> [UUID: Data] {
        guard let data = try? AtomicFile.read(url, limit: 64 * 1024, followSymlinks: false) else { return [:] }
        var keys: [UUID: Data] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == containerKeyTag, let id = UUID(uuidString: String(parts[1])),
                  let raw = Data(base64Encoded: String(parts[2])), raw.count == 32 else { continue }
            keys[id] = raw
        }
        return keys
    }
}
