import AppSupport
import ArgumentParser
import Engine
import FileIO
import Foundation

struct Latencies: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Recorded sync latencies: count, min, p50, p90, p99, max; --csv and --plot.")
    @OptionGroup var options: GlobalOptions
    @Flag(help: "Print the raw samples as CSV.") var csv = false
    @Option(help: ArgumentHelp("Draw latencies over time and their distribution into an SVG file.", valueName: "file.svg")) var plot: String?

    struct Output: Encodable {
        var oneWay: LatencyStatistics?
        var roundTrip: LatencyStatistics?
    }

    func validate() throws {
        // Two forms of the same output: the one asked for must be the one printed.
        if csv, options.json { throw ValidationError("--csv and --json are two forms of output; give one") }
    }

    func run() async throws {
        try await runCommand {
            let (setup, _) = try options.bootstrap()
            let samples = LatencyLog(url: setup.root.latenciesURL).read()
            if csv { print(LatencyReport.csv(samples), terminator: ""); return }
            if let plot {
                let url = URL(fileURLWithPath: plot)
                do {
                    try AtomicFile.write(Data(LatencyReport.svg(samples).utf8), to: url)
                } catch {
                    throw AppError(.writeFailed, "cannot write plot: \(error)", cause: error)
                }
            }
            let (oneWay, roundTrip) = (LatencyStatistics.oneWay(samples), LatencyStatistics.roundTrip(samples))
            if options.json { try printJSON(Output(oneWay: oneWay, roundTrip: roundTrip)); return }
            guard oneWay != nil else { print("no latencies recorded yet (inspect a document with EnablePing on on two devices)"); return }
            printTable(latencyRows(oneWay: oneWay, roundTrip: roundTrip, header: ["", "COUNT", "MIN", "P50", "P90", "P99", "MAX"]))
            print("one-way \(LatencyReport.sparkline(samples.map(\.oneWayMs)))")
            if let plot { print("plot written to \(plot)") }
        }
    }
}
