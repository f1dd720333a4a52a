import FileIO
import Foundation
import Histogram
import Model

/// One remote change imported into the inspected document (the seed's "iCloud Sync Latencies").
public struct LatencySample: Codable, Sendable, Equatable {
    /// When the import finished.
    public var at: Date
    public var document: DocumentID
    public var fromDevice: DeviceID
    public var fromName: String
    /// Import finished minus the remote log's commit time: exact on one host, includes clock
    /// skew across hosts.
    public var oneWayMs: Double
    /// My ping saved → the peer's answer imported, minus the peer's burst window: no clock skew.
    public var roundTripMs: Double?

    public init(at: Date, document: DocumentID, fromDevice: DeviceID, fromName: String, oneWayMs: Double, roundTripMs: Double?) {
        self.at = at
        self.document = document
        self.fromDevice = fromDevice
        self.fromName = fromName
        self.oneWayMs = oneWayMs
        self.roundTripMs = roundTripMs
    }
}

/// The persistent list of samples: `latencies.jsonl` in the device root, one JSON object a
/// line, appended. Recording a sample costs one `write(2)` however many there are (the ping
/// stunt records one per round, on the path of its answer), and two processes of the device
/// (the TUI and the daemon) may both append: each batch is one `O_APPEND` write. Samples are
/// not fsynced: a crash may lose the last few, never the file. `at` is milliseconds since 1970.
/// A `latencies.json` array left by earlier versions is read too.
public struct LatencyLog: Sendable {
    public let url: URL

    public init(url: URL) { self.url = url }

    /// Every sample, oldest first; lines that do not decode (a torn last line) are skipped.
    public func read() -> [LatencySample] {
        var samples: [LatencySample] = []
        let legacy = url.deletingPathExtension().appendingPathExtension("json")
        if legacy != url, let data = try? AtomicFile.read(legacy),
           let old = try? Self.legacyDecoder.decode([LatencySample].self, from: data) {
            samples += old
        }
        guard let data = try? AtomicFile.read(url, limit: 1 << 30) else { return samples }
        let decoder = Self.decoder
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            if let sample = try? decoder.decode(LatencySample.self, from: Data(line)) { samples.append(sample) }
        }
        return samples
    }

    public func append(_ samples: [LatencySample]) throws {
        guard !samples.isEmpty else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        var lines = Data()
        for sample in samples {
            lines += try encoder.encode(sample)
            lines.append(UInt8(ascii: "\n"))
        }
        let fd = open(url.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileIOError(path: url.path, operation: "open", errno: errno) }
        defer { close(fd) }
        let written = lines.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == lines.count else { throw FileIOError(path: url.path, operation: "append", errno: written < 0 ? errno : EIO) }
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }

    private static var legacyDecoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}

/// Count, min, percentiles and max of a set of latencies, from an HDR histogram (microsecond
/// resolution, three significant digits).
public struct LatencyStatistics: Sendable, Equatable, Codable {
    public var count: Int
    public var minMs: Double
    public var p50Ms: Double
    public var p90Ms: Double
    public var p99Ms: Double
    public var maxMs: Double

    public init?(milliseconds values: [Double]) {
        guard !values.isEmpty else { return nil }
        var histogram = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
        for value in values {
            _ = histogram.record(UInt64(max(0, min(value * 1000, 3_600_000_000))))
        }
        count = values.count
        minMs = Double(histogram.min) / 1000
        p50Ms = Double(histogram.valueAtPercentile(50)) / 1000
        p90Ms = Double(histogram.valueAtPercentile(90)) / 1000
        p99Ms = Double(histogram.valueAtPercentile(99)) / 1000
        maxMs = Double(histogram.max) / 1000
    }
}

