import Crypto
import Foundation
import Model

// Signing and sealing of container files (Docs/SECURITY.md, Docs/CONTAINER-FORMAT.md "Format 2").
// In an unsigned container nothing here changes a file. In a signed one every file this device
// writes is an envelope signed with its key (and, in an encrypted one, its payload sealed with the
// container key), and every file it reads must be signed by an admitted device, for the place it
// lies in. The place is in the signed header, so a file copied under another name fails.

/// Where a container file lies, as its path says: what it must be and who must have written it.
struct FilePlace: Sendable, Hashable {
    var kind: ContainerEnvelope.Kind
    var document: UUID
    var writer: DeviceID?
    /// The log's sequence, the baseline's coverage, the admission record's number; nil: any.
    var place: UInt64?
}

extension Container {
    /// What the file at `url` must be, from its path (nil: not a file of the layout).
    func filePlace(of url: URL) -> FilePlace? {
        guard let relative = relativePath(of: url) else { return nil }
        let parts = relative.split(separator: "/").map(String.init)
        let zero = ContainerEnvelope.zero
        switch (parts.count, parts.first) {
        case (2, "identity"):
            let name = parts[1]
            if name.hasSuffix(".json") {
                let stem = name.dropLast(5)
                return FilePlace(kind: .identity, document: zero, writer: DeviceID(String(stem.split(separator: ".").last ?? stem)), place: nil)
            }
            let pieces = name.split(separator: ".").map(String.init)
            if pieces.count == 3, pieces[0] == "admitted", let number = UInt64(pieces[2]) {
                return FilePlace(kind: .admission, document: zero, writer: DeviceID(pieces[1]), place: number)
            }
            if pieces.count == 2 { return FilePlace(kind: .identity, document: zero, writer: DeviceID(pieces[1]), place: nil) }
            return nil
        case (2, "devices"):
            return FilePlace(kind: .registry, document: zero, writer: DeviceID(String(parts[1].dropLast(5))), place: nil)
        case (2, "tombstones"):
            let pieces = parts[1].dropLast(5).split(separator: ".").map(String.init)
            guard pieces.count == 2, let document = DocumentID(pieces[0]) else { return nil }
            return FilePlace(kind: .tombstone, document: document.uuid, writer: DeviceID(pieces[1]), place: nil)
        case (_, "documents"):
            guard parts.count >= 3, let document = DocumentID(parts[1]) else { return nil }
            if parts.count == 3, parts[2].hasPrefix("info-") {
                return FilePlace(kind: .info, document: document.uuid, writer: DeviceID(String(parts[2].dropFirst(5).dropLast(5))), place: nil)
            }
            if parts.count == 4, parts[2] == "baselines", let dash = parts[3].lastIndex(of: "-") {
                let name = parts[3]
                let number = UInt64(name[name.index(after: dash)...].prefix { $0.isNumber })
                return FilePlace(kind: .baseline, document: document.uuid, writer: DeviceID(String(name[..<dash])), place: number)
            }
            if parts.count == 5, parts[2] == "logs" {
                return FilePlace(kind: .log, document: document.uuid, writer: DeviceID(parts[3]), place: Self.sequence(fromLogName: parts[4]))
            }
            return nil
        default:
            return nil
        }
    }

    // MARK: Writing

    /// A JSON record as the container's policy wants it written: nil in an unsigned container
    /// (the JSON itself is the file), else the signed (and sealed) envelope around it.
    func sealRecord(_ json: Data, at url: URL, place number: UInt64 = 0) throws(SyncError) -> [UInt8]? {
        guard let keys, let root = keys.policy.root, let place = filePlace(of: url) else { return nil }
        let header = ContainerEnvelope.Header(
            container: root.container, document: place.document, writer: keys.device.uuid, place: place.place ?? number,
            writtenAt: UInt64(clamping: Date().clampedMilliseconds))
        return try seal(ContainerEnvelope(kind: place.kind, header: header, payload: Array(json)))
    }

    /// The bytes of `envelope` as this container wants them: unchanged in an unsigned one; else
    /// its payload sealed (an encrypted container, content files) and the whole signed.
    /// - Throws: ``SyncError`` when this device has no usable key, or the container is
    ///   encrypted and this device does not hold the container key.
    public func seal(_ envelope: ContainerEnvelope) throws(SyncError) -> [UInt8] {
        guard let keys else { return envelope.encoded }
        return try keys.seal(envelope)
    }
}

