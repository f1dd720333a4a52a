import Foundation

/// The picture behind `LatencyReport.svg`: latencies over time on the left, their distribution
/// on the right, a title and a legend above both, notes about what is not drawn below.
///
/// Made for people looking at it: every axis has a title with its unit and 4 to 8 ticks at
/// round values (1, 2 or 5 × 10^k) with grid lines, labels sit inside the canvas however long
/// they are, the legend lists only series that have points, the histogram's bins are as many
/// as the data can fill (Freedman–Diaconis, 8 to 40) and aligned to its ticks, and no text
/// overlaps a bar or a line. The output depends on the input only (no clock, no randomness),
/// is well-formed XML whatever the title says, and any input draws: no points, one point,
/// equal points, huge values. Non-finite values are left out and counted in a note.
struct LatencyPlot {
    /// Values of one kind (one-way, round-trip), at seconds since the first sample.
    struct Series {
        var name: String
        var color: String
        var points: [(seconds: Double, ms: Double)]
    }

    var title: String
    var series: [Series]
    /// Samples the title counts (whether or not their values are drawable).
    var sampleCount: Int
    /// Values left out because they (or their time) were NaN or infinite.
    private(set) var skipped: Int

    static let width = 960.0, height = 500.0
    static let fontSize = 12.0

    /// Values beyond ±this are drawn (and described) as ±this: the arithmetic of scales stays finite.
    private static let largest = 1e300

    init(title: String, series: [Series], sampleCount: Int) {
        self.title = title
        self.sampleCount = sampleCount
        self.series = series
        skipped = 0
        for index in self.series.indices {
            let points = self.series[index].points
            let finite = points.filter { $0.seconds.isFinite && $0.ms.isFinite }
            skipped += points.count - finite.count
            self.series[index].points = finite.map {
                (seconds: $0.seconds, ms: max(-Self.largest, min(Self.largest, $0.ms)))
            }
        }
    }

    var svg: String {
        var out = SVGText()
        let drawn = series.filter { !$0.points.isEmpty }
        let scale = ValueScale(sorted: drawn.flatMap { $0.points.map(\.ms) }.sorted())
        let quantity = (drawn.count == 1 ? "\(drawn[0].name) latency" : "latency") + " (\(scale.unit))"

        out.open(width: Self.width, height: Self.height)
        out.text(title + " — " + plural(sampleCount, "sample"), x: 16, y: 28, size: 16, weight: "bold", role: "title")
        legend(drawn, into: &out)
        let split = 600.0
        timeSeries(drawn, scale: scale, quantity: quantity, left: 16, right: split, into: &out)
        histogram(drawn, scale: scale, quantity: quantity, left: split + 40, right: Self.width - 24, into: &out)

        var notes: [String] = []
        if scale.above > 0 {
            notes.append("\(scale.above) above the scale (max \(LatencyReport.format(scale.peak))): on its top edge, in the last bin")
        }
        if scale.below > 0 {
            notes.append("\(scale.below) below the scale (min \(LatencyReport.format(scale.lowest))): on its bottom edge, in the first bin")
        }
        if skipped > 0 { notes.append("\(plural(skipped, "value")) not finite, left out") }
        // Two lines at most; a note that does not fit on the first goes to the second.
        var lines = [""]
        for note in notes {
            if let last = lines.last, !last.isEmpty, Self.textWidth(last + "; " + note, size: 11) > Self.width - 32, lines.count < 2 {
                lines.append(note)
            } else {
                lines[lines.count - 1] += (lines[lines.count - 1].isEmpty ? "" : "; ") + note
            }
        }
        for (index, line) in lines.enumerated() where !line.isEmpty {
            out.text(line, x: 16, y: Self.height - 24 + Double(index) * 14, size: 11, fill: "#555", role: "note")
        }
        out.close()
        return out.text
    }

    // MARK: - Parts

    /// Rows of the layout, top to bottom; the two panels share them.
    private static let legendY = 52.0, captionY = 98.0, yTitleY = 118.0, plotTop = 130.0
    private static var plotBottom: Double { height - 86 }

