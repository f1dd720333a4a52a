import FileIO
import Foundation
import Model
import Storage
import Text
@testable import Sync
import Testing
import TestSupport

/// Format 2 baselines are binary (Baseline+Binary.swift): a late joiner builds the same
/// document from one as from the logs it stands for, `container dump` shows it as JSON, and a
/// damaged or lying one is refused, never half-read.
@Suite struct BaselineBinaryTests {
    let doc = DocumentID(Fixed.uuid(0xBA5E))
    let format2 = LogFormat(version: 2, container: Fixed.uuid(7))

    /// A writes a document with texts, plain attributes and a deletion, and a baseline of it.
    func written(_ harness: SyncHarness) throws -> (a: SyncDevice, baseline: URL) {
        let a = harness.device(1, "A", format: format2)
        try a.create(doc, name: "Binary", text: "The quick brown fox", now: harness.clock.now())
        try a.edit(doc, text: "The quick brown fox jumps ✓ over the lazy dog")
        try a.save(doc, [
            .insert(ObjectID("row-1"), entity: "Row", attributes: [
                "n": .int(-42), "x": .double(2.5), "on": .bool(true), "none": .null, "at": .date(Date(timeIntervalSince1970: 1_795_000_000.25)),
                "name": .string("tab\tand \"quotes\""),
            ]),
            .insert(ObjectID("row-2"), entity: "Row", attributes: ["n": .int(Int64.min)]),
        ])
        try a.save(doc, [.delete(ObjectID("row-2"))])
        let store = try a.store(doc)
        defer { store.close() }
        let url = try a.replicator.writeBaseline(doc, from: store)
        return (a, url)
    }

    @Test(arguments: [SyncBackend.sqlite, .json])
    func aLateJoinerBuildsTheSameDocumentFromABinaryBaseline(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let (a, url) = try written(harness)
        let bytes = try Data(contentsOf: url)
        // An envelope of kind 2 whose payload is binary, not JSON.
        #expect(bytes.prefix(4) == Data("MDC2".utf8))
        #expect(bytes[4] == ContainerEnvelope.Kind.baseline.rawValue)
        // (The payload only: the checksum after it is 8 bytes of a hash, any of them may be "{".)
        let payload = try ContainerEnvelope(decoding: Array(bytes), maximumPayload: bytes.count).payload
        #expect(payload.first == Baseline.binaryLayout)
        #expect(!payload.contains(UInt8(ascii: "{")))
        let container = Container(root: harness.container)
        let read = try #require(container.baselines(doc).first?.baseline)
        let contents = try a.store(doc).read()
        #expect(read.objects == contents.graph.objects)
        #expect(read.stamps == contents.sync.stamps)
        #expect(read.tombstones == contents.sync.tombstones)
        #expect(read.applied == contents.sync.applied)
        #expect(read.texts?.mapValues { $0.mapValues(\.text) } == contents.sync.texts.mapValues { $0.mapValues(\.text) })
        #expect(read.writtenBy == a.identity.id)

        // The logs it covers are pruned: a new device has only the baseline to build from.
        for sequence in 1...(contents.sync.applied[a.identity.id] ?? 0) {
            try FileManager.default.removeItem(at: container.logURL(doc, device: a.identity.id, sequence: sequence))
        }
        let c = harness.device(3, "C", format: format2)
        let report = try c.importPending(doc)
        #expect(report.baselinesMerged == 1)
        #expect(try c.graph(doc) == contents.graph)
        #expect(try c.text(doc) == "The quick brown fox jumps ✓ over the lazy dog")
        // And it goes on merging texts from there.
        try c.edit(doc, text: "The quick brown fox jumps ✓ over the lazy dog!")
        try a.importPending(doc)
        #expect(try a.text(doc) == "The quick brown fox jumps ✓ over the lazy dog!")
    }

    @Test func dumpShowsABinaryBaselineAsJSON() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let (_, url) = try written(harness)
        let dumped = try Container.dump(fileAt: url)
        let object = try #require(try JSONSerialization.jsonObject(with: dumped) as? [String: Any])
        #expect(object["kind"] as? String == "baseline")
        let baseline = try #require(object["baseline"] as? [String: Any])
        let objects = try #require(baseline["objects"] as? [String: Any])
        let row = try #require(objects["row-1"] as? [String: Any])
        #expect(row["entity"] as? String == "Row")
        #expect((baseline["tombstones"] as? [String: Any])?["row-2"] != nil)
        let texts = try #require(baseline["texts"] as? [String: [String: [String: Any]]])
        #expect(texts["text-\(doc)"]?["text"]?["text"] as? String == "The quick brown fox jumps ✓ over the lazy dog")
    }

    /// Every way of damaging the file: cut anywhere, a byte changed anywhere in the payload,
    /// a count that claims more than the file holds, a name that claims another coverage.
    /// The file is refused; nothing traps and nothing of it is merged.
    @Test func aDamagedOrLyingBinaryBaselineIsRefused() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let (_, url) = try written(harness)
        let good = try Data(contentsOf: url)
        let container = Container(root: harness.container)
        #expect(throws: Never.self) { try container.readBaseline(url) }
        let envelope = try ContainerEnvelope(decoding: Array(good), maximumPayload: good.count)
        let payloadStart = good.count - envelope.payload.count

        func refused(_ bytes: Data, _ what: String) throws {
            try bytes.write(to: url)
            #expect(throws: (any Error).self, "\(what) was read") { try container.readBaseline(url) }
            #expect(container.baselines(doc).isEmpty, "\(what) was listed")
        }
        for cut in stride(from: 0, to: good.count, by: max(1, good.count / 97)) {
            try refused(good.prefix(cut), "cut at \(cut)")
        }
        // Changed bytes: some decode to another valid baseline (a different value), but none may
        // trap, and a change to a count, a tag or a length is refused.
        for offset in payloadStart..<good.count {
            var changed = good
            changed[offset] ^= 0xFF
            try changed.write(to: url)
            _ = try? container.readBaseline(url)
        }
        var huge = Array(good.prefix(payloadStart))
        huge += [Baseline.binaryLayout, 2] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]
        try refused(Data(huge), "an applied count of 2^63")
        // The same bytes under a name claiming more coverage: the header and the name disagree.
        try good.write(to: url)
        let coverage = envelope.header.place
        let renamed = url.deletingLastPathComponent().appendingPathComponent(
            url.lastPathComponent.replacingOccurrences(of: "-\(coverage).", with: "-\(coverage + 5)."), isDirectory: false)
        try FileManager.default.moveItem(at: url, to: renamed)
        #expect(throws: (any Error).self) { try container.readBaseline(renamed) }
        #expect(container.baselines(doc).isEmpty)
    }
}
