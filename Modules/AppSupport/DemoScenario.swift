import Engine
import Foundation
import Logging
import Model
import Settings
import Storage

/// `multidoc demo`: two devices and one container in a temporary folder; A creates a document,
/// B discovers it, B edits and A sees the edit, then both ping each other. What it measures is
/// the ``Summary``; what happens meanwhile goes to `say`, one line an event.
public struct DemoScenario: Sendable {
    /// What the demo measured (`multidoc demo --json`).
    public struct Summary: Encodable, Sendable {
        public var folder: String
        public var document: String
        public var uuid: String
        public var discoveredOnB: Bool
        public var viewableOnB: Bool
        public var newToViewableMs: Double
        public var editSeenOnA: Bool
        public var editLatencyMs: Double
        public var pingsSent: [String: Int]
        public var oneWay: LatencyStatistics?
        public var roundTrip: LatencyStatistics?
        public var kept: Bool
    }

    /// The summary, every latency sample of both devices, and the folders (kept with `keep`).
    public struct Outcome: Sendable {
        public var summary: Summary
        public var samples: [LatencySample]
        public var rootA: URL
        public var rootB: URL
        public var container: URL
    }

    public var keep: Bool
    public var pingRounds: Int
    /// Device A's stores; device B uses the other kind.
    public var storeA: StoreKind

    /// `keep`: leave the folders for inspection; `pingRounds`: pings each device sends.
    public init(keep: Bool, pingRounds: Int, storeA: StoreKind) {
        self.keep = keep
        self.pingRounds = pingRounds
        self.storeA = storeA
    }

    /// Runs the scenario; the folder goes when it ends unless `keep`.
    public func run(say: (String) -> Void) async throws -> Outcome {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("multidoc-demo-\(UUID().uuidString.prefix(8))", isDirectory: false)
        let container = folder.appendingPathComponent("container", isDirectory: false)
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(at: folder) } }
        let kindA = storeA
        let kindB: StoreKind = kindA == .sqlite ? .json : .sqlite
        let (setupA, a) = try device("A", kind: kindA, folder: folder, container: container)
        let (setupB, b) = try device("B", kind: kindB, folder: folder, container: container)
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
            oneWay: LatencyStatistics.oneWay(samples), roundTrip: LatencyStatistics.roundTrip(samples), kept: keep)
        return Outcome(summary: summary, samples: samples, rootA: setupA.root.url, rootB: setupB.root.url, container: container)
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

extension LatencyStatistics {
    /// The statistics of the samples' one-way latencies (nil for none).
    public static func oneWay(_ samples: [LatencySample]) -> LatencyStatistics? { LatencyStatistics(milliseconds: samples.map(\.oneWayMs)) }

    /// The statistics of the samples' round trips (nil for none).
    public static func roundTrip(_ samples: [LatencySample]) -> LatencyStatistics? {
        LatencyStatistics(milliseconds: samples.compactMap(\.roundTripMs))
    }
}

/// The latency table of `latencies` and `demo`: a header and a row per kind that has samples.
public func latencyRows(oneWay: LatencyStatistics?, roundTrip: LatencyStatistics?, header: [String], indent: String = "") -> [[String]] {
    var rows = [header]
    for (label, stats) in [("one-way", oneWay), ("round-trip", roundTrip)] {
        guard let stats else { continue }
        rows.append([indent + label, "\(stats.count)", ms(stats.minMs), ms(stats.p50Ms), ms(stats.p90Ms), ms(stats.p99Ms), ms(stats.maxMs)])
    }
    return rows
}
