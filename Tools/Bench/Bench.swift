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
            Runs: the physical limit (two processes handing a 200-byte file back and forth by write + \
            fsync + rename + fsync(dir) with inotify), two multidocd daemons pinging with FastSave on \
            and off, new on A → viewable on B, a fresh device importing a backlog; then, on one \
            container of --documents documents: multidoc list and a full pass, an idle daemon's CPU \
            time and passes, show / edit --append / new / list timed, a fresh device joining, and a \
            daemon's peak memory while it syncs them. Every row has a stable id (--json, first \
            column); --only ID_PREFIX runs the scenarios of the matching rows. Build everything first: \
            swift build -c release.
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
    @Option(name: .customLong("big-join-changes"), help: "Rows behind the baseline of the document a fresh device joins (join.1m).")
    var bigJoinChanges = 1_000_000
    @Option(help: "Documents in the shared container (list, full pass, idle daemon, CLI commands, join, memory).") var documents = 10_000
    @Option(name: .customLong("memory-documents"), help: "Documents the daemon syncs while its memory is measured (default: --documents).")
    var memoryDocuments: Int?
    @Option(name: .customLong("idle-seconds"), help: "Seconds the settled daemon's CPU time is measured (default 60; --quick: 10).")
    var idleSeconds: Int?
    @Option(name: .customLong("only"), parsing: .singleValue,
            help: ArgumentHelp("Run only the scenarios with a row whose id starts with this; repeatable (--only cli. --only daemon.idle).",
                               valueName: "id-prefix"))
    var only: [String] = []
    @Option(help: "One-character saves measured per document length (save.*).") var saves = 100
    @Option(name: .customLong("big-text-mb"), help: "Megabytes of the long text saved, carried and edited (text.big.*).") var bigTextMB = 40
    @Option(help: "Storage backend of the devices (sqlite or json).") var store = "sqlite"
    @Flag(help: "Small sizes, for a quick look (a few minutes): 300 documents, 10 s idle.") var quick = false
    @Flag(help: "Print the table as JSON.") var json = false
    @Flag(help: "Print the table as Markdown (for Docs/PERFORMANCE.md).") var markdown = false
    @Flag(help: "Keep the working folder.") var keep = false

    func validate() throws {
        guard ["sqlite", "json"].contains(store) else { throw ValidationError("--store must be sqlite or json") }
        for (name, value) in [("--rounds", rounds), ("--slow-rounds", slowRounds), ("--handoff-rounds", handoffRounds),
                              ("--new-documents", newDocuments), ("--backlog", backlog), ("--big-join-changes", bigJoinChanges), ("--documents", documents),
                              ("--saves", saves), ("--big-text-mb", bigTextMB), ("--memory-documents", memoryDocuments ?? 1), ("--idle-seconds", idleSeconds ?? 1)] where value < 1 {
            throw ValidationError("\(name) must be at least 1")
        }
        if json && markdown { throw ValidationError("choose one of --json or --markdown") }
        let ids = Scenario.allCases.flatMap(\.rows)
        for prefix in only where !ids.contains(where: { $0.hasPrefix(prefix) }) {
            throw ValidationError("--only \(prefix) matches no row; the ids are \(ids.joined(separator: ", "))")
        }
    }

    struct Sizes {
        var rounds, slow, handoff, new, backlog, bigJoin, documents, memory, idleSeconds, saves: Int
    }

    func run() async throws {
        let programs: Programs
        do { programs = try Programs() } catch { throw ValidationError("\(error)") }
        let sizes = quick
            ? Sizes(rounds: 10, slow: 3, handoff: 100, new: 5, backlog: 5_000, bigJoin: 20_000, documents: 300, memory: memoryDocuments ?? 300,
                    idleSeconds: idleSeconds ?? 10, saves: 20)
            : Sizes(rounds: rounds, slow: slowRounds, handoff: handoffRounds, new: newDocuments, backlog: backlog, bigJoin: bigJoinChanges, documents: documents,
                    memory: memoryDocuments ?? documents, idleSeconds: idleSeconds ?? 60, saves: saves)
        let selected = Set(Scenario.allCases.filter { scenario in
            only.isEmpty || scenario.rows.contains { id in only.contains { id.hasPrefix($0) } }
        })
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("multidoc-bench-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(at: folder) } }
        var table = Table()
        let n = sizes.documents
        var viewableP50: Double?

        if selected.contains(.limit) || selected.contains(where: \.usesLimit) {
            progress("physical limit: \(sizes.handoff) durable hand-offs between two processes …")
            let limit = try Handoff.measure(rounds: sizes.handoff, folder: folder.appendingPathComponent("handoff"), executable: programs.bench)
            guard let limitOneWay = LatencyStatistics(milliseconds: limit.oneWayMs), let limitTrip = LatencyStatistics(milliseconds: limit.roundTripMs) else {
                throw BenchError("the hand-off measured nothing")
            }
            table.oneWay = limitOneWay.p50Ms
            table.roundTrip = limitTrip.p50Ms
            table.latency("limit", "physical limit: durable hand-off", limitOneWay, roundTrip: limitTrip)
            if selected.contains(.limit) || selected.contains(.ping) || selected.contains(.pingSigned) {
                let paced = min(sizes.handoff, 100)
                let window = DocumentLibrary.burstWindow.components
                let pause = "\(window.seconds * 1000 + window.attoseconds / 1_000_000_000_000_000) ms"
                progress("physical limit at the ping's pace: \(paced) hand-offs, each after \(pause) …")
                let limit = try Handoff.measure(
                    rounds: paced, folder: folder.appendingPathComponent("handoff-paced"), executable: programs.bench, pause: DocumentLibrary.burstWindow)
                guard let pacedOneWay = LatencyStatistics(milliseconds: limit.oneWayMs) else { throw BenchError("the paced hand-off measured nothing") }
                table.pacedOneWay = pacedOneWay.p50Ms
                table.row("limit.paced.oneway.p50", "physical limit at the ping's pace (\(pause) before each hand-off): one-way p50", ms: pacedOneWay.p50Ms, ratio: .oneWay)
                table.row("limit.paced.oneway.p99", "physical limit at the ping's pace: one-way p99", ms: pacedOneWay.p99Ms, ratio: .oneWay)
            }
        }

        if selected.contains(.save) {
            progress("one-character saves into documents of 10k, 100k and 1M characters, in process, durable, \(sizes.saves) each, each imported by a second device …")
            let cost = try await SaveCost.measure(
                folder: folder.appendingPathComponent("saves"), store: store, lengths: [10_000, 100_000, 1_000_000], saves: sizes.saves)
            let reference = cost.referenceMs
            table.row("save.reference", "durable write of a 200-byte file (write, fsync, rename, fsync folder), in process, median", ms: reference)
            let lengths: [(Int, String, String, Double?)] = [
                (10_000, "save.1char.10k", "10k", 1.2), (100_000, "save.1char.100k", "100k", nil), (1_000_000, "save.1char.1m", "1M", 3.0),
            ]
            for (length, id, label, aim) in lengths {
                let ms = cost.saveMs[length] ?? 0
                let ratio = reference > 0 ? ms / reference : 0
                table.row(id, "one-character save into a \(label)-character document, in process, durable (FastSave, log in the container), median; value: × save.reference (\(String(format: "%.2f", ms)) ms)",
                          value: ratio, unit: "× reference", text: String(format: "%.2f× (%.2f ms)", ratio, ms),
                          target: aim.map { Target("≤ \($0)×", atMost: $0) })
            }
            let imports: [(Int, String, String, Double?)] = [(10_000, "import.1small.10k", "10k", nil), (1_000_000, "import.1small.1m", "1M", 2.0)]
            for (length, id, label, aim) in imports {
                table.row(id, "a second device, the document in view, importing one such save into its \(label)-character copy (a targeted pass, in process), median",
                          ms: cost.importMs[length] ?? 0, target: aim.map { Target("≤ \($0) ms", atMost: $0) })
            }
        }

        if selected.contains(.longText) {
            let runs = quick ? 3 : 31
            progress("long texts: edit --append on A and show on B at 10k and 1M characters, \(runs) runs each; then a \(bigTextMB) MB text …")
            let folder = folder.appendingPathComponent("long")
            let times = try await LongText.commands(programs, folder: folder, store: store, lengths: [10_000, 1_000_000], runs: runs)
            let wantsBig = only.isEmpty || only.contains { "text.big".hasPrefix($0) || $0.hasPrefix("text.big") }
            let big = wantsBig ? try await LongText.big(folder: folder.appendingPathComponent("big"), store: store, megabytes: bigTextMB) : nil
            LongText.rows(times, big, into: &table)
        }

        let pings = [(Scenario.ping, true, false, sizes.rounds), (.pingSigned, true, true, sizes.rounds), (.pingSlow, false, false, sizes.slow)]
        for (scenario, fastSave, secure, count) in pings where selected.contains(scenario) {
            progress("two daemons pinging, FastSave \(fastSave ? "on" : "off")\(secure ? ", signed and encrypted container" : ""), \(count) rounds each …")
            let samples = try await Scenarios.daemonPing(
                programs, folder: folder.appendingPathComponent("ping-\(fastSave)-\(secure)"), store: store, fastSave: fastSave, rounds: count,
                secure: secure)
            table.latency(
                secure ? "ping.signed" : fastSave ? "ping" : "ping.slow",
                "daemons ping, FastSave \(fastSave ? "on" : "off")\(secure ? ", signed + encrypted" : "") (\(samples.count) imports)",
                LatencyStatistics(milliseconds: samples.map(\.oneWayMs)),
                roundTrip: LatencyStatistics(milliseconds: samples.compactMap(\.roundTripMs)))
        }

        if selected.contains(.newViewable) {
            progress("new on A → viewable on B, \(sizes.new) documents …")
            let viewable = try await Scenarios.newToViewable(folder: folder.appendingPathComponent("new"), store: store, documents: sizes.new)
            guard let stats = LatencyStatistics(milliseconds: viewable) else { throw BenchError("new → viewable measured nothing") }
            table.row("new.viewable.p50", "new on A → viewable on B, p50", ms: stats.p50Ms, ratio: .oneWay)
            table.row("new.viewable.max", "new on A → viewable on B, max", ms: stats.maxMs, ratio: .oneWay)
            viewableP50 = stats.p50Ms
        }

        // The disk's speed moves within minutes here: the limit again after the rows measured
        // against it, so a run whose disk changed under it shows it (its ratio is the drift).
        if selected.contains(.limit), selected.contains(where: \.usesLimit) {
            progress("physical limit again, after the latency rows …")
            let again = try Handoff.measure(rounds: sizes.handoff, folder: folder.appendingPathComponent("handoff-after"), executable: programs.bench)
            guard let oneWay = LatencyStatistics(milliseconds: again.oneWayMs) else { throw BenchError("the second hand-off measured nothing") }
            table.row("limit.after.oneway.p50", "physical limit again, after the latency rows: one-way p50 (ratio: the drift)", ms: oneWay.p50Ms, ratio: .oneWay)
        }

        if selected.contains(.api) {
            try await APIFeed.measure(programs, folder: folder.appendingPathComponent("api"), store: store, edits: max(sizes.new, 20), viewableP50: viewableP50, table: &table)
        }

        if selected.contains(.backlog) {
            progress("backlog: a fresh device imports \(sizes.backlog) changes …")
            let result = try await Scenarios.backlog(folder: folder.appendingPathComponent("backlog"), store: store, changes: sizes.backlog)
            table.row("import.seconds", "backlog import, \(sizes.backlog) changes in \(result.logs) logs", value: result.seconds, unit: "s")
            let rate = Double(sizes.backlog) / result.seconds
            table.row("import.rate", "backlog import throughput", value: rate, unit: "changes/s", text: "\(Int(rate)) changes/s")
        }

        if selected.contains(.bigJoin) {
            progress("join.1m: a fresh device joins a document of \(sizes.bigJoin) rows behind a baseline and 1,000 logs …")
            let seconds = try await Scenarios.bigJoin(folder: folder.appendingPathComponent("big-join"), store: store, changes: sizes.bigJoin, logs: 1_000)
            table.row("join.1m", "fresh device joins one document of \(sizes.bigJoin) rows behind a baseline + 1,000 logs, until viewable and complete",
                      value: seconds, unit: "s", target: Target("≤ 10 s", atMost: 10))
        }

        if selected.contains(.signing) {
            progress("signing: one log signed, checked, sealed and opened, 2,000 times each …")
            let cost = try SigningCost.measure(folder: folder.appendingPathComponent("signing"), logs: 2_000)
            func microseconds(_ id: String, _ figure: String, _ value: Double) {
                table.row(id, figure, value: value, unit: "µs", text: String(format: "%.1f µs (%.3f ms, %.1f%% of the limit)", value, value / 1000,
                                                                          table.oneWay > 0 ? value / 10 / table.oneWay : 0))
            }
            microseconds("log.open.plain", "one log read from its envelope, unsigned container (reference)", cost.plainMicroseconds)
            microseconds("log.sign", "one log signed (Ed25519)", cost.signMicroseconds)
            microseconds("log.verify", "one log's signature checked against its admitted key", cost.verifyMicroseconds)
            microseconds("log.seal", "one log sealed (ChaCha20-Poly1305) and signed", cost.sealMicroseconds)
            microseconds("log.open.sealed", "one sealed log checked and opened", cost.openMicroseconds)
        }

        let scale = try ScaleWorkspace(programs, folder: folder.appendingPathComponent("scale"), store: store, documents: n)

        if selected.contains(.list) {
            progress("multidoc list with \(n) documents in the container …")
            let lists = try await Scenarios.lists(scale)
            table.row("list.cold", "multidoc list, \(n) documents, first run (discovers and previews all)", value: lists.cold, unit: "s")
            table.row("list.second", "multidoc list, \(n) documents, after multidoc sync imported all (every store looked at)", value: lists.second, unit: "s")
            table.row("list.steady", "multidoc list, \(n) documents, steady state (quiet ones skipped)", value: lists.steady, unit: "s")
        }

        if selected.contains(.pass) {
            progress("full passes over \(n) documents …")
            let passes = try await Scenarios.passes(scale)
            table.row("pass.thorough", "full pass, \(n) documents, fresh process looking at all", ms: passes.thoroughMs)
            table.row("pass.quiet", "full pass, \(n) quiet documents (the daemon's 5 s rescan)", ms: passes.quietMs)
        }

        if selected.contains(.idle) {
            progress("idle daemon: multidocd on a root with \(n) quiet documents, \(sizes.idleSeconds) s …")
            let idle = try await Scenarios.daemonIdle(scale, seconds: sizes.idleSeconds)
            let window = String(format: "%.0f s", idle.windowSeconds)
            let settled = idle.settled ? String(format: "settled after %.1f s", idle.settleSeconds) : "never settled in 300 s"
            table.row("daemon.idle.cpu", "multidocd idle, \(idle.documents) quiet documents: CPU over \(window) (\(settled))",
                      value: idle.cpuPercent, unit: "% of one core", text: String(format: "%.2f %%", idle.cpuPercent),
                      target: Target("≤ 1 %", atMost: 1))
            table.row("daemon.idle.passes", "multidocd idle, \(idle.documents) quiet documents: passes in \(window)",
                      value: Double(idle.passes), unit: "passes", text: "\(idle.passes)", target: Target("0 passes", atMost: 0))
        }

        if selected.contains(.join) {
            progress("join: a fresh device lists \(n) documents until all are viewable …")
            let join = try await Scenarios.join(scale)
            table.row("join.10k", "fresh device joins \(n) documents, until all viewable (\(join.commands) command\(join.commands == 1 ? "" : "s"))",
                      value: join.seconds, unit: "s", target: Target("≤ 15 s", atMost: 15))
        }

        if selected.contains(.memory) {
            progress("daemon memory: syncing \(sizes.memory) documents …")
            let memory: (bytes: Int, seconds: Double)
            if sizes.memory == n {
                try scale.fill()
                memory = try await Scenarios.daemonMemory(programs, container: scale.container, root: scale.root("M"), device: "M",
                                                          log: folder.appendingPathComponent("scale/multidocd-memory.log"), store: store, documents: n)
            } else {
                let space = try Workspace(folder.appendingPathComponent("memory"))
                try space.fill(documents: sizes.memory)
                memory = try await Scenarios.daemonMemory(programs, container: space.container, root: space.root("M"), device: "M",
                                                          log: space.folder.appendingPathComponent("multidocd.log"), store: store, documents: sizes.memory)
            }
            let megabytes = Double(memory.bytes) / 1_048_576
            table.row("daemon.rss.10k", "multidocd peak RSS syncing \(sizes.memory) documents (in \(String(format: "%.1f", memory.seconds)) s)",
                      value: megabytes, unit: "MB", target: Target("≤ 64 MB", atMost: 64))
        }

        // Last: `new` adds documents to the container, which the rows above count exactly.
        if selected.contains(.cli) {
            progress("CLI commands on a root with \(n) documents, nothing pending …")
            let cli = try await Scenarios.cli(scale)
            let of = "\(n) documents, median of \(cli.runs)"
            let fast = Target("≤ 50 ms", atMost: 50)
            table.row("cli.show.10k", "multidoc show \(cli.document), \(of)", ms: cli.showMs, target: fast)
            table.row("cli.append.10k", "multidoc edit \(cli.document) --append, \(of)", ms: cli.appendMs, target: fast)
            table.row("cli.new.10k", "multidoc new, \(of)", ms: cli.newMs, target: fast)
            table.row("cli.list.10k", "multidoc list --json, \(of)", ms: cli.listMs, target: Target("≤ 300 ms", atMost: 300))
        }

        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(table.rows), as: UTF8.self))
        } else {
            print(markdown ? table.markdown() : table.text())
        }
        if keep { progress("kept \(folder.path)") }
    }
}

