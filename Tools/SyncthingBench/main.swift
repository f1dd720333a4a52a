// multidoc-syncthing-bench: one-way latency of a save through Syncthing, with and without the
// nudge, beside Syncthing's own bare file propagation, all in one run on a loopback pair
// started by Tools/syncthing-pair.
//
//   swift run -c release multidoc-syncthing-bench [--samples N] [--script Tools/syncthing-pair]
//
// Rows: bare files (watcher, nudged), the ping ring of two daemons (without and with the
// nudge, and each direction), and lone nudged saves 1.6 s apart (syncthing.oneway.p50).
#if canImport(Glibc)
import Glibc
#endif
import Engine
import Foundation
import Model
import Syncthing

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
typealias PairError = BenchError

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("multidoc-syncthing-bench: error: \(message)\n".utf8))
    exit(1)
}

var samples = 10
var script = "Tools/syncthing-pair"
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--samples":
        guard let value = arguments.popFirst().flatMap(Int.init), value >= 2, value <= 1000 else { fail("--samples needs a number from 2 to 1000") }
        samples = value
    case "--script":
        guard let value = arguments.popFirst() else { fail("--script needs a path") }
        script = value
    case "--help", "-h":
        print("usage: multidoc-syncthing-bench [--samples N] [--script PATH-TO-syncthing-pair]")
        exit(0)
    default:
        fail("unknown argument '\(argument)'; try --help")
    }
}
guard FileManager.default.isExecutableFile(atPath: script) else { fail("\(script) not found; run from the package root or pass --script") }
let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
for product in ["multidoc", "multidocd"] where !FileManager.default.isExecutableFile(atPath: binaries.appendingPathComponent(product).path) {
    fail("\(product) is not built next to this tool (swift build -c release)")
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
}

func row(_ label: String, _ values: [Double]) -> String {
    String(format: "| %@ | %d | %.0f | %.0f | %.0f | %.0f |", label, values.count,
           percentile(values, 0), percentile(values, 0.5), percentile(values, 0.9), values.max() ?? .nan)
}

let home = FileManager.default.temporaryDirectory.appendingPathComponent("syncthing-bench-\(UUID().uuidString.prefix(8))")
do {
    try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
} catch {
    fail("cannot make \(home.path): \(error)")
}
let pairHome = home.appendingPathComponent("pair")
let started = try Command.run(script, ["start", pairHome.path], timeout: 180)
guard started.status == 0 else { fail("syncthing-pair start failed: \(started.stderr)") }
var env: [String: String] = [:]
for line in ((try? String(contentsOf: pairHome.appendingPathComponent("pair.env"), encoding: .utf8)) ?? "").split(separator: "\n") {
    let parts = line.split(separator: "=", maxSplits: 1)
    if parts.count == 2 { env[String(parts[0])] = String(parts[1]) }
}
guard let folderA = env["SYNCTHING_A_FOLDER"], let folderB = env["SYNCTHING_B_FOLDER"], let apiA = env["SYNCTHING_A_API"].flatMap(URL.init(string:)),
      let keyA = env["SYNCTHING_A_KEY"], let folderID = env["SYNCTHING_FOLDER_ID"],
      let configA = env["SYNCTHING_A_CONFIG"], let configB = env["SYNCTHING_B_CONFIG"] else {
    _ = try? Command.run(script, ["stop", pairHome.path], timeout: 60)
    fail("pair.env is incomplete")
}

// MARK: Bare propagation: a file written into A's folder, until it is in B's.

let scan = SyncthingNudge.Configuration(address: apiA, apiKey: keyA, folderID: folderID)

