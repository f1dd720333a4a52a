import Foundation

/// SVG elements, one a line; numbers with one decimal. `role` becomes the element's class, so
/// a reader (or a test) can tell tick labels from titles.
struct SVGText {
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
