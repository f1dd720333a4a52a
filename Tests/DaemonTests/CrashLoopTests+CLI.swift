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

// 1. The CLI SIGKILLed in the middle of edits and creates, with the container there and away.
extension CrashLoopTests {
    /// How the CLI loop runs: the store kind, whether the container is away during the kills
    /// (saves are then synced and wait in the outbox; with it there, a save's commit is not synced
    /// and its log is its durable step), and how many rounds.
    struct CLILoop: Sendable, CustomTestStringConvertible {
        var store: String
        var containerAway: Bool
        var rounds: Int
        var testDescription: String { "\(store), container \(containerAway ? "away" : "there"), \(rounds) rounds" }
    }

    @Test(arguments: [
        CLILoop(store: "sqlite", containerAway: false, rounds: 200), CLILoop(store: "json", containerAway: false, rounds: 70),
        CLILoop(store: "sqlite", containerAway: true, rounds: 70), CLILoop(store: "json", containerAway: true, rounds: 70),
    ])
    func theCLIKilledInTheMiddleOfEditsAndCreates(loop: CLILoop) async throws {
        defer { folder.remove() }
        var random = SeededGenerator(seed: Self.seed("cli"))
        try FileManager.default.createDirectory(at: root("B"), withIntermediateDirectories: true)
        let errors = folder.appending("cli.stderr")
        let storeFlags = ["--store", loop.store]
        #expect(try cli(["init", "--no-input"], root: "A", extra: storeFlags).status == 0)
        #expect(try cli(["new", "Doc"], root: "A", extra: storeFlags).status == 0)
        let away = folder.appending("container.away")
        if loop.containerAway { try FileManager.default.moveItem(at: container, to: away) }
        let a = try deviceID("A")
        let start = try #require(try contents("A", "Doc"))
        let offset = start.contents.sync.applied[a] ?? 0
        let doc = start.record.id

        // How long an edit takes here (the median of three: one can be slowed by the machine),
        // so kills land anywhere in it.
        var samples: [Duration] = []
        var calibrations: [String] = []
        for index in 0..<3 {
            let calibration = ContinuousClock.now
            #expect(try cli(["edit", "Doc", "--append", " <calibrate\(index)>"], root: "A", extra: storeFlags).status == 0)
            samples.append(ContinuousClock.now - calibration)
            calibrations.append("<calibrate\(index)>")
        }
        // Kept up to date from the edits that complete: the machine's load changes during the
        // loop (other suites run alongside), and kills must keep landing inside a command.
        var editTime = samples.sorted()[1]
        var confirmed: [String] = calibrations, attempted: [String] = calibrations
        var confirmedDocuments: [String] = []
        var kills = (edit: 0, new: 0), completed = 0
        let rounds = loop.rounds
        for round in 0..<rounds {
            let creating = round % 9 == 4
            let marker = "<e\(round)>"
            let arguments = creating
                ? ["new", "N\(round)"]
                : ["edit", "Doc", "--append", " \(marker)"]
            let started = ContinuousClock.now
            let process = try spawn("multidoc", arguments + ["--root", root("A").path, "--container", container.path, "--device-name", "A"] + storeFlags, stderr: errors)
            // From mid-start-up (nothing happens before the dynamic loader is done) to past the end.
            let delay = Duration.microseconds(Int64.random(in: Int64(editTime.microseconds * 3 / 10)...Int64(editTime.microseconds * 13 / 10), using: &random))
            switch await killAfter(process, delay) {
            case .killed:
                if creating { kills.new += 1 } else { kills.edit += 1 }
            case .exited(0):
                completed += 1
                if creating {
                    confirmedDocuments.append("N\(round)")
                } else {
                    confirmed.append(marker)
                    samples.append(ContinuousClock.now - started)
                    editTime = samples.suffix(9).sorted()[samples.suffix(9).count / 2]
                }
            case .exited(let code):
                Issue.record("round \(round): multidoc \(arguments.joined(separator: " ")) exited \(code): \((try? String(contentsOf: errors, encoding: .utf8)) ?? "")")
            }
            if !creating { attempted.append(marker) }

            // After every kill: the device opens, the store is consistent, nothing twice or lost.
            let context = "round \(round) (seed above)"
            #expect(try everyStoreOpens("A") >= 1 + confirmedDocuments.count, "\(context)")
            let now = try #require(try contents("A", "Doc"))
            let text = now.contents.graph.textEntry?.text ?? ""
            for marker in confirmed { #expect(Self.occurrences(marker, in: text) == 1, "\(context): \(marker) not exactly once in \(text)") }
            let present = attempted.filter { Self.occurrences($0, in: text) > 0 }
            #expect(present.allSatisfy { Self.occurrences($0, in: text) == 1 }, "\(context): a marker twice: \(text)")
            // The device's own words stay in the order it typed them, kills or not.
            let order = present.compactMap { text.range(of: $0)?.lowerBound }
            #expect(order == order.sorted(), "\(context): this device's edits out of order: \(text)")
            #expect(UInt64(present.count) == (now.contents.sync.applied[a] ?? 0) - offset,
                    "\(context): \(present.count) edits in the text but \((now.contents.sync.applied[a] ?? 0) - offset) logs committed")
            checkShipping(doc, device: a, contents: now.contents, context: context)
        }

        // The device runs again (the container back): a pass ships what the kills left in
        // outboxes; B gets all of it.
        if loop.containerAway { try FileManager.default.moveItem(at: away, to: container) }
        #expect(try cli(["sync"], root: "A").status == 0)
        #expect(try cli(["list"], root: "A").status == 0)
        let verify = try cli(["container", "verify"], root: "A")
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        let b = try cli(["show", "Doc", "--json"], root: "B")
        #expect(b.status == 0, "\(b.stderr)")
        let textA = try #require(try contents("A", "Doc")).contents.graph.textEntry?.text ?? ""
        let onB = try #require(try contents("B", "Doc"))
        let textB = onB.contents.graph.textEntry?.text ?? ""
        #expect(textA == textB)
        #expect(onB.contents.sync.applied[a] == (try contents("A", "Doc"))?.contents.sync.applied[a])
        for marker in confirmed { #expect(Self.occurrences(marker, in: textB) == 1, "\(marker) on B") }
        let orderOnB = attempted.compactMap { textB.range(of: $0)?.lowerBound }
        #expect(orderOnB == orderOnB.sorted(), "A's edits out of order on B: \(textB)")
        let names = Set(DeviceRoot(url: root("B")).records().map(\.name.rawValue))
        for name in confirmedDocuments { #expect(names.contains(name), "\(name) was created (exit 0) but B does not have it") }
        let lost = confirmed.filter { Self.occurrences($0, in: textB) != 1 }.count + confirmedDocuments.filter { !names.contains($0) }.count
        let committedThoughKilled = attempted.filter { Self.occurrences($0, in: textB) == 1 }.count - confirmed.count
        print("CrashLoopTests.cli (\(loop.testDescription)): \(kills.edit) edits and \(kills.new) creates killed (\(committedThoughKilled) killed edits had committed and arrived once), \(completed) completed, \(confirmed.count) confirmed edits, lost \(lost); an edit takes \(editTime)")
        #expect(kills.edit + kills.new >= rounds * 3 / 10, "too few kills landed (\(kills)); the calibration is off")
    }
}
