#if canImport(Glibc)
import Glibc
#endif
import Engine
import Foundation

/// One container that device A filled with `documents` documents (`Doc0`, `Doc1`, …), and
/// device B that imported them all (`multidoc list`, then `multidoc sync`), shared by the list, pass, idle, CLI,
/// join and memory rows so the slow fill and first import happen once per run. Each step runs
/// the first time a scenario needs it.
final class ScaleWorkspace {
    let programs: Programs
    let space: Workspace
    let store: String
    let documents: Int
    private var filled = false
    /// B's first `multidoc list` (discovers and previews everything) and the one after
    /// `multidoc sync` imported it all (looks at every store and marks them quiet), in seconds.
    private(set) var preparedB: (cold: Double, second: Double)?

    init(_ programs: Programs, folder: URL, store: String, documents: Int) throws {
        self.programs = programs
        space = try Workspace(folder)
        self.store = store
        self.documents = documents
    }

    var container: URL { space.container }
    func root(_ device: String) -> URL { space.root(device) }

    /// The container with `documents` documents, as device A made them.
    func fill() throws {
        guard !filled else { return }
        progress("  filling the container with \(documents) documents …")
        try space.fill(documents: documents)
        filled = true
    }

    /// `multidoc` arguments for `device` on this workspace.
    func arguments(_ verb: [String], device: String) -> [String] {
        verb + ["--root", root(device).path, "--container", container.path, "--store", store, "--device-name", device]
    }

    /// Runs `multidoc` for `device` (its output under the workspace); fails on a non-zero exit.
    func multidoc(_ verb: [String], device: String, output name: String, timeout: Duration = .seconds(900)) throws -> Command.Result {
        let result = try Command.run(programs.multidoc, arguments(verb, device: device),
                                     output: space.folder.appendingPathComponent(name), timeout: timeout)
        guard result.status == 0 else {
            throw BenchError("multidoc \(verb.joined(separator: " ")) on \(device) exited with \(result.status); see \(result.errors.path)")
        }
        return result
    }

    /// `multidoc list --json` on `device`: its wall time and the documents it listed.
    func list(device: String, timeout: Duration = .seconds(900)) throws -> (seconds: Double, listed: [Listed]) {
        let result = try multidoc(["list", "--json"], device: device, output: "list-\(device).json", timeout: timeout)
        guard let data = try? Data(contentsOf: result.output),
              let rows = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else {
            throw BenchError("multidoc list on \(device) printed no JSON array; see \(result.output.path)")
        }
        return (result.seconds, rows.map { Listed(name: $0["name"] as? String ?? "", viewable: $0["viewable"] as? Bool ?? false) })
    }

    struct Listed {
        var name: String
        var viewable: Bool
    }

    /// Device B with every document imported and marked quiet, nothing pending: the state every
    /// later command on B starts from.
    func prepareB() async throws -> (cold: Double, second: Double) {
        if let preparedB { return preparedB }
        try fill()
        try FileManager.default.createDirectory(at: root("B"), withIntermediateDirectories: true)
        progress("  multidoc list on B, first run (discovers and previews \(documents) documents) …")
        let (cold, listed) = try list(device: "B")
        guard listed.count == documents else { throw BenchError("multidoc list showed \(listed.count) of \(documents) documents") }
        progress("  multidoc sync on B (imports \(documents) documents) …")
        _ = try multidoc(["sync"], device: "B", output: "sync-B.out")
        // Files younger than two seconds are not trusted as quiet (coarse file times), so the
        // second run looks at every store again and marks them quiet; the third is the steady
        // state every later command sees.
        try await Task.sleep(for: .milliseconds(2_100))
        progress("  multidoc list on B, second run (looks at every store, marks them quiet) …")
        let (second, _) = try list(device: "B")
        preparedB = (cold, second)
        return (cold, second)
    }
}

extension Workspace {
    /// Device A's documents `Doc0` … in the container, made by ``ContainerFiller``.
    func fill(documents: Int) throws {
        let filler = ContainerFiller(container: container, deviceName: "A")
        for index in 0..<documents {
            try filler.addDocument(named: "Doc\(index)")
            if (index + 1) % 1000 == 0 { progress("  \(index + 1) documents in the container") }
        }
    }
}

/// What `multidocd` says in its status file.
struct DaemonStatusFile {
    var documents: Int
    var passes: Int

    init?(root: URL) {
        guard let data = try? Data(contentsOf: DeviceRoot(url: root).daemonStatusURL),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let documents = object["documents"] as? Int, let passes = object["passes"] as? Int else { return nil }
        self.documents = documents
        self.passes = passes
    }
}

/// CPU time (user + system) a process used so far, from `/proc/<pid>/stat`.
func cpuTime(of pid: pid_t) throws -> Duration {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { throw BenchError("cannot read /proc/\(pid)/stat") }
    // After the command name: field 3 (state) first, so utime (14) and stime (15) are 11 and 12.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    let ticksPerSecond = sysconf(Int32(_SC_CLK_TCK))
    guard fields.count > 12, let user = Int64(fields[11]), let system = Int64(fields[12]), ticksPerSecond > 0 else {
        throw BenchError("cannot parse /proc/\(pid)/stat")
    }
    return .nanoseconds((user + system) * 1_000_000_000 / Int64(ticksPerSecond))
}

extension Scenarios {
    struct Idle {
        var cpuPercent: Double
        var passes: Int
        var windowSeconds: Double
        var settleSeconds: Double
        /// Whether the daemon's pass count stood still for 3 s before the window (else the
        /// window started after 300 s of passes).
        var settled: Bool
        var documents: Int
    }