extension ContainerKeys {
    /// The bytes of `envelope` as the container's policy wants them: unchanged in an unsigned
    /// container; else its payload sealed (an encrypted container, content files) and the whole
    /// signed with this device's key.
    /// - Throws: ``SyncError`` when this device has no usable key, or the container is
    ///   encrypted and this device does not hold the container key.
    public func seal(_ envelope: ContainerEnvelope) throws(SyncError) -> [UInt8] {
        let policy = self.policy
        guard !policy.undecided else {
            throw SyncError(.notAdmitted, path: "container", detail: "this device has not decided which root signs the container; nothing is written until `multidoc container trust FINGERPRINT` pins one")
        }
        guard let root = policy.root else { return envelope.encoded }
        let key = try signingKey()
        var sealed = envelope
        sealed.header.container = root.container
        sealed.header.fingerprint = key.fingerprint.bytes
        sealed.flags = ContainerEnvelope.signedFlag | ContainerEnvelope.checksumFlag
        if policy.encryption != nil, Container.isContent(envelope.kind) {
            guard let sealing = sealingKey(for: root.container) else {
                throw SyncError(.locked, path: "container \(root.container.uuidString.lowercased())", detail: "this device does not hold the container key, so it cannot write what its peers accept; run `multidoc container unlock` with the container's passphrase")
            }
            sealed.flags |= ContainerEnvelope.encryptedFlag
            do {
                let box = try ChaChaPoly.seal(envelope.payload, using: sealing, authenticating: sealed.associatedData)
                sealed.payload = Array(box.combined)
            } catch {
                throw SyncError(.writeFailed, path: "container \(root.container.uuidString.lowercased())", detail: "sealing failed: \(error)")
            }
        }
        sealed.signature = try key.signature(for: sealed.signedPart)
        return sealed.encoded
    }
}

extension ContainerPolicy {
    /// Whether a clear content file may be read in an encrypted container: a log this device saw
    /// there before it learned of the encryption, or a file a removal pinned. Never a time the
    /// writer put in the file.
    func mayBeClear(kind: ContainerEnvelope.Kind, document: UUID, writer: DeviceID, place: UInt64, bytes: [UInt8]) -> Bool {
        if kind == .log, place <= (clearLogs[LearnedTrust.clearLogKey(document, writer)] ?? 0) { return true }
        if let removal = removed[writer], removal.pinned != nil { return removal.accepts(kind: kind, document: document, place: place, bytes: bytes) }
        return false
    }
}

extension Container {

    /// Whether files of `kind` hold content an encrypted container seals (admission and
    /// identity records stay readable, so a device without the key can still check who wrote what).
    static func isContent(_ kind: ContainerEnvelope.Kind) -> Bool {
        switch kind {
        case .log, .baseline, .info, .tombstone, .registry: true
        case .identity, .admission: false
        }
    }

    // MARK: Reading

    /// The JSON of a record file read from `url`: the file itself when it is JSON (refused in a
    /// signed container, but for identity files, which ``identities()`` sorts out), else the
    /// payload of its envelope once checked by ``open(_:kind:document:writer:place:maximumPayload:)``.
    func openRecord(_ data: Data, at url: URL) throws -> Data {
        guard ContainerEnvelope.isEnvelope(data) else {
            if let keys, keys.policy.isSigned, filePlace(of: url)?.kind != .identity {
                throw LogDecodingError(reason: "refused: unsigned, in a signed container (claimed writer \(filePlace(of: url)?.writer?.description ?? "unknown"))")
            }
            return data
        }
        guard let place = filePlace(of: url) else { throw LogDecodingError(reason: "not a file of the container's layout") }
        let envelope = try open(
            Array(data), kind: place.kind, document: place.document, writer: place.writer, place: place.place, maximumPayload: data.count)
        return Data(envelope.payload)
    }

    /// Reads an envelope and checks it against the container's policy: its header against the
    /// place it lies in, its signature against the writer's admitted key, and opens a sealed
    /// payload with the container key. The envelope returned holds the cleartext payload.
    /// - Throws: ``LogDecodingError`` saying why (for the quarantine report).
    public func open(
        _ bytes: [UInt8], kind: ContainerEnvelope.Kind, document: UUID, writer: DeviceID?, place: UInt64?, maximumPayload: Int,
        refusing: Set<UUID> = []
    ) throws(LogDecodingError) -> ContainerEnvelope {
        var envelope = try ContainerEnvelope(decoding: bytes, maximumPayload: maximumPayload)
        try envelope.check(kind: kind, refusing: refusing, document: document, writer: writer?.uuid ?? envelope.header.writer, place: place)
        guard let keys else {
            guard !envelope.isEncrypted else { throw LogDecodingError(reason: "encrypted; this view of the container holds no key") }
            return envelope
        }
        let policy = keys.policy
        let claimed = DeviceID(envelope.header.writer)
        guard !policy.undecided else {
            throw LogDecodingError(reason: "refused: this device has not decided which root signs the container (`multidoc container trust`)")
        }
        guard let root = policy.root else {
            // An unsigned container, as far as this device knows: signatures are not checked
            // (the next identity check loads the policy that asks for them).
            if envelope.isEncrypted { try unseal(&envelope, keys: keys, container: envelope.header.container) }
            return envelope
        }
        guard envelope.isSigned else {
            throw LogDecodingError(reason: "refused: unsigned, in a signed container (claimed writer \(claimed))")
        }
        guard envelope.header.container == root.container else {
            throw LogDecodingError(reason: "refused: signed for container \(envelope.header.container.uuidString.lowercased()), not this one (claimed writer \(claimed)); a file copied from elsewhere")
        }
        let key = try policy.key(for: claimed, kind: kind, document: document, place: envelope.header.place, bytes: bytes).get()
        do {
            try Self.verify(envelope, bytes, key: key)
        } catch {
            throw LogDecodingError(reason: "refused: \(error.reason)")
        }
        if envelope.isEncrypted {
            try unseal(&envelope, keys: keys, container: root.container)
        } else if policy.encryption != nil, Self.isContent(kind), !policy.mayBeClear(kind: kind, document: document, writer: claimed, place: envelope.header.place, bytes: bytes) {
            throw LogDecodingError(reason: "refused: not encrypted, in an encrypted container (claimed writer \(claimed))")
        }
        return envelope
    }