func propagate(_ index: Int, nudge: Bool) async throws -> Double {
    let name = "bare/\(nudge ? "nudged" : "watcher")-\(index).txt"
    let source = URL(fileURLWithPath: folderA).appendingPathComponent(name)
    let target = URL(fileURLWithPath: folderB).appendingPathComponent(name)
    try FileManager.default.createDirectory(at: source.deletingLastPathComponent(), withIntermediateDirectories: true)
    let start = ContinuousClock.now
    try Data(String(repeating: "x", count: 200).utf8).write(to: source, options: .atomic)
    if nudge, let request = scan.scanRequest([name]) { _ = try? PlainHTTP.send(request) }
    let deadline = start + .seconds(60)
    while !FileManager.default.fileExists(atPath: target.path) {
        guard ContinuousClock.now < deadline else { throw BenchError("\(name) never reached B") }
        try await Task.sleep(for: .milliseconds(1))
    }
    let elapsed = ContinuousClock.now - start
    try await Task.sleep(for: .milliseconds(1500))  // let the watcher settle between samples
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}

// MARK: multidoc: the ping ring of two daemons, each on its own container.

func run(_ product: String, _ arguments: [String]) throws -> Command.Result {
    try Command.run(binaries.appendingPathComponent(product).path, arguments, timeout: 120)
}

func device(_ name: String) -> [String] {
    ["--root", home.appendingPathComponent("root-\(name)").path, "--container", name == "A" ? folderA : folderB, "--device-name", name]
}

/// A new document on A, once B can show it: its UUID.
func sharedDocument(named name: String) async throws -> String {
    let created = try run("multidoc", ["new", name, "--json"] + device("A"))
    guard created.status == 0,
          let uuid = (try? JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])?["uuid"] as? String else {
        throw BenchError("multidoc new failed: \(created.stderr)")
    }
    let deadline = ContinuousClock.now + .seconds(60)
    while try run("multidoc", ["show", uuid] + device("B")).status != 0 {
        guard ContinuousClock.now < deadline else { throw BenchError("B never saw \(name)") }
        try await Task.sleep(for: .milliseconds(100))
    }
    return uuid
}

func pingRing(nudge: Bool, rounds: Int) async throws -> (oneWay: [Double], roundTrip: [Double], toB: [Double], toA: [Double]) {
    for name in ["A", "B"] {
        try FileManager.default.createDirectory(at: home.appendingPathComponent("root-\(name)"), withIntermediateDirectories: true)
    }
    let uuid = try await sharedDocument(named: nudge ? "PingNudged" : "PingWatcher")
    var daemons: [Process] = []
    for name in ["B", "A"] {
        let process = Process()
        process.executableURL = binaries.appendingPathComponent("multidocd")
        var arguments = device(name) + ["--enable-ping", "on", "--inspect", uuid, "--ping-rounds", "\(rounds)", "--exit-when-pings-done",
                                        "--rescan-interval", "5", "--log-level", "error"]
        if nudge { arguments += ["--syncthing-config", name == "A" ? configA : configB] }
        if name == "A" { arguments.append("--start-ping") }
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        daemons.append(process)
    }
    let stop = ContinuousClock.now + .seconds(Int64(rounds) * 8 + 60)
    while daemons.contains(where: \.isRunning) {
        if ContinuousClock.now > stop {
            daemons.forEach { $0.terminate() }
            throw BenchError("the ping ring did not finish")
        }
        try await Task.sleep(for: .milliseconds(50))
    }
    var oneWay: [Double] = [], roundTrip: [Double] = [], byReceiver: [String: [Double]] = [:]
    for name in ["A", "B"] {
        let log = LatencyLog(url: DeviceRoot(url: home.appendingPathComponent("root-\(name)")).latenciesURL)
        for sample in log.read() where sample.document.description == uuid {
            oneWay.append(sample.oneWayMs)
            byReceiver[name, default: []].append(sample.oneWayMs)
            if let value = sample.roundTripMs { roundTrip.append(value) }
        }
    }
    return (oneWay, roundTrip, byReceiver["B"] ?? [], byReceiver["A"] ?? [])
}

