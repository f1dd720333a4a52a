import Foundation
import Model
import Storage
@testable import Sync
import Testing
import TestSupport

/// Every format 2 file a device writes carries a checksum (ContainerEnvelope, flag bit 2): a
/// damaged file is refused and named, never decoded into other content. Without it, 40 of 60
/// single-bit flips in a log passed `container verify` and 8 gave a peer another text.
@Suite struct ChecksumTests {
    let doc = DocumentID(Fixed.uuid(0xC5C5))
    let format2 = LogFormat(version: 2, container: Fixed.uuid(7))

    /// Flips one bit of `good`, writes it to `url` and reads it back with `read`: the file is
    /// either refused or reads as exactly `original`. Returns how many flips were refused.
    func flips<Value: Equatable>(
        of good: Data, at bits: [Int], into url: URL, original: Value, read: () throws -> Value
    ) throws -> Int {
        var refused = 0
        for bit in bits {
            var bytes = good
            bytes[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
            try bytes.write(to: url)
            do {
                let same = try read() == original
                #expect(same, "bit \(bit) (byte \(bit / 8)) flipped: the file decodes to other content")
            } catch {
                refused += 1
            }
        }
        try good.write(to: url)
        return refused
    }

    @Test func everyBitFlippedInASmallLogIsRefusedOrChangesNothing() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2)
        try a.create(doc, name: "Sums", text: "one small edit", now: harness.clock.now())
        try a.edit(doc, text: "one small edit, and another")
        let container = Container(root: harness.container)
        let url = container.logURL(doc, device: a.identity.id, sequence: 2)
        let good = try Data(contentsOf: url)
        #expect(good.count < 400, "not a small log: \(good.count) bytes")
        let original = try container.readLog(doc, device: a.identity.id, sequence: 2)
        let refused = try flips(of: good, at: Array(0..<(good.count * 8)), into: url, original: original) {
            try container.readLog(doc, device: a.identity.id, sequence: 2)
        }
        #expect(refused == good.count * 8, "\(good.count * 8 - refused) of \(good.count * 8) flips were read")
    }

    @Test func fiveHundredBitsFlippedInABaselineAreRefusedOrChangeNothing() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2)
        try a.create(doc, name: "Sums", text: "The quick brown fox", now: harness.clock.now())
        try a.edit(doc, text: "The quick brown fox jumps ✓ over the lazy dog")
        try a.save(doc, [.insert(ObjectID("row"), entity: "Row", attributes: ["n": .int(-42), "x": .double(2.5), "on": .bool(true)])])
        let store = try a.store(doc)
        let url = try a.replicator.writeBaseline(doc, from: store)
        store.close()
        let container = Container(root: harness.container)
        let good = try Data(contentsOf: url)
        let original = try container.readBaseline(url)
        var random = SeededGenerator(seed: 0xC5C5_0500)
        let bits = (0..<500).map { _ in Int.random(in: 0..<(good.count * 8), using: &random) }
        let refused = try flips(of: good, at: bits, into: url, original: original) { try container.readBaseline(url) }
        #expect(refused == bits.count, "\(bits.count - refused) of \(bits.count) flips were read")
    }

    /// The damage is reported as damage: quarantined on import, named by `container verify`,
    /// and the peer keeps the text it had.
    @Test func aDamagedLogIsQuarantinedAsDamagedAndVerifyNamesIt() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2)
        let b = harness.device(2, "B", format: format2)
        try a.create(doc, name: "Sums", text: "kept", now: harness.clock.now())
        try b.importPending(doc)
        try a.edit(doc, text: "kept, then damaged")
        let container = Container(root: harness.container)
        let url = container.logURL(doc, device: a.identity.id, sequence: 2)
        let dumped = try JSONSerialization.jsonObject(with: try Container.dump(fileAt: url)) as? [String: Any]
        #expect(dumped?["checksum"] as? String == "matches")
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count - 12] ^= 0x04
        try bytes.write(to: url)
        #expect { try Container.dump(fileAt: url) } throws: { "\($0)".contains("damaged: checksum mismatch") }
        let report = try b.importPending(doc)
        #expect(report.quarantined.contains { $0.url.lastPathComponent == url.lastPathComponent && $0.reason.contains("damaged: checksum mismatch") },
                "\(report.quarantined)")
        #expect(try b.text(doc) == "kept")
        let verification = container.verify()
        #expect(verification.problems.contains { $0.url.path == url.path && $0.reason.contains("checksum mismatch") }, "\(verification.problems)")
    }

    /// Files of earlier writers (no checksum flag) still read; a file whose checksum flag was
    /// cleared by damage is refused (its 8 checksum bytes trail the payload).
    @Test func filesWithoutAChecksumStillReadAndAClearedFlagIsRefused() throws {
        let device = DeviceID(Fixed.uuid(1))
        var log = TransactionLog(
            document: doc, device: device, sequence: 1, stamp: Stamp(wall: 5, counter: 0, device: device),
            committedAt: Date(timeIntervalSince1970: 1_795_000_000), deviceName: "A",
            changes: [LoggedChange(op: .insert, id: ObjectID("row"), entity: "Row", attributes: ["n": .int(1)])])
        log.format = 2
        log.dependencies = [:]
        var old = log.envelope(container: Fixed.uuid(7))
        old.flags = 0
        let oldBytes = old.encoded
        let read = try TransactionLog.decodeBinary(Data(oldBytes), document: doc, device: device, sequence: 1, refusing: [])
        #expect(read == log)

        var cleared = Array(log.binaryEncoded(container: Fixed.uuid(7)))
        #expect(cleared.count == oldBytes.count + ContainerEnvelope.checksumLength)
        #expect(cleared[5] == ContainerEnvelope.checksumFlag)
        cleared[5] = 0
        #expect(throws: LogDecodingError.self) {
            try TransactionLog.decodeBinary(Data(cleared), document: doc, device: device, sequence: 1, refusing: [])
        }
    }

    /// What the checksum costs (Docs/DECISIONS.md, "A checksum on every envelope"): writing and
    /// reading an envelope of a 200-byte log and of a 10 MB baseline, with and without it.
    /// Prints only; `MULTIDOC_CHECKSUM_COST=1` runs it.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["MULTIDOC_CHECKSUM_COST"] != nil))
    func cost() throws {
        var random = SeededGenerator(seed: 42)
        let header = ContainerEnvelope.Header(container: Fixed.uuid(7), document: doc.uuid, writer: Fixed.uuid(1), place: 1, writtenAt: 1)
        for (name, size, rounds) in [("200-byte log", 200 - 70, 20_000), ("10 MB baseline", 10_000_000, 10)] {
            let payload = (0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }
            var envelope = ContainerEnvelope(kind: .log, header: header, payload: payload)
            var line = "\(name):"
            for flags in [0, ContainerEnvelope.checksumFlag] {
                envelope.flags = flags
                var bytes: [UInt8] = []
                let write = microseconds(rounds) { bytes = envelope.encoded }
                let read = try microseconds(rounds) { _ = try ContainerEnvelope(decoding: bytes, maximumPayload: bytes.count) }
                line += " \(flags == 0 ? "without" : "with") (\(bytes.count) bytes): write \(write) µs, read \(read) µs;"
            }
            let sum = microseconds(rounds) { _ = ContainerEnvelope.checksum(payload[...]) }
            print("checksum cost: \(line) SHA-256 alone \(sum) µs")
        }
    }

    func microseconds(_ rounds: Int, _ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        for _ in 0..<rounds { try body() }
        let elapsed = ContinuousClock.now - start
        let total = Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
        return (total / Double(rounds) * 100).rounded() / 100
    }
}
