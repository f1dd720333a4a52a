import Foundation
import Testing
import TestSupport

extension Tag {
    /// Whole days of use played with real processes (`swift test --filter DaysOfUse`).
    @Tag static var daysOfUse: Self
}

/// Issue 35's proof: whole days of use, played at random with real processes on 3–5 devices
/// sharing one container (SQLite and JSON stores mixed): documents made, edited at the end and at
/// random places, renamed, deleted and restored, converted; commands SIGKILLed part way; a device
/// cut off from the container; daemons started, stopped and killed; a clock years off; container
/// files damaged. Then everything heals and every device syncs until nothing changes, and the
/// oracle checks that every device shows the same documents with the same texts, that every edit
/// a command acknowledged is there exactly once (unless its document was deleted, or the test
/// damaged a log it was in), that a device's appends keep their order, and that no process
/// crashed.
///
/// Seeds are printed. `MULTIDOC_DAYS_SEED=<n>` replays one, `MULTIDOC_DAYS_SEEDS=<n>` plays n
/// random ones, `MULTIDOC_DAYS_STEPS=<n>` sets the steps of a day (Tools/soak-days.sh). A failing
/// day prints its seed and the steps it took.
@Suite(.serialized, .tags(.daysOfUse)) struct DaysOfUseTests {
    static let environment = ProcessInfo.processInfo.environment

    /// The days to play: one replayed, n for a soak, or the default run's.
    static func seeds() -> [UInt64] {
        if let one = environment["MULTIDOC_DAYS_SEED"].flatMap({ UInt64($0) }) { return [one] }
        let count = environment["MULTIDOC_DAYS_SEEDS"].flatMap { Int($0) } ?? 3
        return (0..<max(1, count)).map { _ in UInt64.random(in: 0...UInt64.max) }
    }

    @Test func daysOfUse() async throws {
        let steps = Self.environment["MULTIDOC_DAYS_STEPS"].flatMap { Int($0) } ?? 110
        var totals = StepCounts()
        let started = ContinuousClock.now
        for seed in Self.seeds() {
            print("DaysOfUse: seed \(seed) (MULTIDOC_DAYS_SEED=\(seed) replays it)")
            let day = try Day(seed: seed, steps: steps)
            // MULTIDOC_DAYS_KEEP=1 keeps the day's folder (roots, container, daemon logs) to look at.
            defer { if Self.environment["MULTIDOC_DAYS_KEEP"] == nil { day.folder.remove() } else { print("DaysOfUse: kept \(day.folder.url.path)") } }
            try await day.play()
            totals.merge(day.counts)
            print("DaysOfUse: seed \(seed): \(day.summary)")
            print("DaysOfUse: seed \(seed): commands that exited non-zero (allowed, documented codes): \(day.refusalDigest)")
            if !day.failures.isEmpty {
                print("DaysOfUse: seed \(seed) FAILED; steps taken (replay with MULTIDOC_DAYS_SEED=\(seed)):\n" + day.steps.joined(separator: "\n"))
                for failure in day.failures { Issue.record("seed \(seed): \(failure.message)") }
            }
        }
        print("DaysOfUse: \(totals) in \(ContinuousClock.now - started)")
        // The default run must cover every kind of step.
        let missing = StepKind.allCases.filter { totals.counts[$0, default: 0] == 0 }
        if Self.environment["MULTIDOC_DAYS_SEED"] == nil, steps >= 50 {
            #expect(missing.isEmpty, "no step of kind \(missing.map(\.rawValue)) was played")
        }
    }
}

/// The kinds of step a day is made of.
enum StepKind: String, CaseIterable, Comparable {
    case new, append = "edit --append", insertText = "edit --text", insertAt = "edit --insert", insertEditor = "edit ($EDITOR)", rename, rm, restore, convert, sync
    case partition, reconnect, daemonStart = "daemon start", daemonStop = "daemon SIGTERM", daemonKill = "daemon SIGKILL"
    case skew = "clock skew", unskew = "clock back", damage

