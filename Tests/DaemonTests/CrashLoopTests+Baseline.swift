#if canImport(Glibc)
import Glibc
#endif
import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
@testable import Sync
import Testing
import TestSupport

// 3. A full pass SIGKILLed while writing a baseline.
extension CrashLoopTests {
    @Test func aPassKilledWhileWritingABaseline() async throws {
        defer { folder.remove() }
        var random = SeededGenerator(seed: Self.seed("baseline"))
        for name in ["A", "C"] { try FileManager.default.createDirectory(at: root(name), withIntermediateDirectories: true) }
        // B's logs are made here, straight in the container format (cheap), 105 at a time: past
        // the 100-log threshold, so A's next full pass imports them and writes a baseline.
        let b = DeviceIdentity(id: DeviceID(UUID()), name: "B", model: "test")
        let doc = DocumentID(UUID())
        let shared = Container(root: container)
        try shared.writeJSON(DocumentInfo(document: doc, name: try DocumentName("Big"), createdBy: b.id, createdByName: "B", createdAt: Date(), store: .sqlite),
                             to: shared.infoURL(doc, device: b.id))
        var written = 0
        var text = "B"
        func ship(_ change: LoggedChange) throws {
            let sequence = UInt64(written + 1)
            let log = TransactionLog(document: doc, device: b.id, sequence: sequence, stamp: Stamp(wall: 1_700_000_000_000 + sequence, counter: 0, device: b.id),
                                     committedAt: Date(), deviceName: "B", changes: [change])
            // Shipped like flush does (dot-named file, rename) minus the fsyncs: B's durability
            // is not under test.
            let logs = shared.logsDirectory(doc, device: b.id)
            try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
            let temporary = logs.appendingPathComponent(".tmp-\(sequence)")
            try log.encoded().write(to: temporary)
            let url = shared.logURL(doc, device: b.id, sequence: sequence)
            guard rename(temporary.path, url.path) == 0 else { throw DaemonTestError("rename \(url.path): errno \(errno)") }
        }
        try ship(LoggedChange(op: .insert, id: ObjectID("text"), entity: Entity.textEntry, attributes: [Entity.TextEntry.text: .string(text)]))
        func burst() throws {
            for _ in 0..<105 {
                written += 1
                text += " \(written)"
                try ship(LoggedChange(op: .update, id: ObjectID("text"), entity: Entity.textEntry, attributes: [Entity.TextEntry.text: .string(text)]))
            }
        }
        try burst()
        let calibration = ContinuousClock.now
        #expect(try cli(["sync"], root: "A").status == 0)
        var passTime = ContinuousClock.now - calibration
        let a = try deviceID("A")
        #expect(Container(root: container).baselines(doc).contains { $0.baseline.writtenBy == a }, "the calibration pass wrote no baseline")

        var kills = 0, completed = 0, baselinesWritten = 0
        let errors = folder.appending("sync.stderr")
        let rounds = 48
        var pruned: UInt64 = 0
        for round in 0..<rounds {
            // B prunes as its own compaction would: what A has applied (its registry entry)
            // and a baseline covers. The container stays small, and C must start from a baseline.
            let registered = shared.deviceRecords().first { $0.device == a }?.applied[doc]?[b.id] ?? 0
            let covered = shared.baselines(doc).first?.baseline.applied[b.id] ?? 0
            while pruned < min(registered, covered) {
                pruned += 1
                try? FileManager.default.removeItem(at: shared.logURL(doc, device: b.id, sequence: pruned))
            }
            try burst()
            let before = Set(Container(root: container).baselines(doc).map(\.url.lastPathComponent))
            let process = try spawn("multidoc", ["sync", "--root", root("A").path, "--container", container.path, "--device-name", "A"], stderr: errors)
            // Biased to the end of the pass, where the baseline is written.
            let delay = Duration.microseconds(Int64.random(in: Int64(passTime.microseconds * 3 / 10)...Int64(passTime.microseconds * 10 / 10), using: &random))
            let started = ContinuousClock.now
            switch await killAfter(process, delay) {
            case .killed:
                kills += 1
                passTime = passTime * 1.2  // passes grow with the container: aim later next time
            case .exited(0):
                completed += 1
                passTime = ContinuousClock.now - started
            case .exited(let code): Issue.record("round \(round): sync exited \(code): \((try? String(contentsOf: errors, encoding: .utf8)) ?? "")")
            }
            let after = Container(root: container).baselines(doc)
            if !Set(after.map(\.url.lastPathComponent)).subtracting(before).isEmpty { baselinesWritten += 1 }

            let context = "round \(round) (seed above)"
            // Every baseline file decodes (a full verify, which reads every log, every 10th round).
            let files = (try? FileManager.default.contentsOfDirectory(atPath: Container(root: container).baselinesDirectory(doc).path)) ?? []
            #expect(files.filter { ContainerFiles.isIgnored($0) == false }.count == after.count, "\(context): a baseline file does not decode: \(files)")
            if round % 10 == 9 {
                let problems = Container(root: container).verify().problems
                #expect(problems.isEmpty, "\(context): \(problems)")
            }
            for entry in after {
                let covered = entry.baseline.applied[b.id] ?? 0
                let text = entry.baseline.objects[ObjectID("text")]?.attributes[Entity.TextEntry.text]
                #expect(text == .string("B" + (0..<max(0, Int(covered) - 1)).map { " \($0 + 1)" }.joined()), "\(context): baseline \(entry.url.lastPathComponent) does not match what it covers")
            }
            if let onA = try contents("A", "Big") {
                let applied = Int(onA.contents.sync.applied[b.id] ?? 0)
                #expect(onA.contents.graph.textEntry?.text == "B" + (0..<max(0, applied - 1)).map { " \($0 + 1)" }.joined(), "\(context): A's store disagrees with the \(applied) logs it applied")
            }
        }
        // A runs again; a fresh device C builds the document from the baselines and logs.
        #expect(try cli(["sync"], root: "A").status == 0)
        let c = try cli(["show", "Big", "--json"], root: "C")
        #expect(c.status == 0, "\(c.stderr)")
        let expected = "B" + (1...written).map { " \($0)" }.joined()
        #expect(try contents("A", "Big")?.contents.graph.textEntry?.text == expected)
        #expect(try contents("C", "Big")?.contents.graph.textEntry?.text == expected)
        let lost = (try contents("C", "Big")?.contents.graph.textEntry?.text == expected) ? 0 : 1
        print("CrashLoopTests.baseline: \(kills) full passes killed (\(completed) completed, \(baselinesWritten) rounds wrote a baseline), \(written + 1) logs, \(pruned) pruned; a pass takes \(passTime); lost \(lost)")
        #expect(kills >= 18, "too few kills landed; the calibration is off")
    }
}