/// Saves on A (`multidoc edit --append`, nudged) more than 250 ms apart, none answering a file
/// just pulled (Syncthing pauses its index updates 250 ms after each; Docs/ACROSS-HOSTS.md):
/// one-way from each save's commit to its import by B's daemon, which inspects the document.
func loneSaves(_ count: Int) async throws -> [Double] {
    let uuid = try await sharedDocument(named: "Lone")
    let daemon = Process()
    daemon.executableURL = binaries.appendingPathComponent("multidocd")
    daemon.arguments = device("B") + ["--inspect", uuid, "--syncthing-config", configB, "--log-level", "error"]
    daemon.standardOutput = FileHandle.nullDevice
    daemon.standardInput = FileHandle.nullDevice
    try daemon.run()
    defer { daemon.terminate() }
    try await Task.sleep(for: .seconds(2))  // let it start and settle
    let log = LatencyLog(url: DeviceRoot(url: home.appendingPathComponent("root-B")).latenciesURL)
    for index in 0..<count {
        let saved = try run("multidoc", ["edit", uuid, "--append", " \(index)", "--syncthing-config", configA] + device("A"))
        guard saved.status == 0 else { throw BenchError("multidoc edit failed: \(saved.stderr)") }
        try await Task.sleep(for: .milliseconds(1600))
    }
    return log.read().filter { $0.document.description == uuid }.map(\.oneWayMs)
}

do {
    var bareWatcher: [Double] = [], bareNudged: [Double] = []
    for index in 0..<samples {
        bareWatcher.append(try await propagate(index, nudge: false))
        bareNudged.append(try await propagate(index, nudge: true))
    }
    let without = try await pingRing(nudge: false, rounds: samples)
    let with = try await pingRing(nudge: true, rounds: samples)
    let lone = try await loneSaves(samples)
    var uname = utsname()
    _ = Glibc.uname(&uname)
    let machine = withUnsafeBytes(of: &uname.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    print("multidoc-syncthing-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(machine), \(ISO8601DateFormatter().string(from: Date())), \(samples) samples each, one Syncthing pair on loopback")
    print("")
    print("| path (ms) | samples | min | p50 | p90 | max |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print(row("bare file A → B, Syncthing's watcher (fsWatcherDelayS 1)", bareWatcher))
    print(row("bare file A → B, scan requested over the API", bareNudged))
    print(row("multidoc save → imported on the peer, without the nudge (one-way)", without.oneWay))
    print(row("multidoc save → imported on the peer, with the nudge (one-way)", with.oneWay))
    print(row("… of which A → B (the ping)", with.toB))
    print(row("… of which B → A (the answer)", with.toA))
    print(row("multidoc lone save (1.6 s apart) → imported on the peer, with the nudge (syncthing.oneway.p50)", lone))
    print(row("multidoc ping round trip, without the nudge", without.roundTrip))
    print(row("multidoc ping round trip, with the nudge", with.roundTrip))
} catch {
    _ = try? Command.run(script, ["stop", pairHome.path], timeout: 60)
    fail("\(error)")
}
// Stop exactly the pair this run started before its pid files go with the folder.
_ = try? Command.run(script, ["stop", pairHome.path], timeout: 60)
try? FileManager.default.removeItem(at: home)
/// Runs a program to completion with posix_spawn and waitpid: the pair script leaves two
/// background processes behind, and Foundation's `Process.waitUntilExit` was seen to hang on
/// such a script here.
enum Command {
    struct Result: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static func run(_ path: String, _ arguments: [String], timeout: TimeInterval) throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("command-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outPath = scratch.appendingPathComponent("out").path, errPath = scratch.appendingPathComponent("err").path

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environment = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environment.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environment)
        guard spawned == 0 else { throw PairError("cannot start \(path): \(String(cString: strerror(spawned)))") }

        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(timeout)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw PairError("\(path) \(arguments.joined(separator: " ")) did not finish in \(Int(timeout)) s")
            }
            usleep(20_000)
        }
        let exited = (status & 0x7f) == 0
        let read = { (path: String) in (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        return Result(status: exited ? (status >> 8) & 0xff : 128 + (status & 0x7f), stdout: read(outPath), stderr: read(errPath))
    }
}

