// multidoc-bench: how fast multidoc moves edits, against the physical limit of this machine
// measured in the same run. A release-build tool, not a test:
//
//   swift build -c release && .build/release/multidoc-bench [--quick] [--json | --markdown]
//
// Docs/PERFORMANCE.md keeps the latest table.
import ArgumentParser
import Engine
import Foundation

@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multidoc-bench",
        abstract: "Measure multidoc's sync latencies and scale against this machine's durable file hand-off.",
        discussion: """
            Runs, on one container: the physical limit (two processes handing a 200-byte file back and \
            forth by write + fsync + rename + fsync(dir) with inotify), two multidocd daemons pinging \
            with FastSave on and off, new on A → viewable on B, a fresh device importing a backlog, \
            multidoc list and a full pass with many documents, and a daemon's peak memory while it \
            syncs many documents. Build everything first: swift build -c release.
            """,
        subcommands: [Run.self, HandoffPeer.self],
        defaultSubcommand: Run.self)
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the benchmark (the default).")

    @Option(help: "Ping rounds per daemon with FastSave on.") var rounds = 50
    @Option(name: .customLong("slow-rounds"), help: "Ping rounds per daemon with FastSave off.") var slowRounds = 10
    @Option(name: .customLong("handoff-rounds"), help: "Round trips of the physical-limit hand-off.") var handoffRounds = 300
    @Option(name: .customLong("new-documents"), help: "Documents created on A for new → viewable.") var newDocuments = 20
    @Option(help: "Changes in the backlog a fresh device imports.") var backlog = 100_000
    @Option(help: "Documents in the container for list and the full pass.") var documents = 10_000
    @Option(name: .customLong("memory-documents"), help: "Documents the daemon syncs while its memory is measured.") var memoryDocuments = 1_000
    @Option(help: "Storage backend of the devices (sqlite or json).") var store = "sqlite"
    @Flag(help: "Small sizes, for a quick look (a minute).") var quick = false
    @Flag(help: "Print the table as JSON.") var json = false
    @Flag(help: "Print the table as Markdown (for Docs/PERFORMANCE.md).") var markdown = false
    @Flag(help: "Keep the working folder.") var keep = false

    func validate() throws {
        guard ["sqlite", "json"].contains(store) else { throw ValidationError("--store must be sqlite or json") }
        for (name, value) in [("--rounds", rounds), ("--slow-rounds", slowRounds), ("--handoff-rounds", handoffRounds),
                              ("--new-documents", newDocuments), ("--backlog", backlog), ("--documents", documents),
                              ("--memory-documents", memoryDocuments)] where value < 1 {
            throw ValidationError("\(name) must be at least 1")
        }
        if json && markdown { throw ValidationError("choose one of --json or --markdown") }
    }

    func run() async throws {
        let programs: Programs
        do { programs = try Programs() } catch { throw ValidationError("\(error)") }
        let sizes = quick
            ? (rounds: 10, slow: 3, handoff: 100, new: 5, backlog: 5_000, documents: 300, memory: 100)
            : (rounds: rounds, slow: slowRounds, handoff: handoffRounds, new: newDocuments, backlog: backlog, documents: documents, memory: memoryDocuments)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("multidoc-bench-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(at: folder) } }
        var table = Table()

        progress("physical limit: \(sizes.handoff) durable hand-offs between two processes …")
        let limit = try Handoff.measure(rounds: sizes.handoff, folder: folder.appendingPathComponent("handoff"), executable: programs.bench)
        guard let limitOneWay = LatencyStatistics(milliseconds: limit.oneWayMs), let limitTrip = LatencyStatistics(milliseconds: limit.roundTripMs) else {
            throw BenchError("the hand-off measured nothing")
        }
        table.oneWay = limitOneWay.p50Ms
        table.roundTrip = limitTrip.p50Ms
        table.latency("physical limit: durable hand-off", limitOneWay, roundTrip: limitTrip)

        for (fastSave, count) in [(true, sizes.rounds), (false, sizes.slow)] {
            progress("two daemons pinging, FastSave \(fastSave ? "on" : "off"), \(count) rounds each …")
            let samples = try await Scenarios.daemonPing(
                programs, folder: folder.appendingPathComponent("ping-\(fastSave)"), store: store, fastSave: fastSave, rounds: count)
            table.latency(
                "daemons ping, FastSave \(fastSave ? "on" : "off") (\(samples.count) imports)",
                LatencyStatistics(milliseconds: samples.map(\.oneWayMs)),
                roundTrip: LatencyStatistics(milliseconds: samples.compactMap(\.roundTripMs)))
        }

        progress("new on A → viewable on B, \(sizes.new) documents …")
        let viewable = try await Scenarios.newToViewable(folder: folder.appendingPathComponent("new"), store: store, documents: sizes.new)
        if let stats = LatencyStatistics(milliseconds: viewable) {
            table.row("new on A → viewable on B, p50", ms: stats.p50Ms, ratio: true)
            table.row("new on A → viewable on B, max", ms: stats.maxMs, ratio: true)
        }

        progress("backlog: a fresh device imports \(sizes.backlog) changes …")
        let backlogResult = try await Scenarios.backlog(folder: folder.appendingPathComponent("backlog"), store: store, changes: sizes.backlog)
        table.row("backlog import, \(sizes.backlog) changes in \(backlogResult.logs) logs", text: String(format: "%.2f s", backlogResult.seconds))
        table.row("backlog import throughput", text: "\(Int(Double(sizes.backlog) / backlogResult.seconds)) changes/s")

        progress("scale: \(sizes.documents) documents in the container …")
        let scale = try await Scenarios.scale(programs, folder: folder.appendingPathComponent("scale"), store: store, documents: sizes.documents)
        guard scale.listed == sizes.documents else { throw BenchError("multidoc list showed \(scale.listed) of \(sizes.documents) documents") }
        table.row("multidoc list, \(sizes.documents) documents, first run (imports all)", text: String(format: "%.2f s", scale.coldListSeconds))
        table.row("multidoc list, \(sizes.documents) documents, second run (every store looked at)", text: String(format: "%.2f s", scale.secondListSeconds))
        table.row("multidoc list, \(sizes.documents) documents, steady state (quiet ones skipped)", text: String(format: "%.2f s", scale.warmListSeconds))
        table.row("full pass, \(sizes.documents) documents, fresh process looking at all", ms: scale.thoroughPassMs, ratio: false)
        table.row("full pass, \(sizes.documents) quiet documents (the daemon's 5 s rescan)", ms: scale.quietPassMs, ratio: false)

        progress("daemon memory: syncing \(sizes.memory) documents …")
        let memory = try await Scenarios.daemonMemory(programs, folder: folder.appendingPathComponent("memory"), store: store, documents: sizes.memory)
        table.row("multidocd peak RSS syncing \(sizes.memory) documents (in \(String(format: "%.1f", memory.seconds)) s)",
                  text: String(format: "%.1f MB", Double(memory.bytes) / 1_048_576))

        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(table.rows), as: UTF8.self))
        } else {
            print(markdown ? table.markdown() : table.text())
        }
        if keep { progress("kept \(folder.path)") }
    }
}