    static func < (a: Self, b: Self) -> Bool { (allCases.firstIndex(of: a) ?? 0) < (allCases.firstIndex(of: b) ?? 0) }

    /// A command that may be killed part way.
    var killable: Bool { [.new, .append, .insertText, .insertAt, .insertEditor, .rename, .rm, .restore, .convert, .sync].contains(self) }
}

/// How many steps of each kind were played, and how many of them were killed part way.
struct StepCounts: CustomStringConvertible {
    var counts: [StepKind: Int] = [:]
    var kills: [StepKind: Int] = [:]

    mutating func merge(_ other: StepCounts) {
        counts.merge(other.counts, uniquingKeysWith: +)
        kills.merge(other.kills, uniquingKeysWith: +)
    }

    var description: String {
        counts.keys.sorted().map { kind in
            "\(kind.rawValue) \(counts[kind, default: 0])" + (kills[kind].map { " (\($0) killed)" } ?? "")
        }.joined(separator: ", ")
    }
}

/// Something the oracle or a process found wrong.
struct DayFailure {
    var message: String
}

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

    func takeStep() async throws {
        let kind = pickKind()
        let device = devices.randomElement(using: &random) ?? devices[0]
        let kill = kind.killable && random.chance(0.2)
        counts.counts[kind, default: 0] += 1
        var wasKilled = false
        switch kind {
        case .new:
            let live = liveDocuments
            let name: String
            if let shared = live.randomElement(using: &random), random.chance(0.15) {
                name = shared.names.last ?? "Notes"
            } else {
                names += 1
                name = "Doc\(names)"
            }
            wasKilled = try await create(on: device, name: name, kill: kill)
        case .append, .insertText, .insertAt, .insertEditor:
            guard let document = liveDocuments.randomElement(using: &random) else { return }
            wasKilled = try await edit(kind, document, on: device, kill: kill)
        case .rename:
            guard let document = liveDocuments.randomElement(using: &random) else { return }
            names += 1
            let name = "R\(names)"
            let run = try await multidoc(device, ["rename", document.uuid, name], kill: kill)
            log("\(device.name): rename \(document.uuid.prefix(8)) \(name) → \(run.ending)")
            if run.ending != .exited(3) { document.names.append(name) }
            wasKilled = run.ending == .killed
        case .rm:
            guard let document = liveDocuments.randomElement(using: &random) else { return }
            let run = try await multidoc(device, ["rm", document.uuid], kill: kill)
            log("\(device.name): rm \(document.uuid.prefix(8)) → \(run.ending)")
            if run.ending != .exited(3) { document.removeAttempted = true }
            if run.ok { document.removedBy.append(device.name) }
            wasKilled = run.ending == .killed
        case .restore:
            let removed = documentOrder.compactMap { documents[$0] }.filter { !$0.removedBy.isEmpty }
            guard let document = removed.randomElement(using: &random) else { return }
            // Mostly where it was deleted; sometimes a peer, whose trash may hold it too.
            let by = random.chance(0.7) ? devices.first { $0.name == document.removedBy.first } ?? device : device
            let run = try await multidoc(by, ["restore", document.uuid, "--json"], kill: kill)
            let restored = (run.json() as? [String: Any])?["uuid"] as? String
            log("\(by.name): restore \(document.uuid.prefix(8)) → \(run.ending)\(restored.map { " as \($0.prefix(8))" } ?? "")")
            if let restored, run.ok { learn(restored.lowercased(), name: (run.json() as? [String: Any])?["name"] as? String ?? "?") }
            if run.ending == .killed { killedCreates += 1 }
            wasKilled = run.ending == .killed
        case .convert:
            guard let document = liveDocuments.randomElement(using: &random) else { return }
            let to = Bool.random(using: &random) ? "sqlite" : "json"
            let run = try await multidoc(device, ["convert", document.uuid, "--to", to], kill: kill)
            log("\(device.name): convert \(document.uuid.prefix(8)) --to \(to) → \(run.ending)")
            wasKilled = run.ending == .killed
        case .sync:
            let run = try await multidoc(device, ["sync"], kill: kill)
            log("\(device.name): sync → \(run.ending)")
            wasKilled = run.ending == .killed
        case .partition:
            guard let device = devices.filter({ $0.partition == nil }).randomElement(using: &random) else { return }
            // Its daemon, if one runs, stays: a container unmounted under it.
            if random.chance(0.5) {
                device.partition = folder.appending("missing-\(device.name)")
            } else {
                let elsewhere = folder.appending("elsewhere-\(device.name)")
                try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
                device.partition = elsewhere
            }
            try mount(device)
            log("\(device.name): partitioned (its container is \(device.partition?.lastPathComponent ?? "?"))")
        case .reconnect:
            guard let device = devices.filter({ $0.partition != nil }).randomElement(using: &random) else { return }
            device.partition = nil
            try mount(device)
            log("\(device.name): reconnected")
        case .daemonStart:
            guard let device = devices.filter({ $0.daemon == nil }).randomElement(using: &random) else { return }
            try startDaemon(device)
        case .daemonStop, .daemonKill:
            guard let device = devices.filter({ $0.daemon != nil }).randomElement(using: &random) else { return }
            try await stopDaemon(device, kind == .daemonStop ? SIGTERM : SIGKILL, because: "step")
        case .skew:
            try await stopDaemon(device, SIGTERM, because: "clock skew")
            let offsets = [3600 * 24 * 365, -3600 * 24 * 365, 3600 * 24, -3600 * 24, 600, -600]
            device.clockOffset = offsets.randomElement(using: &random)
            log("\(device.name): clock off by \(device.clockOffset ?? 0) s")
        case .unskew:
            guard let device = devices.filter({ $0.clockOffset != nil }).randomElement(using: &random) else { return }
            try await stopDaemon(device, SIGTERM, because: "clock back")
            device.clockOffset = nil
            log("\(device.name): clock right again")
        case .damage:
            damageAFile()
        }
        if wasKilled { counts.kills[kind, default: 0] += 1 }
    }

    /// Points the device's container path at the container, at the folder it is partitioned to,
    /// or (partitioned to a missing folder) at nothing: the container unmounted.
    func mount(_ device: DayDevice) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: device.mount.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? manager.removeItem(at: device.mount)
        let target = device.partition ?? container
        if target == container || manager.fileExists(atPath: target.path) {
            try manager.createSymbolicLink(at: device.mount, withDestinationURL: target)
        }
    }

    func learn(_ uuid: String, name: String) {
        guard documents[uuid] == nil else { return }
        documents[uuid] = DayDocument(uuid: uuid, name: name)
        documentOrder.append(uuid)
    }

    /// `new NAME`; whether it was killed.
    func create(on device: DayDevice, name: String, kill: Bool) async throws -> Bool {
        let run = try await multidoc(device, ["new", name, "--json"], kill: kill)
        let uuid = (run.json() as? [String: Any])?["uuid"] as? String
        log("\(device.name): new \(name) → \(run.ending)\(uuid.map { " \($0.prefix(8))" } ?? "")")
        if run.ok {
            if let uuid { learn(uuid.lowercased(), name: name) } else { fail("\(device.name): new \(name) said no UUID: \(run.stdout)") }
        }
        if run.ending == .killed { killedCreates += 1 }
        return run.ending == .killed
    }

    /// An edit carrying a new marker: at the end, or at a random place (`--text` with the text
    /// `show` gave, or $EDITOR); whether it was killed.
    func edit(_ kind: StepKind, _ document: DayDocument, on device: DayDevice, kill: Bool) async throws -> Bool {
        device.markers += 1
        let marker = " <\(device.name)\(device.markers)>"
        let run: Run
        switch kind {
        case .insertText, .insertAt:
            // Only while no daemon runs: nothing changes the text between `show` and `edit`.
            let show = try await multidoc(device, ["show", document.uuid, "--json"])
            guard show.ok, let text = (show.json() as? [String: Any])?["text"] as? String else {
                log("\(device.name): show \(document.uuid.prefix(8)) (for edit --text) → \(show.ending)")
                return false
            }
            var places = [text.startIndex, text.endIndex]
            var search = text.startIndex
            while let found = text.range(of: " <", range: search..<text.endIndex) {
                places.append(found.lowerBound)
                search = found.upperBound
            }
            let place = places.randomElement(using: &random) ?? text.endIndex
            if kind == .insertAt {
                // Positions count Unicode scalars.
                let position = text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: place)
                run = try await multidoc(device, ["edit", document.uuid, "--insert", String(position), marker], kill: kill)
            } else {
                var edited = text
                edited.insert(contentsOf: marker, at: place)
                run = try await multidoc(device, ["edit", document.uuid, "--text", edited], kill: kill)
            }
        case .insertEditor:
            let slot = Int.random(in: 0..<1000, using: &random)
            run = try await multidoc(device, ["edit", document.uuid], kill: kill,
                                     extra: ["EDITOR": editor.path, "DAYS_MARKER": marker, "DAYS_SLOT": String(slot)])
        default:
            run = try await multidoc(device, ["edit", document.uuid, "--append", marker], kill: kill)
        }
        log("\(device.name): \(kind.rawValue) \(document.uuid.prefix(8)) '\(marker)' → \(run.ending)")
        markers.append(Marker(text: marker, device: device.name, document: document.uuid, step: step, appended: kind == .append, acknowledged: run.ok))
        return run.ending == .killed
    }

    // MARK: Daemons

    func startDaemon(_ device: DayDevice) throws {
        device.daemonStarts += 1
        let arguments = ["--root", device.root.path, "--container", device.mount.path, "--store", device.store, "--log-level", "notice"]
        device.daemon = try Daemon(arguments: arguments, environment: launcher.environment(device.environment),
                                   log: folder.appending("multidocd-\(device.name)-\(device.daemonStarts).log"))
        log("\(device.name): multidocd started")
    }

    func stopDaemon(_ device: DayDevice, _ signal: Int32, because reason: String) async throws {
        guard let daemon = device.daemon else { return }
        device.daemon = nil
        if reason != "step" { counts.counts[.daemonStop, default: 0] += 1 }
        // Before its status file is written the daemon may not handle signals yet (SIGTERM in
        // its first ~30 ms ends it like a kill would).
        let status = (try? Data(contentsOf: device.root.appendingPathComponent("multidocd.status.json")))
            .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        let up = (status?["pid"] as? Int).map { Int32($0) == daemon.process.processIdentifier } ?? false
        let ending = await daemon.stop(signal)
        log("\(device.name): multidocd \(signal == SIGKILL ? "SIGKILL" : "SIGTERM") (\(reason)) → \(ending)")
        if signal == SIGKILL { counts.kills[.daemonKill, default: 0] += ending == .killed ? 1 : 0 }
        if signal == SIGTERM, ending == .signalled(SIGTERM), !up {
            sigtermsBeforeUp += 1
        } else if signal == SIGTERM, ending != .exited(0) {
            fail("\(device.name): multidocd did not stop cleanly on SIGTERM (\(ending)): \(daemon.output.suffix(2000))")
        }
        if signal == SIGKILL, ending != .killed, ending != .exited(0) {
            fail("\(device.name): multidocd ended \(ending) before the SIGKILL: \(daemon.output.suffix(2000))")
        }
        if daemon.output.contains("Fatal error") { fail("\(device.name): \"Fatal error\" in multidocd's log: \(daemon.output.suffix(2000))") }
    }

    /// A daemon that ended on its own is a failure unless it ended the documented way.
    func checkDaemons() async throws {
        for device in devices {
            guard let daemon = device.daemon, !daemon.process.isRunning else { continue }
            device.daemon = nil
            let ending = await daemon.stop(nil)
            log("\(device.name): multidocd ended by itself: \(ending)")
            fail("\(device.name): multidocd ended by itself (\(ending)): \(daemon.output.suffix(2000))")
        }
    }

    // MARK: Damage

    func damageAFile() {
        let documentsFolder = container.appendingPathComponent("documents")
        var candidates: [(url: URL, weight: Int)] = []
        for url in regularFiles(under: documentsFolder) {
            let name = url.lastPathComponent
            if name.hasSuffix(".log") { candidates.append((url, 3)) } else if name.hasPrefix("info-") { candidates.append((url, 1)) }
        }
        for url in regularFiles(under: container.appendingPathComponent("tombstones")) { candidates.append((url, 2)) }
        for url in regularFiles(under: container.appendingPathComponent("devices")) { candidates.append((url, 1)) }
        candidates = candidates.filter { damaged[relative($0.url)] == nil }
        let total = candidates.reduce(0) { $0 + $1.weight }
        guard total > 0 else { log("damage: nothing to damage"); return }
        var pick = Int.random(in: 0..<total, using: &random)
        guard let chosen = candidates.first(where: { pick -= $0.weight; return pick < 0 })?.url else { return }
        let damage = Damage.allCases.randomElement(using: &random) ?? .flipBits
        guard let done = Damage.apply(damage, to: chosen, using: &random) else { log("damage: could not damage \(relative(chosen))"); return }
        let path = relative(chosen)
        damaged[path] = done
        log("damage: \(path): \(done)")
        let parts = path.split(separator: "/").map(String.init)
        if parts.first == "documents", parts.count >= 3 {
            let document = documents[parts[1]]
            if parts[2] == "logs", parts.count >= 5 {
                damagedLogs.append((parts[1], parts[3], step))
            } else {
                document?.infoDamaged = true
            }
        } else if parts.first == "tombstones", let uuid = parts.last?.split(separator: ".").first {
            documents[String(uuid)]?.tombstoneDamaged = true
        }
    }

    func relative(_ url: URL) -> String {
        let base = container.standardizedFileURL.path
        let path = url.standardizedFileURL.path
        return path.hasPrefix(base + "/") ? String(path.dropFirst(base.count + 1)) : path
    }

    // MARK: Heal

    /// Whether a line of `container verify` is about the damaged file at `path` (an info file's
    /// damage is named as its document folder's).
    func names(_ problem: String, _ path: String) -> Bool {
        if problem.contains(path) { return true }
        let parts = path.split(separator: "/")
        return parts.count == 3 && parts[2].hasPrefix("info-") && problem.contains("\(parts[0])/\(parts[1]):")
    }

    /// Everything back to normal as a user would bring it: daemons stopped, the container back,
    /// clocks right, damaged files the container's check names removed, `container repair`, and
    /// `sync` on every device until a round changes nothing.
    func heal() async throws {
        log("heal")
        for device in devices {
            try await stopDaemon(device, SIGTERM, because: "heal")
            device.partition = nil
            try mount(device)
            device.clockOffset = nil
        }
        for device in devices {
            let sync = try await multidoc(device, ["sync"])
            // The way out the message gives: a device that had nothing shared took the folder
            // in the container's place for its container; it comes back with `adopt`, and shares
            // again what it made meanwhile.
            if sync.stderr.contains("multidoc container adopt") {
                adoptions += 1
                let adopt = try await multidoc(device, ["container", "adopt"])
                log("\(device.name): sync said \(sync.stderr.prefix(300)); container adopt → \(adopt.ending)")
                let rows = (try await multidoc(device, ["list", "--json"]).json() as? [[String: Any]]) ?? []
                for row in rows where row["location"] as? String == "local" {
                    guard let uuid = (row["uuid"] as? String)?.lowercased() else { continue }
                    let move = try await multidoc(device, ["move-to-cloud", uuid, "--json"])
                    let moved = ((move.json() as? [String: Any])?["uuid"] as? String)?.lowercased()
                    log("\(device.name): move-to-cloud \(uuid.prefix(8)) → \(move.ending)\(moved.map { " as \($0.prefix(8))" } ?? "")")
                    if let moved, moved != uuid { aliases[uuid] = moved }
                }
            }
        }
        // The container's check names the damaged files; a user removes them (nobody can repair
        // a damaged log by hand) and asks each device to repair what they leave missing.
        let verify = try await multidoc(devices[0], ["container", "verify", "--json"])
        let problems = ((verify.json() as? [String: Any])?["problems"] as? [String]) ?? []
        log("verify before removing damaged files: \(problems.count) problems")
        var removed: [String] = []
        for path in damaged.keys.sorted() where problems.contains(where: { names($0, path) }) {
            try? FileManager.default.removeItem(at: container.appendingPathComponent(path))
            removed.append(path)
            detected.insert(path)
        }
        let unnoticed = damaged.keys.filter { !detected.contains($0) && FileManager.default.fileExists(atPath: container.appendingPathComponent($0).path) }
        if !unnoticed.isEmpty { log("damaged files that pass every check: \(unnoticed.sorted())") }
        // Every format 2 log carries a checksum: a damaged one is always named.
        for path in unnoticed.sorted() where path.hasPrefix("documents/") && path.hasSuffix(".log") {
            fail("damaged log \(path) (\(damaged[path] ?? "?")) passes `container verify`")
        }
        for problem in problems where !damaged.keys.contains(where: { names(problem, $0) }) {
            log("verify named a file the test did not damage: \(problem)")
        }
        log("removed \(removed.count) damaged files: \(removed)")
        if !removed.isEmpty {
            for device in devices {
                let repair = try await multidoc(device, ["container", "repair", "--json"])
                log("\(device.name): container repair → \(repair.ending) \(repair.stdout.prefix(300))")
            }
        }
        var previous: [String] = []
        for round in 1...8 {
            healRounds = round
            var moved = 0
            for device in devices {
                let sync = try await multidoc(device, ["sync", "--json"])
                if !sync.ok { log("\(device.name): heal sync → \(sync.ending): \(sync.stderr.prefix(500))") }
                if let report = sync.json() as? [String: Any] {
                    for key in ["importedLogs", "exportedLogs", "discovered", "removed"] {
                        if let number = report[key] as? Int { moved += number } else if let array = report[key] as? [Any] { moved += array.count }
                    }
                }
            }
            var lists: [String] = []
            for device in devices { lists.append(try await multidoc(device, ["list", "--json"]).stdout) }
            log("heal round \(round): \(moved) logs/documents moved")
            if moved == 0, lists == previous { break }
            previous = lists
            if round == 8 { fail("the devices still changed after 8 rounds of sync") }
        }
    }

    // MARK: The oracle

    func judge() async throws {
        // Every device lists the same documents under the same names.
        var listed: [String: [String: String]] = [:]
        for device in devices {
            let list = try await multidoc(device, ["list", "--json"])
            guard list.ok, let rows = list.json() as? [[String: Any]] else {
                fail("\(device.name): list after the heal → \(list.ending): \(list.stderr)")
                continue
            }
            var byUUID: [String: String] = [:]
            for row in rows {
                if let uuid = (row["uuid"] as? String)?.lowercased() { byUUID[uuid] = row["name"] as? String ?? "?" }
                if let problem = row["problem"] { fail("\(device.name) lists \(row["name"] ?? "?") with a problem: \(problem)") }
            }
            listed[device.name] = byUUID
        }
        let reference = listed[devices[0].name] ?? [:]
        for device in devices.dropFirst() where listed[device.name] != reference {
            let mine = listed[device.name] ?? [:]
            for uuid in Set(mine.keys).union(reference.keys).sorted() where mine[uuid] != reference[uuid] {
                fail("document \(uuid.prefix(8)) is listed as \(reference[uuid].map { "'\($0)'" } ?? "nothing") on \(devices[0].name), "
                     + "\(mine[uuid].map { "'\($0)'" } ?? "nothing") on \(device.name)")
            }
        }
        // Every document's text is the same everywhere.
        var texts: [String: String] = [:]
        for uuid in reference.keys.sorted() {
            for device in devices {
                let show = try await multidoc(device, ["show", uuid, "--json"])
                guard show.ok, let text = (show.json() as? [String: Any])?["text"] as? String else {
                    // A device the damage left listing nothing of it has nothing to show: the listing's cause.
                    fail("\(device.name): show \(uuid.prefix(8)) after the heal → \(show.ending): \(show.stderr)")
                    continue
                }
                if let other = texts[uuid], other != text {
                    fail("document \(uuid.prefix(8)) ('\(reference[uuid] ?? "")') differs: \(devices[0].name) has '\(other)', \(device.name) has '\(text)'")
                } else {
                    texts[uuid] = text
                }
            }
        }
        // Documents: those the test knows are there unless deleted; named as someone named them.
        for (old, new) in aliases { texts[old] = texts[new] }
        for uuid in documentOrder {
            guard let document = documents[uuid] else { continue }
            let uuid = aliases[uuid] ?? uuid
            if let name = reference[uuid] {
                if !document.removedBy.isEmpty {
                    fail("document \(uuid.prefix(8)) was deleted (rm acknowledged on \(document.removedBy)) but is listed as '\(name)'")
                }
                if !document.names.contains(name) { fail("document \(uuid.prefix(8)) is named '\(name)', never one of \(document.names)") }
            } else if !document.removeAttempted {
                if document.infoDamaged {
                    log("document \(uuid.prefix(8)) is gone; its info file was damaged")
                } else {
                    fail("document \(uuid.prefix(8)) ('\(document.names.last ?? "")') vanished: nobody deleted it")
                }
            }
        }
        let unknown = Set(reference.keys).subtracting(documentOrder.map { aliases[$0] ?? $0 })
        if unknown.count > killedCreates {
            fail("\(unknown.count) documents nobody made (only \(killedCreates) creates or restores were killed): \(unknown.sorted().map { $0.prefix(8) })")
        }
        // Every acknowledged edit once, nothing twice, each device's appends in order.
        for marker in markers {
            guard let text = texts[marker.document], let document = documents[marker.document] else { continue }
            let count = occurrences(marker.text, in: text)
            if count > 1 {
                fail("'\(marker.text)' (\(marker.device), step \(marker.step)) is \(count) times in \(marker.document.prefix(8)): '\(text)'")
            }
            guard marker.acknowledged, count == 0 else { continue }
            let writer = devices.first { $0.name == marker.device }?.id ?? ""
            let damagedAfter = damagedLogs.contains { $0.document == marker.document && $0.device == writer && $0.step > marker.step }
            if damagedAfter || document.infoDamaged || document.tombstoneDamaged {
                toleratedMissing += 1
            } else {
                fail("'\(marker.text)' (\(marker.device), step \(marker.step), acknowledged) is missing from \(marker.document.prefix(8)): '\(text)'")
            }
        }
        for device in devices {
            for uuid in documentOrder {
                guard let text = texts[uuid] else { continue }
                let mine = markers.filter { $0.device == device.name && $0.document == uuid && $0.appended }.sorted { $0.step < $1.step }
                let places = mine.compactMap { text.range(of: $0.text)?.lowerBound }
                if places != places.sorted() {
                    fail("\(device.name)'s appends to \(uuid.prefix(8)) are out of the order it made them: \(mine.map(\.text)) in '\(text)'")
                }
            }
        }
        // The container checks clean, or names only files the test damaged.
        let verify = try await multidoc(devices[0], ["container", "verify", "--json"])
        let problems = ((verify.json() as? [String: Any])?["problems"] as? [String]) ?? []
        let unexplained = problems.filter { problem in !damaged.keys.contains { names(problem, $0) } }
        if !unexplained.isEmpty { fail("container verify after the heal: \(unexplained)") }
        if verify.json() == nil { fail("container verify --json → \(verify.ending): \(verify.stderr)") }
    }
}
