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
