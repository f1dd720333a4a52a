import Engine
import Foundation
import Model

/// Long texts seen from the outside: `multidoc edit --append` and B's `multidoc show` (which
/// imports that one save first) as real processes on documents of 10k and 1M characters, and a
/// 40 MB text saved on A, carried to B, then followed by a one-character edit.
enum LongText {
    struct CommandTimes {
        /// Median wall milliseconds of `multidoc edit DOC --append x` on A, per length.
        var appendMs: [Int: Double] = [:]
        /// Median wall milliseconds of `multidoc show DOC` on B right after, per length.
        var showMs: [Int: Double] = [:]
        var runs = 0
    }

    /// The document of each length on A, imported by B, both closed; then `runs` + 1 rounds,
    /// each an append on A and a show on B for every length in turn (the first round not
    /// counted), so the lengths see the same machine. B's last show must end with every `x`
    /// appended, or the figures mean nothing.
    static func commands(_ programs: Programs, folder: URL, store: String, lengths: [Int], runs: Int) async throws -> CommandTimes {
        var times = CommandTimes(runs: runs)
        var spaces: [(length: Int, space: Workspace, name: String)] = []
        for length in lengths {
            let space = try Workspace(folder.appendingPathComponent("append-\(length)"))
            let name = "Long\(length)"
            let (_, a) = try space.library("A", store: store)
            await a.sync()
            let document = try await a.create(name: try DocumentName(name))
            try await a.setText(document.id, text(length: length))
            await a.closeAll()
            let (_, b) = try space.library("B", store: store)
            await b.sync()
            await b.closeAll()
            spaces.append((length, space, name))
        }
        func multidoc(_ verb: [String], _ device: String, in space: Workspace) throws -> Command.Result {
            let arguments = verb + ["--root", space.root(device).path, "--container", space.container.path, "--store", store, "--device-name", device]
            let result = try Command.run(programs.multidoc, arguments, output: space.folder.appendingPathComponent("\(device).out"), timeout: .seconds(300))
            guard result.status == 0 else {
                throw BenchError("multidoc \(verb.joined(separator: " ")) on \(device) exited with \(result.status); see \(result.errors.path)")
            }
            return result
        }
        progress("  \(lengths.map(String.init).joined(separator: ", ")) characters: edit --append on A and show on B, 1 + \(runs) rounds, lengths in turn …")
        var appends: [Int: [Double]] = [:], shows: [Int: [Double]] = [:]
        for round in 0...runs {
            for (length, space, name) in spaces {
                let append = try multidoc(["edit", name, "--append", "x"], "A", in: space)
                let show = try multidoc(["show", name], "B", in: space)
                if round > 0 {
                    appends[length, default: []].append(append.milliseconds)
                    shows[length, default: []].append(show.milliseconds)
                }
                if round == runs {
                    let shown = String(decoding: try Data(contentsOf: show.output), as: UTF8.self)
                    let expected = String(repeating: "x", count: runs + 1)
                    guard shown.trimmingCharacters(in: .newlines).hasSuffix(expected) else {
                        throw BenchError("B's show of \(name) does not end with the \(runs + 1) appended characters; see \(show.output.path)")
                    }
                }
            }
        }
        for length in lengths {
            times.appendMs[length] = SaveCost.median(appends[length] ?? [])
            times.showMs[length] = SaveCost.median(shows[length] ?? [])
        }
        return times
    }

    struct BigText {
        var megabytes: Int
        /// Seconds of A's save of the whole text (durable, its log in the container).
        var saveSeconds: Double
        /// Seconds from the end of that save until B holds the whole text.
        var arriveSeconds: Double
        /// Milliseconds from the start of A's one-character save after it until B holds it.
        var editMs: Double
    }

    /// A `megabytes` MB text saved on A (in process), imported by B (in process, a targeted
    /// pass), then one character appended on A and imported by B.
    static func big(folder: URL, store: String, megabytes: Int) async throws -> BigText {
        let space = try Workspace(folder)
        let length = megabytes * 1_000_000
        let (_, a) = try space.library("A", store: store)
        await a.sync()
        let document = try await a.create(name: try DocumentName("Big"))
        let (_, b) = try space.library("B", store: store)
        await b.sync()
        await b.inspect(document.id)
        let content = text(length: length)
        progress("  saving \(megabytes) MB on A …")
        let saveStart = ContinuousClock.now
        try await a.setText(document.id, content)
        let saveSeconds = elapsedSeconds(since: saveStart)
        progress("  B imports it …")
        let arriveStart = ContinuousClock.now
        await b.sync(documents: [document.id])
        let arriveSeconds = elapsedSeconds(since: arriveStart)
        guard try await b.detail(document.id).text.unicodeScalars.count == length else {
            throw BenchError("B does not hold the whole \(megabytes) MB text after its pass")
        }
        progress("  one character on A, imported by B …")
        let editStart = ContinuousClock.now
        try await a.appendText(document.id, "x")
        await b.sync(documents: [document.id])
        let editMs = elapsedSeconds(since: editStart) * 1000
        guard try await b.detail(document.id).text.unicodeScalars.count == length + 1 else {
            throw BenchError("B does not hold the character appended after the \(megabytes) MB text")
        }
        await a.closeAll()
        await b.closeAll()
        return BigText(megabytes: megabytes, saveSeconds: saveSeconds, arriveSeconds: arriveSeconds, editMs: editMs)
    }

    /// `length` characters of English-like lines.
    static func text(length: Int) -> String {
        let line = "The quick brown fox jumps over the lazy dog, again and again and again.\n"
        let text = String(repeating: line, count: length / line.unicodeScalars.count + 1)
        return String(text.unicodeScalars.prefix(length))
    }

    static func rows(_ times: CommandTimes, _ big: BigText?, into table: inout Table) {
        let runs = "median of \(times.runs)"
        let append10k = times.appendMs[10_000] ?? 0, append1m = times.appendMs[1_000_000] ?? 0
        table.row("edit.append.10k", "multidoc edit --append x, a 10k-character document (a process, wall), \(runs)", ms: append10k)
        let ratio = append10k > 0 ? append1m / append10k : 0
        table.row("edit.append.1m", "multidoc edit --append x, a 1M-character document, \(runs); value: × edit.append.10k (\(String(format: "%.1f", append1m)) ms)",
                  value: ratio, unit: "× edit.append.10k", text: String(format: "%.2f× (%.1f ms)", ratio, append1m), target: Target("≤ 1.2×", atMost: 1.2))
        table.row("show.import.10k", "B's multidoc show of the 10k document, importing that save first (a process, wall), \(runs)", ms: times.showMs[10_000] ?? 0)
        table.row("show.import.1m", "B's multidoc show of the 1M document, importing that save first, \(runs)", ms: times.showMs[1_000_000] ?? 0)
        guard let big else { return }
        table.row("text.big.save", "a \(big.megabytes) MB text saved on A, in process, durable", value: big.saveSeconds, unit: "s")
        table.row("text.big.arrive", "that text imported by B (a targeted pass, in process), from the end of A's save", value: big.arriveSeconds, unit: "s")
        table.row("text.big.edit", "one character appended on A after it, until B holds it", ms: big.editMs, target: Target("≤ 1000 ms", atMost: 1000))
    }
}