    func unseal(_ envelope: inout ContainerEnvelope, keys: ContainerKeys, container: UUID) throws(LogDecodingError) {
        guard let sealing = keys.sealingKey(for: container) else {
            throw LogDecodingError(reason: "encrypted, and this device does not hold the container key (`multidoc container unlock`)")
        }
        do {
            let box = try ChaChaPoly.SealedBox(combined: envelope.payload)
            envelope.payload = Array(try ChaChaPoly.open(box, using: sealing, authenticating: envelope.associatedData))
        } catch {
            throw LogDecodingError(reason: "refused: its sealed payload does not open with the container key (tampered, or sealed with another key)")
        }
    }
}

extension Container {
    /// An envelope this device wrote, signed (and sealed) again as the container's policy now
    /// wants it; nil when it already is (sealed, or signed for this container where nothing
    /// asks for sealing). For files written before the container was signed or encrypted.
    func resealed(envelope data: Data) throws -> [UInt8]? {
        guard let policy = keys?.policy, let root = policy.root else { return nil }
        var envelope = try ContainerEnvelope(decoding: Array(data), maximumPayload: data.count)
        if envelope.isEncrypted || (envelope.isSigned && envelope.header.container == root.container && policy.encryption == nil) { return nil }
        envelope.flags = ContainerEnvelope.checksumFlag
        envelope.signature = nil
        return try seal(envelope)
    }

    /// Signs (and, in an encrypted container, seals) every file `device` wrote that is not yet
    /// so: done once when a device first sees its container signed or encrypted. Logs keep
    /// their content and name (importing one twice changes nothing), so peers that applied the
    /// unsigned file lose nothing, and peers that did not can now accept it; in an encrypted
    /// container the cleartext copies are gone. Returns how many files were re-sealed and the
    /// ones that could not be.
    public func resealOwnFiles(device: DeviceID) -> (resealed: Int, problems: [QuarantinedFile]) {
        guard let keys, let root = keys.policy.root else { return (0, []) }
        var urls = [deviceRecordURL(device)]
        // The identity files it seeded or moved to format 2: signed, they count in the election
        // of a signed container like any other identity an admitted device wrote.
        urls += listNames(identityDirectory).filter { $0 == "\(device).json" || $0.hasSuffix(".\(device).json") }
            .map { identityDirectory.appendingPathComponent($0, isDirectory: false) }
        urls += listNames(tombstonesDirectory).filter { $0.hasSuffix(".\(device).json") }.map { tombstonesDirectory.appendingPathComponent($0, isDirectory: false) }
        for id in documentIDs() {
            urls.append(infoURL(id, device: device))
            urls += listNames(baselinesDirectory(id)).filter { $0.hasPrefix("\(device)-") }.map { baselinesDirectory(id).appendingPathComponent($0, isDirectory: false) }
            urls += logSequences(id, device: device).map { logURL(id, device: device, sequence: $0) }
        }
        var count = 0
        var problems: [QuarantinedFile] = []
        for url in urls where FileManager.default.fileExists(atPath: url.path) {
            do {
                let data = try readFile(url, limit: TransactionLog.maximumFileSize)
                let sealed: [UInt8]?
                if ContainerEnvelope.isEnvelope(data) {
                    sealed = try resealed(envelope: data)
                } else if let place = filePlace(of: url), place.kind == .log, let sequence = place.place {
                    let id = DocumentID(place.document)
                    let log = try TransactionLog.decode(data, document: id, device: device, sequence: sequence)
                    sealed = try seal(log.envelope(container: root.container))
                } else {
                    sealed = try sealRecord(data, at: url, place: filePlace(of: url)?.place ?? 0)
                }
                guard let sealed else { continue }
                try writeRaw(Data(sealed), to: url)
                count += 1
            } catch {
                problems.append(QuarantinedFile(url: url, reason: "not re-sealed: \(Self.summarize(error))"))
            }
        }
        return (count, problems)
    }
}