/// Renders latencies for people: CSV for a spreadsheet, an SVG with the latencies over time
/// and their distribution, and a one-line sparkline for terminals.
public enum LatencyReport {
    public static func csv(_ samples: [LatencySample]) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var lines = ["at,document,from_device,from_name,one_way_ms,round_trip_ms"]
        for sample in samples {
            let name = "\"" + sample.fromName.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            lines.append([
                formatter.string(from: sample.at), sample.document.description, sample.fromDevice.description, name,
                String(format: "%.3f", sample.oneWayMs), sample.roundTripMs.map { String(format: "%.3f", $0) } ?? "",
            ].joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A sparkline of values (▁▂▃▄▅▆▇█), at most `width` characters (later values kept).
    public static func sparkline(_ values: [Double], width: Int = 40) -> String {
        let bars = Array("▁▂▃▄▅▆▇█")
        let tail = values.suffix(max(1, width))
        guard let low = tail.min(), let high = tail.max() else { return "" }
        let span = high - low
        return String(tail.map { value in
            let index = span > 0 ? Int(((value - low) / span) * Double(bars.count - 1)) : 0
            return bars[max(0, min(bars.count - 1, index))]
        })
    }

    /// An SVG picture: latencies over time (left; x is seconds since the first sample) and
    /// their distribution (right). The scale reaches twice the p99 (or the maximum, if lower), so
    /// one outlier does not flatten everything else; points above it sit on the top edge and
    /// are counted in the last bin, and the picture says how many there are.
    public static func svg(_ samples: [LatencySample], title: String = "multidoc sync latencies") -> String {
        let width = 900.0, height = 360.0, margin = 50.0
        let plotWidth = 520.0, plotHeight = height - 2 * margin
        let samples = samples.sorted { $0.at < $1.at }
        let values = samples.map(\.oneWayMs)
        let trips = samples.compactMap(\.roundTripMs)
        let peak = max(values.max() ?? 1, trips.max() ?? 1, 0.001)
        let p99 = LatencyStatistics(milliseconds: values + trips)?.p99Ms ?? peak
        let high = max(min(peak, p99 * 2), 0.001)
        let clipped = (values + trips).filter { $0 > high }.count
        let start = samples.first?.at ?? Date()
        let span = max(samples.last.map { $0.at.timeIntervalSince(start) } ?? 0, 0.001)
        func y(_ value: Double) -> Double { margin + plotHeight - (min(value, high) / high) * plotHeight }
        func x(_ sample: LatencySample) -> Double {
            samples.count > 1 ? margin + sample.at.timeIntervalSince(start) / span * plotWidth : margin + plotWidth / 2
        }
        var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(margin)" y="24" font-size="16">\(escape(title)) — \(samples.count) samples</text>
        <line x1="\(margin)" y1="\(margin + plotHeight)" x2="\(margin + plotWidth)" y2="\(margin + plotHeight)" stroke="black"/>
        <line x1="\(margin)" y1="\(margin)" x2="\(margin)" y2="\(margin + plotHeight)" stroke="black"/>
        <text x="\(margin - 6)" y="\(margin + 4)" text-anchor="end">\(format(high))</text>
        <text x="\(margin - 6)" y="\(margin + plotHeight)" text-anchor="end">0 ms</text>
        <text x="\(margin)" y="\(margin + plotHeight + 16)" text-anchor="start">0 s</text>
        <text x="\(margin + plotWidth)" y="\(margin + plotHeight + 16)" text-anchor="end">\(String(format: "%.1f s", span))</text>
        <text x="\(margin + plotWidth / 2)" y="\(height - 12)" text-anchor="middle">time since the first sample</text>

        """
        let oneWay = samples.map { "\(x($0)),\(y($0.oneWayMs))" }.joined(separator: " ")
        svg += "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"1.5\" points=\"\(oneWay)\"/>\n"
        let tripPoints = samples.compactMap { sample in sample.roundTripMs.map { "\(x(sample)),\(y($0))" } }
        if !tripPoints.isEmpty {
            svg += "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\" points=\"\(tripPoints.joined(separator: " "))\"/>\n"
        }
        svg += "<text x=\"\(margin + 10)\" y=\"\(margin + 14)\" fill=\"#1f77b4\">one-way</text>\n"
        svg += "<text x=\"\(margin + 80)\" y=\"\(margin + 14)\" fill=\"#d62728\">round-trip</text>\n"
        if clipped > 0 {
            svg += "<text x=\"\(margin + plotWidth)\" y=\"\(margin + 14)\" text-anchor=\"end\">\(clipped) above the scale (max \(format(peak)))</text>\n"
        }
        // Distribution of one-way latencies.
        let histogramX = margin + plotWidth + 60, histogramWidth = width - histogramX - 20
        let bins = 12
        var counts = [Int](repeating: 0, count: bins)
        for value in values { counts[max(0, min(bins - 1, Int(value / high * Double(bins))))] += 1 }
        let most = Double(counts.max() ?? 1)
        for (index, count) in counts.enumerated() {
            let barHeight = most > 0 ? Double(count) / most * plotHeight : 0
            let barWidth = histogramWidth / Double(bins)
            svg += "<rect x=\"\(histogramX + Double(index) * barWidth)\" y=\"\(margin + plotHeight - barHeight)\" width=\"\(barWidth - 2)\" height=\"\(barHeight)\" fill=\"#1f77b4\"/>\n"
        }
        svg += "<text x=\"\(histogramX + histogramWidth / 2)\" y=\"\(height - 12)\" text-anchor=\"middle\">one-way latency, 0–\(format(high))\(clipped > 0 ? "+" : "")</text>\n"
        if let stats = LatencyStatistics(milliseconds: values) {
            svg += "<text x=\"\(histogramX)\" y=\"\(margin - 10)\">p50 \(format(stats.p50Ms))  p99 \(format(stats.p99Ms))</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    static func format(_ ms: Double) -> String {
        ms >= 1000 ? String(format: "%.2f s", ms / 1000) : String(format: "%.2f ms", ms)
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }
}
