import ArgumentParser
import Engine
import Foundation

/// An aim a row is held to: met when its value is at most `atMost`.
struct Target {
    var text: String
    var atMost: Double

    init(_ text: String, atMost: Double) {
        self.text = text
        self.atMost = atMost
    }
}

/// The figures, each with a stable id, its value as a number in its unit, its ratio to the
/// physical limit where one applies and its target where the issue set one.
struct Table {
    struct Row: Encodable {
        /// Stable across versions of the benchmark: scripts compare runs by it.
        var id: String
        var figure: String
        /// The value as shown.
        var text: String
        var value: Double
        var unit: String
        var milliseconds: Double?
        var ratioToLimit: Double?
        /// For the pinging daemons' one-way rows: the ratio to the hand-off at the ping's pace.
        /// Shown for new → viewable too, beside its ratio to the back-to-back limit.
        var ratioToPacedLimit: Double?
        var target: String?
        var met: Bool?
    }

    enum Ratio { case none, oneWay, roundTrip }

    var rows: [Row] = []
    var oneWay = 0.0
    var roundTrip = 0.0
    /// The hand-off's one-way p50 at the ping's pace (0: not measured).
    var pacedOneWay = 0.0

    mutating func row(_ id: String, _ figure: String, value: Double, unit: String, text: String? = nil,
                      milliseconds: Double? = nil, ratio: Ratio = .none, target: Target? = nil) {
        let reference = switch ratio {
        case .none: 0.0
        case .oneWay: oneWay
        case .roundTrip: roundTrip
        }
        let shown = text ?? (unit == "MB" ? String(format: "%.1f MB", value) : String(format: "%.2f", value) + " " + unit)
        let pacedRow = (id.hasPrefix("ping") && id.contains(".oneway.")) || id.hasPrefix("new.viewable.")
        let paced = pacedRow && pacedOneWay > 0 ? value / pacedOneWay : nil
        rows.append(Row(id: id, figure: figure, text: shown, value: value, unit: unit, milliseconds: milliseconds,
                        ratioToLimit: reference > 0 ? value / reference : nil, ratioToPacedLimit: paced,
                        target: target?.text, met: target.map { value <= $0.atMost }))
    }

    mutating func row(_ id: String, _ figure: String, ms: Double, ratio: Ratio = .none, target: Target? = nil) {
        row(id, figure, value: ms, unit: "ms", milliseconds: ms, ratio: ratio, target: target)
    }

    mutating func latency(_ id: String, _ label: String, _ oneWay: LatencyStatistics?, roundTrip trip: LatencyStatistics?) {
        if let oneWay {
            row("\(id).oneway.p50", "\(label): one-way p50", ms: oneWay.p50Ms, ratio: .oneWay)
            row("\(id).oneway.p99", "\(label): one-way p99", ms: oneWay.p99Ms, ratio: .oneWay)
        }
        if let trip { row("\(id).roundtrip.p50", "\(label): round trip p50", ms: trip.p50Ms, ratio: .roundTrip) }
    }

    private func ratio(_ row: Row) -> String { row.ratioToLimit.map { String(format: "%.1f×", $0) } ?? "" }
    private func pacedRatio(_ row: Row) -> String { row.ratioToPacedLimit.map { String(format: "%.1f× paced", $0) } ?? "" }
    private func target(_ row: Row) -> String {
        guard let target = row.target, let met = row.met else { return "" }
        return "\(target) \(met ? "met" : "MISSED")"
    }

    func text() -> String {
        let columns: [(Row) -> String] = [\.id, \.figure, \.text, ratio, pacedRatio, target]
        let rightAligned = [false, false, true, true, true, false]
        let widths = columns.map { cell in rows.map { cell($0).count }.max() ?? 0 }
        return rows.map { row in
            zip(columns, zip(widths, rightAligned)).map { cell, layout in
                let value = cell(row), pad = String(repeating: " ", count: layout.0 - value.count)
                return layout.1 ? pad + value : value + pad
            }.joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }

    func markdown() -> String {
        (["| id | figure | value | × limit | × paced limit | target |", "| --- | --- | ---: | ---: | ---: | --- |"]
            + rows.map { "| `\($0.id)` | \($0.figure) | \($0.text) | \(ratio($0)) | \(pacedRatio($0)) | \(target($0)) |" })
            .joined(separator: "\n")
    }
}