struct HandoffPeer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff-peer", abstract: "Side B of the physical-limit hand-off (started by the benchmark).", shouldDisplay: false)
    @Option var folder: String
    @Option var rounds: Int

    func run() throws {
        try Handoff.runPeer(folder: URL(fileURLWithPath: folder), rounds: rounds)
    }
}

/// The figures, each with its ratio to the physical limit where one applies.
struct Table {
    struct Row: Encodable {
        var figure: String
        var value: String
        var milliseconds: Double?
        var ratioToLimit: Double?
    }

    var rows: [Row] = []
    var oneWay = 0.0
    var roundTrip = 0.0

    mutating func row(_ figure: String, ms: Double, ratio: Bool, roundTrip trip: Bool = false) {
        let reference = trip ? roundTrip : oneWay
        rows.append(Row(figure: figure, value: String(format: "%.2f ms", ms), milliseconds: ms,
                        ratioToLimit: ratio && reference > 0 ? ms / reference : nil))
    }

    mutating func row(_ figure: String, text: String) {
        rows.append(Row(figure: figure, value: text))
    }

    mutating func latency(_ label: String, _ oneWay: LatencyStatistics?, roundTrip trip: LatencyStatistics?) {
        if let oneWay {
            row("\(label): one-way p50", ms: oneWay.p50Ms, ratio: true)
            row("\(label): one-way p99", ms: oneWay.p99Ms, ratio: true)
        }
        if let trip { row("\(label): round trip p50", ms: trip.p50Ms, ratio: true, roundTrip: true) }
    }

    private func ratio(_ row: Row) -> String { row.ratioToLimit.map { String(format: "%.1f×", $0) } ?? "" }

    func text() -> String {
        let width = rows.map(\.figure.count).max() ?? 0
        let valueWidth = rows.map(\.value.count).max() ?? 0
        return rows.map { row in
            row.figure.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                + String(repeating: " ", count: valueWidth - row.value.count) + row.value + "  " + ratio(row)
        }.joined(separator: "\n")
    }

    func markdown() -> String {
        (["| figure | value | × limit |", "| --- | ---: | ---: |"] + rows.map { "| \($0.figure) | \($0.value) | \(ratio($0)) |" })
            .joined(separator: "\n")
    }
}
