#if canImport(Glibc)
import Glibc
#endif
import Crypto
import FileIO
import Foundation
import Model
import Synchronization

/// What a device has accepted of a signed container's trust, kept in its root
/// (`<root>/trust.json`, by ``ContainerKeys``). It only moves forward: a record missing from the
/// folder later, an older copy of `identity/` put back, or a flood of junk records changes none
/// of it (Docs/SECURITY.md, "What the device keeps").
public struct LearnedTrust: Codable, Sendable, Hashable {
    public var root: SigningRoot
    /// Every device admitted, as first accepted.
    public var admitted: [DeviceID: AdmittedDevice] = [:]
    /// Every device removed. A removed device stays removed whatever the folder holds later.
    public var removed: [DeviceID: Removal] = [:]
    /// The trust records accepted (the root's signing record, admission records, the encryption
    /// record), by name, as read: written back when the folder loses one.
    public var records: [String: Data] = [:]
    /// The encryption record accepted: once seen, every content file must be sealed.
    public var encryption: EncryptionParameters?
    /// For a device that synced with the container before it was encrypted: per
    /// `<document>/<writer>`, the highest log that was there when it learned of the encryption,
    /// and so may be clear. A device meeting the container encrypted has none.
    public var clearLogs: [String: UInt64] = [:]

    public init(root: SigningRoot) { self.root = root }

    /// `self` with what `other` learned of the same root added (two processes of one device
    /// learning at once both keep what they learned).
    func merged(with other: LearnedTrust) -> LearnedTrust {
        guard other.root == root else { return self }
        var merged = self
        merged.admitted.merge(other.admitted) { mine, _ in mine }
        merged.removed.merge(other.removed) { mine, _ in mine }
        merged.records.merge(other.records) { mine, _ in mine }
        if merged.encryption == nil {
            merged.encryption = other.encryption
            merged.clearLogs = other.clearLogs
        }
        return merged
    }

    /// Whether `publicKey` signs, as its root, a container whose trust a device learned (its
    /// `trust.json` at `url`).
    public static func isRoot(_ publicKey: [UInt8], learnedIn url: URL) -> Bool {
        TrustFile.load(url)?.containers.values.contains { $0.root.key.elementsEqual(publicKey) } ?? false
    }

    static func clearLogKey(_ document: UUID, _ writer: DeviceID) -> String { "\(DocumentID(document))/\(writer)" }
}

/// `<root>/trust.json`: the trust learned per container, and the root the user said to expect.
struct TrustFile: Codable, Sendable, Hashable {
    var format = 1
    /// The root fingerprint `multidoc init --expect-root` or `container trust` named: a
    /// container met for the first time is trusted only under this root.
    var expectedRoot: String?
    var containers: [String: LearnedTrust] = [:]

    static let maximumSize = 64 * 1024 * 1024

    static func load(_ url: URL) -> TrustFile? {
        guard let data = try? AtomicFile.read(url, limit: maximumSize, followSymlinks: false) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return try? decoder.decode(TrustFile.self, from: data)
    }
}

/// A digest of a file's bytes, as pinned by removals and kept by the trust a device learned:
/// SHA-256's first 16 bytes, base64.
enum FileDigest {
    static func of(_ bytes: some DataProtocol) -> String {
        Data(SHA256.hash(data: Data(bytes)).prefix(16)).base64EncodedString()
    }
}

extension Removal {
    /// The name a file of the removed device has among ``pinned``.
    static func pinName(kind: ContainerEnvelope.Kind, document: UUID, place: UInt64) -> String? {
        switch kind {
        case .log: "log/\(DocumentID(document))/\(place)"
        case .info: "info/\(DocumentID(document))"
        case .admission: "admission/\(place)"
        default: nil
        }
    }

    /// Whether `bytes`, a file of the removed device of `kind` at `place`, is one it wrote
    /// before its removal: pinned by content where the removal pins, else within its caps.
    func accepts(kind: ContainerEnvelope.Kind, document: UUID, place: UInt64, bytes: [UInt8]) -> Bool {
        if let pinned {
            guard let name = Self.pinName(kind: kind, document: document, place: place), let digest = pinned[name] else { return false }
            return FileDigest.of(bytes) == digest
        }
        switch kind {
        case .log: return place <= (logs[DocumentID(document)] ?? 0)
        case .info: return logs[DocumentID(document)] != nil
        case .admission: return place <= admissions
        default: return false
        }
    }
}

extension ContainerKeys {
    /// The trust this device learned of container `id` (nil: none yet).
    public func learned(_ id: UUID) -> LearnedTrust? {
        reloadTrustIfChanged()
        return state.withLock { $0.trust.containers[id.uuidString.lowercased()] }
    }

    /// Reads the trust file again when another process of this device changed it (a daemon
    /// sees a root the CLI pinned, an admission the CLI learned).
    private func reloadTrustIfChanged() {
        guard let trustURL else { return }
        var info = stat()
        guard stat(trustURL.path, &info) == 0 else { return }
        let stamp = [Int64(info.st_ino), Int64(info.st_size), Int64(info.st_mtim.tv_sec), Int64(info.st_mtim.tv_nsec)]
        guard state.withLock({ $0.trustStamp != stamp }) else { return }
        guard let file = TrustFile.load(trustURL) else { return }
        state.withLock {
            $0.trust = file
            $0.trustStamp = stamp
        }
    }

    /// The root fingerprint the user said to expect, if any.
    public var expectedRoot: String? { state.withLock { $0.trust.expectedRoot } }

    /// Keeps `trust` for container `id`, merged with what another process of this device kept
    /// meanwhile, in memory and in the trust file. Returns the trust kept.
    @discardableResult
    func learn(_ trust: LearnedTrust, for id: UUID) throws(SyncError) -> LearnedTrust {
        try updateTrustFile { file in
            let key = id.uuidString.lowercased()
            // A root pinned meanwhile (`container trust`) stands over what was learned under another.
            let kept = file.containers[key].map { trust.root == $0.root ? trust.merged(with: $0) : $0 } ?? trust
            file.containers[key] = kept
        }
        return learned(id) ?? trust
    }

    /// Pins container `id` to `root` (`multidoc container trust`), forgetting what was learned
    /// under another root; `expected`: also the root a container met later must have.
    public func pin(_ root: SigningRoot?, for id: UUID?, expected: String?) throws(SyncError) {
        try updateTrustFile { file in
            if let expected { file.expectedRoot = expected }
            if let root, let id {
                let key = id.uuidString.lowercased()
                if file.containers[key]?.root != root { file.containers[key] = LearnedTrust(root: root) }
            }
        }
    }

    private func updateTrustFile(_ change: (inout TrustFile) -> Void) throws(SyncError) {
        guard let trustURL else {
            state.withLock { change(&$0.trust) }
            return
        }
        do {
            let lock = try FileLock(url: trustURL.deletingLastPathComponent().appendingPathComponent(".trust.lock", isDirectory: false))
            try lock.withLock { () throws(SyncError) in
                var file = TrustFile.load(trustURL) ?? state.withLock { $0.trust }
                change(&file)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                encoder.dateEncodingStrategy = .millisecondsSince1970
                do {
                    try AtomicFile.write(try encoder.encode(file), to: trustURL, mode: 0o600)
                } catch {
                    throw SyncError(.writeFailed, path: trustURL.path, detail: "cannot keep the trust this device learned: \(error)")
                }
                state.withLock { $0.trust = file }
            }
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.writeFailed, path: trustURL.path, detail: "cannot lock the trust file: \(error)")
        }
    }
}