    /// One line a series, whatever their lengths.
    private func legend(_ drawn: [Series], into out: inout SVGText) {
        let x = 16.0
        for (index, entry) in drawn.enumerated() {
            let y = Self.legendY + Double(index) * 18
            let values = entry.points.map(\.ms).sorted()
            var text = "\(entry.name): \(plural(values.count, "sample"))"
            if let median = quantile(values, 0.5), let p99 = quantile(values, 0.99), let peak = values.last {
                text += ", p50 \(LatencyReport.format(median)), p99 \(LatencyReport.format(p99)), max \(LatencyReport.format(peak))"
            }
            out.line(x1: x, y1: y - 4, x2: x + 18, y2: y - 4, stroke: entry.color, width: 2)
            out.circle(x: x + 9, y: y - 4, r: 3, fill: entry.color)
            out.text(text, x: x + 24, y: y, role: "legend")
        }
    }

    /// Latencies against time since the first sample, in a panel from `left` to `right`.
    private func timeSeries(_ drawn: [Series], scale: ValueScale, quantity: String, left panelLeft: Double, right: Double, into out: inout SVGText) {
        let times = drawn.flatMap { $0.points.map(\.seconds) }
        let first = times.min() ?? 0
        let span = max(0, (times.max() ?? 0) - first)
        let unit = TimeUnit(span: span)
        let xTicks = Ticks.nice(low: 0, high: span / unit.seconds)
        let frame = axes(
            in: panelLeft, right, x: xTicks, y: scale.ticks, xInset: 8, caption: "over time",
            xTitle: "time since the first sample (\(unit.name))", yTitle: quantity, into: &out)

        if drawn.isEmpty {
            out.text("no latencies recorded yet", x: (frame.left + right) / 2, y: (frame.top + frame.bottom) / 2, anchor: "middle",
                     fill: "#555", role: "empty")
        }
        for entry in drawn {
            let points = entry.points.map { point in
                (x: frame.x((point.seconds - first) / unit.seconds), y: frame.y(scale.clamped(point.ms) / scale.divisor))
            }
            if points.count > 1 {
                out.polyline(points, stroke: entry.color)
            }
            // Past a few hundred, markers hide the line they mark.
            if points.count <= 300 {
                for point in points { out.circle(x: point.x, y: point.y, r: 2.4, fill: entry.color) }
            }
        }
    }

    /// How many values of each series fall in each bin; where both series have values in a
    /// bin, their bars share it side by side (overlapping bars would need transparency, which
    /// not every renderer draws).
    private func histogram(_ drawn: [Series], scale: ValueScale, quantity: String, left panelLeft: Double, right: Double, into out: inout SVGText) {
        let columns = drawn.map { $0.points.map { scale.clamped($0.ms) / scale.divisor }.sorted() }
        let low = columns.compactMap(\.first).min() ?? 0, high = columns.compactMap(\.last).max() ?? 1
        let xTicks: Ticks
        if high - low > max(abs(high), abs(low)) * 1e-9 {
            xTicks = Ticks.nice(low: low, high: high)
        } else {
            let pad = low == 0 ? 1 : abs(low) * 0.1
            xTicks = Ticks.nice(low: low >= 0 ? max(0, low - pad) : low - pad, high: high + pad)
        }
        let bins = Self.binCount(columns, ticks: xTicks)
        let binWidth = (xTicks.high - xTicks.low) / Double(bins)
        let counts = columns.map { values in
            var row = [Int](repeating: 0, count: bins)
            for value in values {
                let position = (value - xTicks.low) / binWidth
                // A value on an edge belongs to the bin above it, whatever the rounding of the division.
                let bin = (position + 1e-9).rounded(.down)
                row[bin.isFinite ? Int(max(0, min(Double(bins - 1), bin))) : 0] += 1
            }
            return row
        }
        let tallest = counts.flatMap { $0 }.max() ?? 0
        let yTicks = Ticks.nice(low: 0, high: Double(max(tallest, 4)), smallestStep: 1)
        let caption = drawn.isEmpty ? "distribution" : "distribution: \(bins) bins of \(String(format: "%.4g", binWidth)) \(scale.unit)"
        let frame = axes(in: panelLeft, right, x: xTicks, y: yTicks, caption: caption, xTitle: quantity, yTitle: "samples per bin", into: &out)

        for index in 0..<bins {
            let x0 = frame.x(xTicks.low + Double(index) * binWidth), x1 = frame.x(xTicks.low + Double(index + 1) * binWidth)
            let gap = x1 - x0 > 6 ? 1.0 : 0
            let present = zip(drawn, counts).filter { $0.1[index] > 0 }
            let width = (x1 - x0 - gap) / Double(max(1, present.count))
            for (offset, (entry, row)) in present.enumerated() {
                let y = frame.y(Double(row[index]))
                out.rect(x: x0 + gap / 2 + Double(offset) * width, y: y, width: max(0.5, width), height: frame.bottom - y, fill: entry.color)
            }
        }
    }

