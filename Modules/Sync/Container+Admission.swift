import _CryptoExtras
import Crypto
import FileIO
import Foundation
import Model

extension Container {
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

    func admissionEntries(_ names: [String], problems: inout [QuarantinedFile]) -> [AdmissionEntry] {
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
    func readEnvelope(_ url: URL, kind: ContainerEnvelope.Kind) throws -> (ContainerEnvelope, [UInt8]) {
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
