import Foundation

/// The value axis shared by both panels: from 0 (or the lowest value, if negative) to the
/// highest value, but no further than twice the p99, so one outlier does not flatten the rest.
struct ValueScale {
    var ticks: Ticks
    /// Milliseconds per displayed unit.
    var divisor: Double
    var unit: String
    /// Values drawn on an edge, and the extremes they stand for (in ms).
    var above = 0, below = 0
    var peak = 0.0, lowest = 0.0

    init(sorted values: [Double]) {
        let p99 = quantile(values, 0.99) ?? 1, p1 = quantile(values, 0.01) ?? 0
        peak = values.last ?? 1
        lowest = values.first ?? 0
        var high = max(0, p99 > 0 ? min(peak, 2 * p99) : peak)
        let low = min(0, p1 < 0 ? max(lowest, 2 * p1) : lowest)
        if high - low <= max(abs(high), abs(low)) * 1e-9 { high = low + 1 }
        divisor = max(abs(high), abs(low)) >= 10_000 ? 1000 : 1
        unit = divisor == 1 ? "ms" : "s"
        ticks = Ticks.nice(low: low / divisor, high: high / divisor)
        let top = ticks.high * divisor, bottom = ticks.low * divisor
        above = values.filter { $0 > top }.count
        below = values.filter { $0 < bottom }.count
    }

    /// `ms` within the axis, in ms.
    func clamped(_ ms: Double) -> Double { max(ticks.low * divisor, min(ticks.high * divisor, ms)) }
}

/// Ticks at multiples of a round step (1, 2 or 5 × 10^k), from a multiple at or below the
/// lowest value to one at or above the highest.
struct Ticks: Equatable {
    var low: Double
    var high: Double
    var step: Double

    var intervals: Int {
        let count = ((high - low) / step).rounded()
        return count.isFinite ? Int(max(0, min(1000, count))) : 0
    }

    var values: [Double] { (0...intervals).map { low + Double($0) * step } }

    /// The step giving closest to 6 ticks, preferring 4 to 8 and little room beyond the
    /// values; never below `smallestStep`.
    static func nice(low: Double, high: Double, smallestStep: Double = 0) -> Ticks {
        guard low.isFinite, high.isFinite, high > low else {
            let base = low.isFinite ? low : 0, top = base + max(1, abs(base) * 0.1)
            guard top.isFinite, top > base else { return Ticks(low: 0, high: 1, step: 0.2) }
            return nice(low: base, high: top, smallestStep: smallestStep)
        }
        let magnitude = pow(10, (log10((high - low) / 6)).rounded(.down))
        var best: (ticks: Ticks, cost: Double)?
        for scale in [0.1, 1, 10] {
            for mantissa in [1.0, 2, 5] {
                let step = max(mantissa * scale * magnitude, smallestStep)
                guard step > 0, step.isFinite else { continue }
                let from = (low / step).rounded(.down) * step, to = (high / step).rounded(.up) * step
                let count = ((to - from) / step).rounded() + 1
                let unused = 1 - (high - low) / (to - from)
                let cost = abs(count - 6) + 10 * unused + ((4...8).contains(count) ? 0 : 100)
                if best.map({ cost < $0.cost }) ?? true {
                    best = (Ticks(low: from, high: to, step: step), cost)
                }
            }
        }
        return best?.ticks ?? Ticks(low: low, high: high, step: high - low)
    }

    /// `value` with as many decimals as the step needs; plain notation from 10^-6 to 10^9,
    /// exponent notation beyond.
    func label(_ value: Double) -> String {
        let value = abs(value) < step * 1e-9 ? 0 : value
        let size = max(abs(low), abs(high))
        guard size < 1e9, step >= 1e-6 else { return String(format: "%.3g", value) }
        let decimals = max(0, Int(-log10(step).rounded(.down)))
        return String(format: "%.\(decimals)f", value)
    }
}

/// The unit of the time axis: seconds for two minutes, then minutes, hours, days.
struct TimeUnit {
    var name: String
    var seconds: Double

    init(span: Double) {
        switch span {
        case ..<120: (name, seconds) = ("s", 1)
        case ..<7200: (name, seconds) = ("min", 60)
        case ..<172_800: (name, seconds) = ("h", 3600)
        default: (name, seconds) = ("d", 86400)
        }
    }
}

/// A plotting area and the values at its edges; `xInset` keeps points at the first and last
/// x tick (a single sample) off the frame's edges.
struct Frame {
    var left, right, top, bottom: Double
    var xTicks, yTicks: Ticks
    var xInset: Double

    init(left: Double, right: Double, top: Double, bottom: Double, x: Ticks, y: Ticks, xInset: Double) {
        (self.left, self.right, self.top, self.bottom, xTicks, yTicks, self.xInset) = (left, right, top, bottom, x, y, xInset)
    }

    func x(_ value: Double) -> Double { position(value, xTicks, from: left + xInset, to: right - xInset) }
    func y(_ value: Double) -> Double { position(value, yTicks, from: bottom, to: top) }

    private func position(_ value: Double, _ ticks: Ticks, from start: Double, to end: Double) -> Double {
        let fraction = (value - ticks.low) / (ticks.high - ticks.low)
        return start + (fraction.isFinite ? max(0, min(1, fraction)) : 0) * (end - start)
    }
}

/// The nearest-rank quantile of sorted values.
func quantile(_ sorted: [Double], _ fraction: Double) -> Double? {
    guard !sorted.isEmpty else { return nil }
    let rank = (fraction * Double(sorted.count)).rounded(.up)
    return sorted[max(0, min(sorted.count - 1, Int(rank) - 1))]
}

func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
