import Foundation
import Model
import Storage
@testable import Sync
import Testing
import TestSupport

/// A baseline's file name says what it holds (`<writer>-<coverage>.baseline` for the binary
/// form, `.json` for JSON), and a container written with binary baselines under `.json` names
/// still opens (Docs/CONTAINER-FORMAT.md).
@Suite struct BaselineNameTests {
    let doc = DocumentID(Fixed.uuid(0xBA5F))
    let writer = DeviceID(Fixed.uuid(0xA1))
    let format2 = LogFormat(version: 2, container: Fixed.uuid(7))

    @Test(arguments: BaselineFileName.Form.allCases)
    func aNameReadsBackAsWritten(form: BaselineFileName.Form) throws {
        let name = BaselineFileName(writer: writer, coverage: 1_234, form: form)
        #expect(name.description == "\(writer)-1234.\(form.rawValue)")
        #expect(try BaselineFileName(parsing: name.description) == name)
    }

    @Test func theOldJSONNameIsStillRead() throws {
        let old = try BaselineFileName(parsing: "\(writer)-100.json")
        #expect(old.writer == writer && old.coverage == 100 && old.form == .json)
    }

    @Test(arguments: [
        ("lie-3.json", "writer's UUID"),
        ("\(DeviceID(Fixed.uuid(0xA1)))-3.txt", "extension"),
        ("\(DeviceID(Fixed.uuid(0xA1)))-x3.baseline", "whole number"),
        ("\(DeviceID(Fixed.uuid(0xA1)))-.baseline", "whole number"),
        ("\(DeviceID(Fixed.uuid(0xA1)))-99999999999999999999999.baseline", "whole number"),
        ("\(DeviceID(Fixed.uuid(0xA1)))", "extension"),
        ("baseline", "extension"),
    ])
    func junkNamesAreRefusedSayingWhy(name: String, why: String) {
        #expect(BaselineFileName.parse(name) == nil)
        do {
            _ = try BaselineFileName(parsing: name)
            Issue.record("\(name) was taken for a baseline's name")
        } catch {
            #expect(error.name == name)
            #expect(error.description.contains(name) && error.description.contains(why), "\(error)")
        }
    }

    /// A format 2 device names its binary baseline `.baseline`; one named `.json` (as older
    /// builds named them) is still used by a late joiner, and goes when its writer writes the next.
    @Test func aBaselineUnderItsOldNameIsStillUsedByALateJoiner() throws {
        let harness = try SyncHarness(.sqlite)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2)
        try a.create(doc, name: "Named", text: "one two three", now: harness.clock.now())
        try a.edit(doc, text: "one two three four")
        let store = try a.store(doc)
        let written = try a.replicator.writeBaseline(doc, from: store)
        store.close()
        let name = try BaselineFileName(parsing: written.lastPathComponent)
        #expect(name.form == .binary && name.writer == a.identity.id)
        // As today's main wrote it: the same bytes under a `.json` name.
        let old = written.deletingLastPathComponent().appendingPathComponent("\(name.writer)-\(name.coverage).json")
        try FileManager.default.moveItem(at: written, to: old)
        let container = Container(root: harness.container)
        #expect(container.baselines(doc).map(\.url.lastPathComponent) == [old.lastPathComponent])
        let applied = try a.store(doc).read().sync.applied[a.identity.id] ?? 0
        for sequence in 1...applied {
            try FileManager.default.removeItem(at: container.logURL(doc, device: a.identity.id, sequence: sequence))
        }
        let c = harness.device(3, "C", format: format2)
        let report = try c.importPending(doc)
        #expect(report.baselinesMerged == 1)
        #expect(try c.text(doc) == "one two three four")
        // A's next baseline takes the old one's place.
        try a.edit(doc, text: "one two three four five")
        let again = try a.store(doc)
        let next = try a.replicator.writeBaseline(doc, from: again)
        again.close()
        #expect(try FileManager.default.contentsOfDirectory(atPath: old.deletingLastPathComponent().path) == [next.lastPathComponent])
        #expect(next.pathExtension == "baseline")
    }

    @Test func aFormat1BaselineIsJSONUnderAJSONName() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A")
        try a.create(doc, name: "Plain", text: "hello", now: harness.clock.now())
        let store = try a.store(doc)
        defer { store.close() }
        let url = try a.replicator.writeBaseline(doc, from: store)
        #expect(url.pathExtension == "json")
        #expect(try Data(contentsOf: url).first == UInt8(ascii: "{"))
    }

    @Test func stampKeysReadBackFromTheirWords() {
        for key in ContainerStampKey.allCases { #expect(ContainerStampKey(rawValue: key.rawValue) == key) }
        #expect(ContainerStampKey(rawValue: "logs") == nil)
    }
}
