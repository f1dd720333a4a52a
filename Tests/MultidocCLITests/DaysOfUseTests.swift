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
