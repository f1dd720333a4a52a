import AppSupport
import ArgumentParser
import Engine
import Foundation
import Logging
import Model
import Settings
import Storage

struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Two devices, one container, in a temporary folder: create, discover, edit, ping, and measured latencies.")
    @Flag(help: "Leave the folders for inspection.") var keep = false
    @Option(name: .customLong("ping-rounds"), help: "Pings each device sends.") var pingRounds = 10
    @Option(help: "Storage backend of device A (device B uses the other one).") var store = "sqlite"
    @Flag(name: .long, help: "Print the summary as JSON.") var json = false

    struct Summary: Encodable {
        var folder: String
        var document: String
        var uuid: String
        var discoveredOnB: Bool
        var viewableOnB: Bool
        var newToViewableMs: Double
        var editSeenOnA: Bool
        var editLatencyMs: Double
        var pingsSent: [String: Int]
        var oneWay: LatencyStatistics?
        var roundTrip: LatencyStatistics?
        var kept: Bool
    }

    func validate() throws {
        guard StoreKind(rawValue: store) != nil else { throw ValidationError("--store must be sqlite or json") }
        guard (1...1000).contains(pingRounds) else { throw ValidationError("--ping-rounds must be between 1 and 1000") }
    }

    func run() async throws {
        try await runCommand {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("multidoc-demo-\(UUID().uuidString.prefix(8))", isDirectory: false)
            let container = folder.appendingPathComponent("container", isDirectory: false)
            try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
            defer { if !keep { try? FileManager.default.removeItem(at: folder) } }
            let kindA = StoreKind(rawValue: store) ?? .sqlite
            let kindB: StoreKind = kindA == .sqlite ? .json : .sqlite
            let (setupA, a) = try device("A", kind: kindA, folder: folder, container: container)
            let (setupB, b) = try device("B", kind: kindB, folder: folder, container: container)
            func say(_ line: String) { if !json { print(line); fflush(nil) } }
            say("multidoc demo in \(folder.path)")
            say("  device A: \(setupA.root.url.lastPathComponent) (\(kindA) stores), device B: \(setupB.root.url.lastPathComponent) (\(kindB) stores), one container")

            let eventsB = await b.events()
            let clock = ContinuousClock()
            let start = clock.now
            let created = try await a.create()
            say("A  created \(created.name) \(created.id)")
            await b.sync()
            var discovered = false
            var viewable = false
            for await event in eventsB {
                switch event {
                case .documentAdded(let summary) where summary.id == created.id:
                    discovered = true
                    say("B  discovered \(summary.name): \(summary.origin.rawValue), \(summary.viewable ? "viewable" : "not viewable yet")")
                case .becameViewable(let id) where id == created.id:
                    viewable = true
                default: break
                }
                if discovered && viewable { break }
            }
            let newToViewable = clock.now - start
            let rowB = await b.list().first { $0.id == created.id }
            say("B  \(rowB?.name ?? "?") is viewable: \(rowB?.state.statusString ?? "?") \(rowB?.downloadPercent ?? 0)% downloaded, after \(ms(milliseconds(newToViewable)))")
            say("B  text: \(try await b.detail(created.id).text)")

            let editStart = clock.now
            try await b.appendText(created.id, " START")
            await a.sync()
            let textOnA = try await a.detail(created.id).text
            let editLatency = clock.now - editStart
            say("B  appended \" START\"; A sees: \(textOnA)  (\(ms(milliseconds(editLatency))))")

            say("A↔B ping, \(pingRounds) rounds each …")
            await a.inspect(created.id, rounds: pingRounds)
            await b.inspect(created.id, rounds: pingRounds)
            try await b.startPing()
            let deadline = clock.now + .seconds(30)
            func live(_ library: DocumentLibrary) -> LiveSync {
                // The rescan is a safety net here too; a short one ends the ping if a peer's
                // last answer never comes.
                LiveSync(library: library, configuration: .init(rescanInterval: .milliseconds(200))) { _ in
                    await library.pingFinished || clock.now > deadline ? .stop : .goOn
                }
            }
            async let pingA: Void = live(a).run()
            async let pingB: Void = live(b).run()
            _ = try await (pingA, pingB)
            await a.sync()
            await b.sync()
            let sentA = await a.pingCounts.sent
            let sentB = await b.pingCounts.sent
            let finalText = try await a.detail(created.id).text
            say("A  text now ends: …\(String(finalText.suffix(60)))")
            await a.closeAll()
            await b.closeAll()

            let samples = LatencyLog(url: setupA.root.latenciesURL).read() + LatencyLog(url: setupB.root.latenciesURL).read()
            let summary = Summary(
                folder: folder.path, document: created.name, uuid: created.id.description, discoveredOnB: discovered,
                viewableOnB: viewable, newToViewableMs: milliseconds(newToViewable), editSeenOnA: textOnA.hasSuffix(" START"),
                editLatencyMs: milliseconds(editLatency), pingsSent: ["A": sentA, "B": sentB],
                oneWay: LatencyStatistics(milliseconds: samples.map(\.oneWayMs)),
                roundTrip: LatencyStatistics(milliseconds: samples.compactMap(\.roundTripMs)), kept: keep)
            if json { try printJSON(summary); return }
            print("")
            print("Summary")
            print("  new on A → viewable on B:  \(ms(summary.newToViewableMs))   (the seed app: ~90 s)")
            print("  edit on B → seen on A:     \(ms(summary.editLatencyMs))   (the seed app: 6–10 s)")
            print("  pings sent:                A \(sentA), B \(sentB)")
            var rows = [["latency", "count", "min", "p50", "p90", "p99", "max"]]
            for (label, stats) in [("one-way", summary.oneWay), ("round-trip", summary.roundTrip)] {
                guard let stats else { continue }
                rows.append(["  " + label, "\(stats.count)", ms(stats.minMs), ms(stats.p50Ms), ms(stats.p90Ms), ms(stats.p99Ms), ms(stats.maxMs)])
            }
            printTable(rows)
            print("  one-way over time: \(LatencyReport.sparkline(samples.map(\.oneWayMs)))")
            if keep {
                print("")
                print("Folders kept. Try:")
                print("  swift run multidoc list --root \(setupB.root.url.path) --container \(container.path)")
                print("  swift run multidoc latencies --root \(setupA.root.url.path) --plot latencies.svg")
            }
        }
    }

    private func device(_ name: String, kind: StoreKind, folder: URL, container: URL) throws -> (DeviceSetup, DocumentLibrary) {
        let setup = try DeviceSetup(
            rootPath: folder.appendingPathComponent("device-\(name)", isDirectory: false).path, containerPath: container.path,
            flags: [.deviceName: .text(name), .store: .text(kind.rawValue), .enablePing: .bool(true), .fastSave: .bool(true), .useCloud: .bool(true)],
            environment: [:], createRoot: true)
        var logger = Logger(label: "multidoc.demo.\(name)")
        logger.logLevel = .error
        return (setup, setup.openLibrary(logger: logger))
    }
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}
