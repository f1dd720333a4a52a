// multidoc-trace: replays real editing traces (github.com/josephg/editing-traces, CC BY 4.0)
// through the whole engine — stores, format 2 logs, one container folder per device, log files
// carried between them in causal order — and checks that every device ends at the trace's
// endContent. Exits 1 on any mismatch.
//
//   swift build -c release --product multidoc-trace
//   .build/release/multidoc-trace ../shared/traces/sequential/sveltecomponent.json.gz [--json]
import ArgumentParser
import CMalloc
import Engine
import Foundation
import Text

@main
struct MultidocTrace: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "multidoc-trace",
        abstract: "Replay editing traces through the engine and check every device ends at the trace's text.",
        discussion: """
            Sequential traces are typed on device A (consecutive patches grouped into saves, as a \
            typing user's autosaves would be) and imported by device B. Concurrent traces get one \
            device per agent, each with its own container folder; the tool carries log files \
            between the folders so each transaction is applied on its agent's device after exactly \
            its parents. Prints edits per second for the in-memory merge alone and end to end, and \
            peak memory. Exit status 1 when a device's text differs from endContent.
            """)

    @Argument(help: "Trace files (.json or .json.gz) in the josephg/editing-traces format.") var traces: [String]
    @Flag(help: "Print one JSON object per trace (an array).") var json = false
    @Option(help: "The most patches one save holds.") var patchesPerSave = 64
    @Option(help: "Where the device roots and containers go (default: a new temporary folder, removed afterwards).") var workFolder: String?

    /// glibc's malloc tuned as the daemon tunes it: one arena, blocks of 64 KiB and more in
    /// mappings of their own, the heap's free top returned past 128 KiB. The replay frees the
    /// trace's in-memory merge and each import transaction's logs; with per-thread arenas and
    /// the default thresholds that memory stayed mapped (automerge-paper peaked at 231 MB, 186
    /// MB tuned, the user time the same). The environment's MALLOC_* variables still win.
    static func main() async {
        multidoc_tune_malloc()
        var command = parseOrExit()
        do {
            try await command.run()
        } catch {
            exit(withError: error)
        }
    }

    mutating func validate() throws {
        guard patchesPerSave >= 1 else { throw ValidationError("--patches-per-save must be at least 1") }
    }

    func run() async throws {
        var results: [TraceReplay.Result] = []
        var failed = false
        for path in traces {
            let url = URL(fileURLWithPath: path)
            let trace: EditingTrace
            do {
                trace = try EditingTrace.load(url)
            } catch {
                FileHandle.standardError.write(Data("multidoc-trace: error: \(error)\n".utf8))
                throw ExitCode(64)
            }
            let folder = workFolder.map { URL(fileURLWithPath: $0).appendingPathComponent(url.lastPathComponent + ".replay") }
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("multidoc-trace-\(UUID().uuidString)")
            try? FileManager.default.removeItem(at: folder)
            defer { if workFolder == nil { try? FileManager.default.removeItem(at: folder) } }
            let isTerminal = isatty(STDERR_FILENO) == 1
            let name = url.lastPathComponent
            let result: TraceReplay.Result
            do {
                result = try await TraceReplay.run(trace, name: name, in: folder, patchesPerSave: patchesPerSave) { done, total in
                    guard isTerminal, done == total || done % 500 == 0 else { return }
                    FileHandle.standardError.write(Data("\r\(name): \(done)/\(total) transactions".utf8))
                }
            } catch {
                // A trace whose patches do not fit its own text, or an engine failure.
                FileHandle.standardError.write(Data("multidoc-trace: error: \(path): \(error)\n".utf8))
                throw ExitCode(1)
            }
            if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            results.append(result)
            failed = failed || !result.matched
            if !json { print(Self.describe(result)) }
        }
        if json {
            struct Output: Encodable {
                var results: [TraceReplay.Result]
                var peakMemoryMB: Double
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data = try encoder.encode(Output(results: results, peakMemoryMB: Self.peakMemoryMB()))
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(String(format: "peak memory: %.1f MB", Self.peakMemoryMB()))
        }
        if failed { throw ExitCode(1) }
    }

    static func describe(_ result: TraceReplay.Result) -> String {
        var lines = [
            "\(result.trace): \(result.kind), \(result.agents) agent\(result.agents == 1 ? "" : "s"), \(result.transactions) transactions, \(result.patches) patches, \(result.saves) saves on \(result.devices) devices",
            String(format: "  merge in memory: %.3f s, %.0f edits/s", result.mergeSeconds, result.mergeEditsPerSecond),
            String(format: "  end to end:      %.3f s, %.0f edits/s", result.endToEndSeconds, result.endToEndEditsPerSecond),
            result.matched ? "  every device ends at the trace's text (\(result.endLength) scalars)" : "  MISMATCH",
        ]
        lines += result.mismatches.map { "    \($0)" }
        return lines.joined(separator: "\n")
    }

    /// Peak resident memory of this process (VmHWM), in MB.
    static func peakMemoryMB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
        return kilobytes / 1024
    }
}