    /// A panel's caption, axis titles, grid lines and tick labels at every tick, and its two
    /// axis lines; returns its plotting area, whose left edge leaves room for the longest
    /// y label. The y title is written level above the axis: renderers disagree on rotated text.
    private func axes(
        in panelLeft: Double, _ right: Double, x xTicks: Ticks, y yTicks: Ticks, xInset: Double = 0, caption: String, xTitle: String,
        yTitle: String, into out: inout SVGText
    ) -> Frame {
        let xLabels = xTicks.values.map { xTicks.label($0) }, yLabels = yTicks.values.map { yTicks.label($0) }
        let left = panelLeft + (yLabels.map(textWidth).max() ?? 0) + 10
        let frame = Frame(left: left, right: right, top: Self.plotTop, bottom: Self.plotBottom, x: xTicks, y: yTicks, xInset: xInset)
        out.text(caption, x: panelLeft, y: Self.captionY, size: 13, weight: "bold", role: "caption")
        out.text(yTitle, x: panelLeft, y: Self.yTitleY, role: "y-title")
        out.text(xTitle, x: (left + right) / 2, y: frame.bottom + 40, anchor: "middle", role: "x-title")
        for (value, label) in zip(yTicks.values, yLabels) {
            let y = frame.y(value)
            out.line(x1: frame.left, y1: y, x2: frame.right, y2: y, stroke: value == 0 && yTicks.low < 0 ? "#999" : "#e3e3e3", width: 1)
            out.line(x1: frame.left - 4, y1: y, x2: frame.left, y2: y, stroke: "#333", width: 1)
            out.text(label, x: frame.left - 7, y: y + 4, anchor: "end", role: "y-tick")
        }
        for (value, label) in zip(xTicks.values, xLabels) {
            let x = frame.x(value)
            out.line(x1: x, y1: frame.top, x2: x, y2: frame.bottom, stroke: "#e3e3e3", width: 1)
            out.line(x1: x, y1: frame.bottom, x2: x, y2: frame.bottom + 4, stroke: "#333", width: 1)
            out.text(label, x: x, y: frame.bottom + 18, anchor: "middle", role: "x-tick")
        }
        out.line(x1: frame.left, y1: frame.bottom, x2: frame.right, y2: frame.bottom, stroke: "#333", width: 1)
        out.line(x1: frame.left, y1: frame.top, x2: frame.left, y2: frame.bottom, stroke: "#333", width: 1)
        return frame
    }

    // MARK: - Scales

    /// How many bins a histogram of `columns` (each sorted) gets over the range of `ticks`:
    /// the narrowest Freedman–Diaconis width of the columns (√n bins over a column's range
    /// when half its values are equal), rounded to a whole number of bins per tick interval
    /// so bin edges fall on ticks, and kept between 8 and 40.
    static func binCount(_ columns: [[Double]], ticks: Ticks) -> Int {
        let range = ticks.high - ticks.low
        var target = 8.0
        for values in columns {
            guard let q1 = quantile(values, 0.25), let q3 = quantile(values, 0.75), let low = values.first, let high = values.last else { continue }
            let count = Double(values.count)
            if q3 > q1 {
                target = max(target, range / (2 * (q3 - q1) / cbrt(count)))
            } else if high > low {
                target = max(target, range / ((high - low) / count.squareRoot()))
            }
        }
        target = target.isFinite ? min(40, target) : 40
        let intervals = max(1, ticks.intervals)
        let choices = [1, 2, 4, 5, 10, 20, 40].map { $0 * intervals }.filter { (8...40).contains($0) }
        return choices.min { abs(Double($0) - target) < abs(Double($1) - target) } ?? max(8, min(40, intervals))
    }