    /// `multidocd` on B, once its passes stopped: its CPU time and passes over `seconds`.
    static func daemonIdle(_ scale: ScaleWorkspace, seconds: Int) async throws -> Idle {
        _ = try await scale.prepareB()
        let root = scale.root("B")
        let daemon = try Child(scale.programs.multidocd, [
            "--root", root.path, "--container", scale.container.path, "--device-name", "B", "--store", scale.store,
            "--log-level", "warning",
        ], log: scale.space.folder.appendingPathComponent("multidocd-idle.log"))
        defer { if daemon.process.isRunning { kill(daemon.process.processIdentifier, SIGKILL) } }
        let start = ContinuousClock.now
        let giveUp = start + .seconds(300)
        var lastPasses = -1
        var lastChange = start
        var settled = false
        var first: DaemonStatusFile?
        progress("  waiting until multidocd on B stops passing (3 s without one, at most 300 s) …")
        while ContinuousClock.now < giveUp {
            guard daemon.process.isRunning else { throw BenchError("multidocd on B exited; see \(daemon.log.path)") }
            if let status = DaemonStatusFile(root: root), status.passes >= 1 {
                first = first ?? status
                if status.passes != lastPasses {
                    lastPasses = status.passes
                    lastChange = ContinuousClock.now
                } else if ContinuousClock.now - lastChange >= .seconds(3) {
                    settled = true
                    break
                }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        guard let first else { throw BenchError("multidocd on B finished no pass in 300 s; see \(daemon.log.path)") }
        guard first.documents >= scale.documents else {
            throw BenchError("multidocd on B counts \(first.documents) of \(scale.documents) documents")
        }
        let settle = ContinuousClock.now - start
        if !settled { progress("  multidocd kept passing for 300 s; measuring anyway") }
        progress("  measuring its CPU time for \(seconds) s …")
        let pid = daemon.process.processIdentifier
        guard let before = DaemonStatusFile(root: root) else { throw BenchError("multidocd on B has no status file") }
        let cpuBefore = try cpuTime(of: pid)
        let windowStart = ContinuousClock.now
        try await Task.sleep(for: .seconds(seconds))
        let cpuAfter = try cpuTime(of: pid)
        let window = ContinuousClock.now - windowStart
        guard let after = DaemonStatusFile(root: root) else { throw BenchError("multidocd on B has no status file") }
        kill(pid, SIGTERM)
        guard await daemon.wait(timeout: .seconds(40)) == 0 else { throw BenchError("multidocd on B did not stop cleanly; see \(daemon.log.path)") }
        return Idle(cpuPercent: (cpuAfter - cpuBefore).milliseconds / window.milliseconds * 100, passes: after.passes - before.passes,
                    windowSeconds: window.milliseconds / 1000, settleSeconds: settle.milliseconds / 1000, settled: settled,
                    documents: after.documents)
    }

    struct CLITimes {
        var document: String
        var runs: Int
        var showMs: Double
        var appendMs: Double
        var newMs: Double
        var listMs: Double
    }

    /// Median wall times of `multidoc show`, `edit --append`, `new` and `list --json` on B with
    /// everything imported and no daemon: one warm-up run, then `runs` timed runs of each.
    static func cli(_ scale: ScaleWorkspace, runs: Int = 7) async throws -> CLITimes {
        _ = try await scale.prepareB()
        let document = "Doc\(min(123, scale.documents - 1))"
        var created = 0
        func median(_ label: String, _ verb: () -> [String]) throws -> Double {
            progress("  multidoc \(label), 1 + \(runs) runs …")
            var samples: [Double] = []
            for run in 0...runs {
                let result = try scale.multidoc(verb(), device: "B", output: "cli-\(label).out", timeout: .seconds(300))
                if run > 0 { samples.append(result.milliseconds) }
            }
            samples.sort()
            return samples[samples.count / 2]
        }
        let show = try median("show") { ["show", document] }
        let append = try median("append") { ["edit", document, "--append", "x"] }
        let new = try median("new") {
            created += 1
            return ["new", "Bench\(created)"]
        }
        let list = try median("list") { ["list", "--json"] }
        return CLITimes(document: document, runs: runs, showMs: show, appendMs: append, newMs: new, listMs: list)
    }

    /// A fresh device J lists the container until every one of its `documents` is viewable
    /// (running `multidoc sync` between lists that are not there yet): seconds from the first
    /// command's start, and the commands it took.
    static func join(_ scale: ScaleWorkspace) async throws -> (seconds: Double, commands: Int) {
        try scale.fill()
        try FileManager.default.createDirectory(at: scale.root("J"), withIntermediateDirectories: true)
        let expected = Set((0..<scale.documents).map { "Doc\($0)" })
        let start = ContinuousClock.now
        let deadline = start + .seconds(600)
        var commands = 0
        func remaining() throws -> Duration {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw BenchError("device J did not see all \(scale.documents) documents viewable within 600 s") }
            return left
        }
        while true {
            let (_, listed) = try scale.list(device: "J", timeout: try remaining())
            commands += 1
            let viewable = Set(listed.filter(\.viewable).map(\.name))
            let missing = expected.subtracting(viewable).count
            if missing == 0 { break }
            progress("  J lists \(expected.count - missing) of \(expected.count) documents viewable; multidoc sync …")
            _ = try scale.multidoc(["sync"], device: "J", output: "sync-J.out", timeout: try remaining())
            commands += 1
        }
        return ((ContinuousClock.now - start).milliseconds / 1000, commands)
    }
}