/// The benchmark's parts, each with the ids of the rows it adds (`--only` picks by them).
enum Scenario: CaseIterable {
    case limit, save, longText, ping, pingSigned, pingSlow, newViewable, api, backlog, bigJoin, signing, list, pass, idle, join, memory, cli

    var rows: [String] {
        switch self {
        case .limit: ["limit.oneway.p50", "limit.oneway.p99", "limit.roundtrip.p50", "limit.paced.oneway.p50", "limit.paced.oneway.p99", "limit.after.oneway.p50"]
        case .save: ["save.reference", "save.1char.10k", "save.1char.100k", "save.1char.1m", "import.1small.10k", "import.1small.1m"]
        case .longText: ["edit.append.10k", "edit.append.1m", "show.import.10k", "show.import.1m", "text.big.save", "text.big.arrive", "text.big.edit"]
        case .ping: ["ping.oneway.p50", "ping.oneway.p99", "ping.roundtrip.p50"]
        case .pingSigned: ["ping.signed.oneway.p50", "ping.signed.oneway.p99", "ping.signed.roundtrip.p50"]
        case .pingSlow: ["ping.slow.oneway.p50", "ping.slow.oneway.p99", "ping.slow.roundtrip.p50"]
        case .newViewable: ["new.viewable.p50", "new.viewable.max"]
        case .api: ["api.edit.feed.p50", "api.edit.feed.max"]
        case .backlog: ["import.seconds", "import.rate"]
        case .bigJoin: ["join.1m"]
        case .signing: ["log.open.plain", "log.sign", "log.verify", "log.seal", "log.open.sealed"]
        case .list: ["list.cold", "list.second", "list.steady"]
        case .pass: ["pass.thorough", "pass.quiet"]
        case .idle: ["daemon.idle.cpu", "daemon.idle.passes"]
        case .join: ["join.10k"]
        case .memory: ["daemon.rss.10k"]
        case .cli: ["cli.show.10k", "cli.append.10k", "cli.new.10k", "cli.list.10k"]
        }
    }

    /// Whether its rows are divided by the physical limit (measured first).
    var usesLimit: Bool { [.ping, .pingSigned, .pingSlow, .newViewable].contains(self) }
}

struct HandoffPeer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff-peer", abstract: "Side B of the physical-limit hand-off (started by the benchmark).", shouldDisplay: false)
    @Option var folder: String
    @Option var rounds: Int
    @Option var pauseMicroseconds: UInt32 = 0

    func run() throws {
        try Handoff.runPeer(folder: URL(fileURLWithPath: folder), rounds: rounds, pauseMicroseconds: pauseMicroseconds)
    }
}
