import AppSupport
import ArgumentParser
import Engine
import Foundation
import Storage

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Two devices, one container, in a temporary folder: create, discover, edit, ping, and measured latencies.")
    @Flag(help: "Leave the folders for inspection.") var keep = false
    @Option(name: .customLong("ping-rounds"), help: "Pings each device sends.") var pingRounds = 10
    @Option(help: "Storage backend of device A (device B uses the other one).") var store = "sqlite"
    @Flag(name: .long, help: "Print the summary as JSON.") var json = false

    func validate() throws {
        guard StoreKind(rawValue: store) != nil else { throw ValidationError("--store must be sqlite or json") }
        guard (1...1000).contains(pingRounds) else { throw ValidationError("--ping-rounds must be between 1 and 1000") }
    }

    func run() async throws {
        try await runCommand {
            let scenario = DemoScenario(keep: keep, pingRounds: pingRounds, storeA: StoreKind(rawValue: store) ?? .sqlite)
            let outcome = try await scenario.run { line in if !json { print(line); fflush(nil) } }
            let summary = outcome.summary
            if json { try printJSON(summary); return }
            print("")
            print("Summary")
            print("  new on A → viewable on B:  \(ms(summary.newToViewableMs))   (the seed app: ~90 s)")
            print("  edit on B → seen on A:     \(ms(summary.editLatencyMs))   (the seed app: 6–10 s)")
            print("  pings sent:                A \(summary.pingsSent["A"] ?? 0), B \(summary.pingsSent["B"] ?? 0)")
            printTable(latencyRows(oneWay: summary.oneWay, roundTrip: summary.roundTrip,
                                   header: ["latency", "count", "min", "p50", "p90", "p99", "max"], indent: "  "))
            print("  one-way over time: \(LatencyReport.sparkline(outcome.samples.map(\.oneWayMs)))")
            guard keep else { return }
            print("")
            print("Folders kept. Try:")
            print("  swift run multidoc list --root \(outcome.rootB.path) --container \(outcome.container.path)")
            print("  swift run multidoc latencies --root \(outcome.rootA.path) --plot latencies.svg")
        }
    }
}
