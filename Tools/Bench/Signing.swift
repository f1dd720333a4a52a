import Engine
import Foundation
import Model
import Sync

/// What signing and sealing cost per log: one save's log (a text edit of a few words) signed
/// and checked, then sealed and opened, on a real signed (then encrypted) container folder.
enum SigningCost {
    struct Result {
        var signMicroseconds: Double
        var verifyMicroseconds: Double
        var sealMicroseconds: Double
        var openMicroseconds: Double
        var plainMicroseconds: Double
    }

    static func measure(folder: URL, logs: Int) throws -> Result {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let device = DeviceID(UUID())
        let keys = ContainerKeys(device: device, key: .generate())
        let container = Container(root: folder, keys: keys)
        let id = UUID()
        _ = try container.checkIdentity(remembered: nil, canSeed: { true }, device: device, now: Date(), newID: id)
        let document = DocumentID(UUID())
        var log = TransactionLog(
            format: 2, document: document, device: device, sequence: 1, stamp: Stamp(wall: 1, counter: 0, device: device),
            committedAt: Date(), deviceName: "bench",
            changes: [LoggedChange(op: .update, id: ObjectID("text"), entity: "TextEntry", attributes: ["modified": .date(Date())])])
        log.dependencies = [:]
        let envelope = log.envelope(container: id)

        func time(_ body: () throws -> Void) rethrows -> Double {
            let start = ContinuousClock.now
            for _ in 0..<logs { try body() }
            let elapsed = ContinuousClock.now - start
            return (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(logs)
        }
        func open(_ bytes: [UInt8]) throws {
            _ = try container.open(bytes, kind: .log, document: document.uuid, writer: device, place: 1, maximumPayload: 1 << 20)
        }

        let plainBytes = envelope.encoded
        let plain = try time { try open(plainBytes) }
        _ = try container.sign(container: id, now: Date())
        var signed: [UInt8] = []
        let sign = try time { signed = try container.seal(envelope) }
        let verify = try time { try open(signed) }
        _ = try container.encrypt(passphrase: "benchmark", now: Date(), costLog2: 10)
        var sealed: [UInt8] = []
        let seal = try time { sealed = try container.seal(envelope) }
        let opened = try time { try open(sealed) }
        return Result(signMicroseconds: sign, verifyMicroseconds: verify, sealMicroseconds: seal, openMicroseconds: opened, plainMicroseconds: plain)
    }
}
