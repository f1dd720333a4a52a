import Foundation
import Model
@testable import Sync

/// Writes into a container as someone with write access to the shared folder does: with a key
/// of their own, with a device's key they took (a root's `device.key`), or with none. Used by
/// the trust tests to make the files a careful adversary would; nothing here checks anything.
struct Forger {
    let container: Container
    let device: DeviceID
    let key: DeviceKey

    /// With the key of the device whose root is `root` (a removed device, say).
    init(container path: String, stealingFrom root: String) throws {
        let device = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: root + "/device.json"))) as? [String: Any]
        guard let text = device?["id"] as? String, let id = DeviceID(text) else { throw ForgeryError.noDevice(root) }
        self.device = id
        self.key = try DeviceKey.loadOrCreate(URL(fileURLWithPath: root + "/device.key"))
        container = Container(root: URL(fileURLWithPath: path), keys: ContainerKeys(device: id, key: key))
    }

    /// With a new key of the attacker's, as device `device`.
    init(container path: String, device: DeviceID) {
        self.device = device
        key = DeviceKey.generate()
        container = Container(root: URL(fileURLWithPath: path), keys: ContainerKeys(device: device, key: key))
    }

    var publicKey: Data { Data(key.publicKey) }
    var fingerprint: String { key.fingerprint.description }
    var identity: URL { container.identityDirectory }

    /// An envelope of `kind` signed with this forger's key (never sealed), written at `url`.
    func writeSigned(
        kind: ContainerEnvelope.Kind, containerID: UUID, document: UUID = ContainerEnvelope.zero, place: UInt64, writtenAt: UInt64,
        payload: Data, to url: URL
    ) throws {
        var envelope = ContainerEnvelope(
            kind: kind,
            header: .init(container: containerID, document: document, writer: device.uuid, place: place, writtenAt: writtenAt,
                          fingerprint: key.fingerprint.bytes),
            payload: Array(payload))
        envelope.flags = ContainerEnvelope.signedFlag | ContainerEnvelope.checksumFlag
        envelope.signature = try key.signature(for: envelope.signedPart)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(envelope.encoded).write(to: url)
    }

    /// A signing record making this forger's key the root of container `id`, dated `signedAt`.
    func signingRecord(of id: UUID, signedAt: Date) throws {
        let record = SigningRecord(container: id, device: device, key: publicKey, signedAt: signedAt)
        try writeSigned(kind: .identity, containerID: id, place: 0, writtenAt: 0, payload: Container.encodeJSON(record),
                        to: identity.appendingPathComponent(Container.signingPrefix + device.description))
    }

    /// An admission record numbered `number`, admitting `admit` and removing `remove`.
    func admissionRecord(of id: UUID, number: UInt64, admit: [AdmittedDevice], remove: [Removal] = []) throws {
        try writeSigned(kind: .admission, containerID: id, place: number, writtenAt: 0,
                        payload: Container.encodeJSON(AdmissionRecord(admit: admit, remove: remove)),
                        to: identity.appendingPathComponent("\(Container.admissionPrefix)\(device).\(number)"))
    }

    /// This forger's log `sequence` of `document`, decoded, changed by `change` and signed again
    /// under the same name: the rewrite of a log its writer made before.
    func rewriteLog(of id: UUID, document: DocumentID, sequence: UInt64, _ change: (inout TransactionLog) -> Void) throws {
        let url = container.logURL(document, device: device, sequence: sequence)
        let bytes = Array(try Data(contentsOf: url))
        let envelope = try ContainerEnvelope(decoding: bytes, maximumPayload: bytes.count)
        var log = try TransactionLog.decoded(envelope, document: document, device: device, sequence: sequence)
        change(&log)
        let rewritten = log.envelope(container: id)
        try writeSigned(kind: .log, containerID: id, document: document.uuid, place: sequence, writtenAt: rewritten.header.writtenAt,
                        payload: Data(rewritten.payload), to: url)
    }

    /// A tombstone of `document` signed by this forger and not sealed, dated `writtenAt`.
    func clearTombstone(of id: UUID, document: DocumentID, writtenAt: UInt64) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        let tombstone = DocumentTombstone(document: document, deletedBy: device, deletedAt: Date(timeIntervalSince1970: 0))
        try writeSigned(kind: .tombstone, containerID: id, document: document.uuid, place: 0, writtenAt: writtenAt,
                        payload: try encoder.encode(tombstone), to: container.tombstoneURL(document, device: device))
    }
}

enum ForgeryError: Error { case noDevice(String) }
