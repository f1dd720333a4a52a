import Foundation
import Testing
import TestSupport

/// One day of use: its devices, the model of what they were told, the steps, the heal and the
/// oracle.
final class Day {
    let seed: UInt64
    let stepCount: Int
    var random: SeededGenerator
    let folder: TemporaryDirectory
    let container: URL
    let launcher: Launcher
    let editor: URL
    var devices: [DayDevice] = []
    var documents: [String: DayDocument] = [:]
    /// UUIDs in the order the test learned them (random picks must not depend on hashing).
    var documentOrder: [String] = []
    var markers: [Marker] = []
    var steps: [String] = []
    var failures: [DayFailure] = []
    var counts = StepCounts()
    /// Exits other than 0 during the day, by verb: "exit N: first line of stderr".
    var refusals: [String: [String]] = [:]
    /// Durations of completed runs by verb (ms), so kills land inside a command.
    var durations: [String: [Double]] = [:]
    /// Container files the test damaged (path relative to the container → how).
    var damaged: [String: String] = [:]
    /// Logs the test damaged: (document, writer's UUID, step).
    var damagedLogs: [(document: String, device: String, step: Int)] = []
    /// Damaged files `container verify` named when the heal began (the others passed every
    /// check: their damage went unnoticed).
    var detected: Set<String> = []
    /// Devices the heal had to `container adopt` (they had taken another folder for the container).
    var adoptions = 0
    /// Documents the heal moved to the cloud again under a new UUID: old → new.
    var aliases: [String: String] = [:]
    var names = 0
    var step = 0
    var killedCreates = 0
    var toleratedMissing = 0
    var healRounds = 0
    /// Daemons SIGTERMed before they were up that ended by the signal, not with exit 0.
    var sigtermsBeforeUp = 0