    private func textWidth(_ text: String) -> Double { Self.textWidth(text) }

    /// A generous estimate of the width of `text` in the plot's font: 0.64 em a character
    /// (DejaVu Sans, the widest of the fonts named: digits are 0.64 em, most letters less).
    static func textWidth(_ text: String, size: Double = fontSize) -> Double {
        Double(text.count) * size * 0.64
    }
}

/// The value axis shared by both panels: from 0 (or the lowest value, if negative) to the
/// highest value, but no further than twice the p99, so one outlier does not flatten the rest.
private struct ValueScale {
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
private struct TimeUnit {
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
private struct Frame {
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

/// SVG elements, one a line; numbers with one decimal. `role` becomes the element's class, so
/// a reader (or a test) can tell tick labels from titles.
private struct SVGText {
    var text = ""

    mutating func open(width: Double, height: Double) {
        text += """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(n(width))" height="\(n(height))" viewBox="0 0 \(n(width)) \(n(height))" \
        font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="\(n(LatencyPlot.fontSize))">
        <rect width="100%" height="100%" fill="white" stroke="none"/>

        """
    }

    mutating func close() { text += "</svg>\n" }

    mutating func text(
        _ content: String, x: Double, y: Double, anchor: String = "start", size: Double? = nil, weight: String? = nil,
        fill: String? = nil, role: String
    ) {
        var attributes = "class=\"\(role)\" x=\"\(n(x))\" y=\"\(n(y))\""
        if anchor != "start" { attributes += " text-anchor=\"\(anchor)\"" }
        if let size { attributes += " font-size=\"\(n(size))\"" }
        if let weight { attributes += " font-weight=\"\(weight)\"" }
        if let fill { attributes += " fill=\"\(fill)\"" }
        text += "<text \(attributes)>\(escape(content))</text>\n"
    }

    mutating func line(x1: Double, y1: Double, x2: Double, y2: Double, stroke: String, width: Double) {
        text += "<line x1=\"\(n(x1))\" y1=\"\(n(y1))\" x2=\"\(n(x2))\" y2=\"\(n(y2))\" stroke=\"\(stroke)\" stroke-width=\"\(n(width))\"/>\n"
    }

    mutating func circle(x: Double, y: Double, r: Double, fill: String) {
        text += "<circle cx=\"\(n(x))\" cy=\"\(n(y))\" r=\"\(n(r))\" fill=\"\(fill)\" stroke=\"white\" stroke-width=\"0.6\"/>\n"
    }

    mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String) {
        text += "<rect class=\"bar\" x=\"\(n(x))\" y=\"\(n(y))\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"\(fill)\" stroke=\"none\"/>\n"
    }

    mutating func polyline(_ points: [(x: Double, y: Double)], stroke: String) {
        let list = points.map { "\(n($0.x)),\(n($0.y))" }.joined(separator: " ")
        text += "<polyline fill=\"none\" stroke=\"\(stroke)\" stroke-width=\"1.2\" stroke-linejoin=\"round\" points=\"\(list)\"/>\n"
    }

    private func n(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let text = String(format: "%.1f", value)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}

/// The nearest-rank quantile of sorted values.
private func quantile(_ sorted: [Double], _ fraction: Double) -> Double? {
    guard !sorted.isEmpty else { return nil }
    let rank = (fraction * Double(sorted.count)).rounded(.up)
    return sorted[max(0, min(sorted.count - 1, Int(rank) - 1))]
}

private func plural(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }

/// Text for XML character data and attribute values; characters XML 1.0 forbids are dropped.
private func escape(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
        case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: continue
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}
