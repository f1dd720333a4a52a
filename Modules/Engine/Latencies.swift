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

    /// Nil when no value is finite; NaN and infinities are left out.
    public init?(milliseconds values: [Double]) {
        let values = values.filter(\.isFinite)
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

    /// A sparkline of values (▁▂▃▄▅▆▇█), at most `width` characters (later values kept);
    /// non-finite values are left out.
    public static func sparkline(_ values: [Double], width: Int = 40) -> String {
        let bars = Array("▁▂▃▄▅▆▇█")
        let tail = values.filter(\.isFinite).suffix(max(1, width))
        guard let low = tail.min(), let high = tail.max() else { return "" }
        return String(tail.map { value in
            // Halved when the span of two huge values of opposite signs is infinite.
            let span = high - low
            let fraction = span.isFinite ? (span > 0 ? (value - low) / span : 0) : (value / 2 - low / 2) / (high / 2 - low / 2)
            let index = fraction.isFinite ? Int(max(0, min(1, fraction)) * Double(bars.count - 1)) : 0
            return bars[index]
        })
    }

    /// An SVG picture: latencies over time (left; x is time since the first sample) and their
    /// distribution (right), one-way and round-trip in their own colours, with titled axes at
    /// round ticks and a legend of the series that have values. The value scale reaches twice
    /// the p99 (or the maximum, if lower), so one outlier does not flatten everything else;
    /// points above it sit on the top edge and are counted in the last bin, and the picture
    /// says how many there are. Non-finite values are left out (and counted); the same samples
    /// always give the same text, a well-formed XML document.
    public static func svg(_ samples: [LatencySample], title: String = "multidoc sync latencies") -> String {
        let ordered = samples.enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
        let start = ordered.first?.at ?? Date(timeIntervalSince1970: 0)
        func seconds(_ sample: LatencySample) -> Double { sample.at.timeIntervalSince(start) }
        let oneWay = ordered.map { (seconds: seconds($0), ms: $0.oneWayMs) }
        let roundTrip = ordered.compactMap { sample in sample.roundTripMs.map { (seconds: seconds(sample), ms: $0) } }
        return LatencyPlot(title: title, series: [
            .init(name: "one-way", color: "#1f77b4", points: oneWay),
            .init(name: "round-trip", color: "#d62728", points: roundTrip),
        ], sampleCount: samples.count).svg
    }

    static func format(_ ms: Double) -> String {
        switch abs(ms) {
        case ..<1000: String(format: "%.2f ms", ms)
        case ..<1e9: String(format: "%.2f s", ms / 1000)
        default: String(format: "%.3g s", ms / 1000)
        }
    }
}