    init(seed: UInt64, steps: Int) throws {
        self.seed = seed
        stepCount = steps
        random = SeededGenerator(seed: seed)
        folder = try TemporaryDirectory("days")
        container = folder.appending("container")
        let scratch = folder.appending("scratch")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        launcher = Launcher(scratch: scratch)
        // $EDITOR for edits at random places: puts $DAYS_MARKER before the $DAYS_SLOT-th marker
        // of the text (modulo their number, the end counting as one), so no marker is split.
        editor = folder.appending("splice.sh")
        let script = """
            #!/bin/sh
            exec perl -0777 -i -pe 'my @at = (0); while (/ </g) { push @at, $-[0] } push @at, length; substr($_, $at[$ENV{DAYS_SLOT} % @at], 0) = $ENV{DAYS_MARKER};' "$1"

            """
        try Data(script.utf8).write(to: editor)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: editor.path)
    }

    var summary: String {
        let refused = refusals.keys.sorted().map { "\($0): \(refusals[$0, default: []].count)" }.joined(separator: ", ")
        let acknowledged = markers.filter(\.acknowledged).count
        return "\(devices.count) devices [\(devices.map { "\($0.name):\($0.store)" }.joined(separator: " "))], \(steps.count) steps, "
            + "\(documents.count) documents known, \(acknowledged) acknowledged edits (\(markers.count - acknowledged) not), "
            + "\(damaged.count) files damaged, \(toleratedMissing) edits missing where a damaged log allowed it, heal rounds \(healRounds), \(adoptions) adopted, \(sigtermsBeforeUp) daemons ended by a SIGTERM before they were up; "
            + "steps: \(counts); refusals: [\(refused)]"
    }

    /// Each distinct refusal once, its UUIDs and paths cut, with how often.
    var refusalDigest: String {
        var seen: [String: Int] = [:]
        for (verb, lines) in refusals {
            for line in lines {
                let short = line.replacingOccurrences(of: #"[0-9a-f]{8}-[0-9a-f-]{27}"#, with: "<uuid>", options: .regularExpression)
                    .replacingOccurrences(of: #"/tmp/[^ ':]*"#, with: "<path>", options: .regularExpression)
                seen["\(verb) \(short.prefix(140))", default: 0] += 1
            }
        }
        return seen.keys.sorted().map { "\n  \(seen[$0] ?? 0)× \($0)" }.joined()
    }

    func fail(_ message: String) {
        failures.append(DayFailure(message: "step \(step): \(message)"))
    }

    func log(_ line: String) { steps.append("#\(step) \(line)") }

    // MARK: Running commands

    /// `multidoc` on `device` (its container, or the folder it is partitioned to; its clock);
    /// with `kill`, SIGKILLed at a random moment within the verb's usual duration.
    @discardableResult
    func multidoc(_ device: DayDevice, _ arguments: [String], kill: Bool = false, extra: [String: String] = [:]) async throws -> Run {
        let verb = arguments.first ?? ""
        var delay: Duration?
        if kill {
            let usual = usualDuration(verb)
            delay = .microseconds(Int64(Double.random(in: usual * 0.15...usual * 1.1, using: &random) * 1000))
        }
        let all = arguments + ["--root", device.root.path, "--store", device.store]
            + (arguments.contains("--container") ? [] : ["--container", device.mount.path])
        let run = try await launcher.run("multidoc", all, environment: device.environment.merging(extra) { _, new in new }, killAfter: delay)
        check(run, what: "\(device.name): multidoc \(arguments.joined(separator: " "))")
        if run.ok { durations[verb, default: []].append(run.duration.milliseconds) }
        if case .exited(let code) = run.ending, code != 0 {
            refusals[verb, default: []].append("exit \(code): \(run.stderr.split(separator: "\n").first ?? "")")
        }
        return run
    }

    /// The median of the verb's last completed runs (ms), 400 before any.
    func usualDuration(_ verb: String) -> Double {
        let recent = (durations[verb] ?? []).suffix(9).sorted()
        return recent.isEmpty ? 400 : recent[recent.count / 2]
    }

    /// A process ending the documented way: no crash, no undocumented exit code.
    func check(_ run: Run, what: String) {
        switch run.ending {
        case .exited(let code) where !documentedExitCodes.contains(code):
            fail("\(what): exit \(code), not in Docs/CLI.md's table: \(run.stderr)")
        case .signalled(let signal):
            fail("\(what): crashed with signal \(signal): \(run.stderr.suffix(2000))")
        case .hung:
            fail("\(what): still running after 90 s")
        default:
            break
        }
        if run.stderr.contains("Fatal error") { fail("\(what): \"Fatal error\" in stderr: \(run.stderr.suffix(2000))") }
    }

    // MARK: The day

    func play() async throws {
        try await setUp()
        for index in 0..<stepCount {
            step = index + 1
            try await takeStep()
            try await checkDaemons()
        }
        step = stepCount + 1
        try await heal()
        try await judge()
    }

    func setUp() async throws {
        let count = Int.random(in: 3...5, using: &random)
        for index in 0..<count {
            let name = String(UnicodeScalar(UInt8(65 + index)))
            let device = DayDevice(name: name, root: folder.appending(name), mount: folder.appending("mounts/\(name)"),
                                   store: Bool.random(using: &random) ? "sqlite" : "json")
            devices.append(device)
            try mount(device)
            var arguments = ["init", "--device-name", name, "--no-input"]
            // The first makes the container, as a user would, through its real path.
            if index == 0 { arguments += ["--container", container.path, "--create-container"] }
            let run = try await multidoc(device, arguments)
            log("\(name): init --store \(device.store) → \(run.ending)")
            guard run.ok else { throw ProductRunner.RunnerError(message: "init \(name) failed: \(run.stderr)") }
            let identity = try JSONSerialization.jsonObject(with: Data(contentsOf: device.root.appendingPathComponent("device.json"))) as? [String: Any]
            device.id = ((identity?["id"] as? String) ?? "").lowercased()
        }
        // Every device has synced through the container once: it knows its identity.
        for device in devices {
            let sync = try await multidoc(device, ["sync"])
            log("\(device.name): sync → \(sync.ending)")
        }
        // A document to start from, on the first device.
        _ = try await create(on: devices[0], name: "Notes", kill: false)
    }

    var liveDocuments: [DayDocument] { documentOrder.compactMap { documents[$0] }.filter { !$0.removeAttempted } }
    var anyDaemon: Bool { devices.contains { $0.daemon != nil } }

    func pickKind() -> StepKind {
        var weights: [(StepKind, Int)] = [(.new, 6), (.append, 14), (.insertText, anyDaemon ? 0 : 5), (.insertAt, anyDaemon ? 0 : 5), (.insertEditor, 6), (.rename, 5), (.rm, 3),
                                          (.convert, 4), (.sync, 4), (.damage, 3)]
        if documents.values.contains(where: { !$0.removedBy.isEmpty }) { weights.append((.restore, 4)) }
        let partitioned = devices.filter { $0.partition != nil }.count
        weights.append(partitioned < devices.count - 1 ? (.partition, 3) : (.partition, 0))
        weights.append((.reconnect, partitioned * 3))
        let running = devices.filter { $0.daemon != nil }.count
        weights.append((.daemonStart, running < devices.count ? 5 : 0))
        weights.append((.daemonStop, running * 2))
        weights.append((.daemonKill, running * 3))
        let skewed = devices.filter { $0.clockOffset != nil }.count
        weights.append((.skew, skewed == 0 ? 3 : 0))
        weights.append((.unskew, skewed * 3))
        let total = weights.reduce(0) { $0 + $1.1 }
        var pick = Int.random(in: 0..<total, using: &random)
        for (kind, weight) in weights {
            if pick < weight { return kind }
            pick -= weight
        }
        return .append
    }
}
