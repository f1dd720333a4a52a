@testable import Engine
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Model
import Testing
import TestSupport

/// What someone opening `multidoc latencies --plot` sees, read back from the SVG's elements:
/// texts carry their role as a class (title, legend, caption, x-title, y-title, x-tick, y-tick,
/// note), bars are `rect class="bar"`.
@Suite struct LatencyPlotTests {
    /// `count` samples a second apart, one-way 4 to 9 ms, a round trip on every other one.
    static func samples(_ count: Int, roundTrips: Bool = true) -> [LatencySample] {
        (0..<count).map { index in
            let oneWay = 4 + Double((index * 37) % 50) / 10
            return LatencySample(
                at: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), document: DocumentID(Fixed.uuid(1)),
                fromDevice: Fixed.device(2), fromName: "B", oneWayMs: oneWay,
                roundTripMs: roundTrips && index.isMultiple(of: 2) ? oneWay * 2 + 1 : nil)
        }
    }

    @Test func theTopLabelIsWholeAndInsideTheCanvas() throws {
        var samples = Self.samples(50)
        samples[20].oneWayMs = 55.87
        let plot = try SVGDocument(LatencyReport.svg(samples))
        let labels = plot.texts("y-tick").filter { $0.x < 600 }
        let values = labels.compactMap { Double($0.text) }
        #expect(values.count == labels.count, "every y label is a number: \(labels.map(\.text))")
        #expect((values.max() ?? 0) >= 55.87, "the axis reaches the largest value: \(values)")
        #expect(plot.texts("legend").contains { $0.text.contains("max 55.87 ms") })
        for text in plot.texts() {
            // Wider than any of the plot's fonts draws these characters (DejaVu Sans: digits 0.64 em).
            let width = Double(text.text.count) * text.size * 0.64
            let left = text.anchor == "end" ? text.x - width : text.anchor == "middle" ? text.x - width / 2 : text.x
            #expect(left >= 0 && left + width <= plot.width, "'\(text.text)' fits across")
            #expect(text.y - text.size >= 0 && text.y <= plot.height, "'\(text.text)' fits down")
        }
    }

    @Test func bothAxesHaveRoundTicksAndGridLines() throws {
        let plot = try SVGDocument(LatencyReport.svg(Self.samples(50)))
        for (role, panel) in [("y-tick", 0..<600.0), ("x-tick", 0..<600.0), ("y-tick", 600..<960.0), ("x-tick", 600..<960.0)] {
            let values = plot.texts(role).filter { panel.contains($0.x) }.compactMap { Double($0.text) }
            #expect((4...8).contains(values.count), "\(role) in \(panel): \(values)")
            let steps = Set(zip(values, values.dropFirst()).map { abs($1 - $0) })
            #expect(steps.count == 1, "evenly spaced: \(values)")
            if let step = steps.first {
                let mantissa = step / pow(10, log10(step).rounded(.down))
                #expect([1.0, 2, 5].contains { abs($0 - mantissa) < 1e-6 }, "a round step: \(step)")
            }
        }
        #expect(plot.elements.filter { $0.name == "line" && $0["stroke"] == "#e3e3e3" }.count >= 16)
    }

    @Test func everyAxisSaysWhatItMeasuresAndInWhichUnit() throws {
        let plot = try SVGDocument(LatencyReport.svg(Self.samples(50)))
        #expect(plot.texts("y-title").map(\.text) == ["latency (ms)", "samples per bin"])
        #expect(plot.texts("x-title").map(\.text) == ["time since the first sample (s)", "latency (ms)"])
        let oneWayOnly = try SVGDocument(LatencyReport.svg(Self.samples(50, roundTrips: false)))
        #expect(oneWayOnly.texts("y-title").first?.text == "one-way latency (ms)")
        var slow = Self.samples(50)
        for index in slow.indices { slow[index].oneWayMs *= 10_000 }
        #expect(try SVGDocument(LatencyReport.svg(slow)).texts("y-title").first?.text == "latency (s)")
    }

    @Test func theLegendListsOnlySeriesThatHavePoints() throws {
        let oneWayOnly = try SVGDocument(LatencyReport.svg(Self.samples(50, roundTrips: false)))
        #expect(oneWayOnly.texts("legend").map { $0.text.prefix(8) } == ["one-way:"])
        #expect(oneWayOnly.elements.filter { $0.name == "polyline" }.count == 1)
        let both = try SVGDocument(LatencyReport.svg(Self.samples(50)))
        #expect(both.texts("legend").map { $0.text.split(separator: ":").first ?? "" } == ["one-way", "round-trip"])
        #expect(both.texts("legend").first?.text.hasPrefix("one-way: 50 samples, p50 ") == true)
        #expect(Set(both.elements.filter { $0.name == "polyline" }.compactMap { $0["stroke"] }).count == 2)
        let nothing = try SVGDocument(LatencyReport.svg([]))
        #expect(nothing.texts("legend").isEmpty)
        #expect(nothing.texts().contains { $0.text == "no latencies recorded yet" })
    }

    @Test(arguments: [50, 200, 5000])
    func theHistogramHasEnoughBinsAndItsCaptionStaysAboveThem(count: Int) throws {
        let plot = try SVGDocument(LatencyReport.svg(Self.samples(count)))
        let caption = try #require(plot.texts("caption").first { $0.text.hasPrefix("distribution") })
        let words = caption.text.split(separator: " ")
        let bins = try #require(words.firstIndex(of: "bins").flatMap { Int(words[$0 - 1]) }, "\(caption.text)")
        #expect((8...40).contains(bins), "\(caption.text)")
        let bars = plot.elements.filter { $0.name == "rect" && $0["class"] == "bar" }
        #expect(bars.count >= 8)
        let barsTop = bars.compactMap { $0["y"].flatMap(Double.init) }.min() ?? 0
        #expect(caption.y < barsTop - 12, "the caption (y \(caption.y)) is above the tallest bar (y \(barsTop))")
        #expect(plot.texts("y-title").allSatisfy { $0.y < barsTop })
    }

    @Test func oneSampleMakesOneBarAndOnePoint() throws {
        let plot = try SVGDocument(LatencyReport.svg(Self.samples(1, roundTrips: false)))
        #expect(plot.texts("title").first?.text == "multidoc sync latencies — 1 sample")
        #expect(plot.elements.filter { $0.name == "rect" && $0["class"] == "bar" }.count == 1)
        #expect(plot.elements.filter { $0.name == "circle" }.count == 2, "the point and its legend's marker")
        #expect(plot.texts("y-tick").filter { $0.x < 600 }.count >= 4)
    }

    static let edgeCases: [(String, [Double], title: String)] = [
        ("no samples", [], "multidoc sync latencies"),
        ("one sample", [5.2], "multidoc sync latencies"),
        ("equal samples", Array(repeating: 5, count: 30), "multidoc sync latencies"),
        ("zeros", [0, 0, 0], "multidoc sync latencies"),
        ("huge values", [1e300, 5, 1e308, .greatestFiniteMagnitude, 7], "multidoc sync latencies"),
        ("non-finite values", [.nan, .infinity, 5, -.infinity, 6], "multidoc sync latencies"),
        ("only non-finite values", [.nan, .nan], "multidoc sync latencies"),
        ("clock skew", [-3, 2, -1e12, 4, 5], "multidoc sync latencies"),
        ("markup and controls in the title", [1, 2], "<b>\"A\" & 'B'</b>\u{1}\u{0}\u{FFFF}"),
    ]

    @Test(arguments: edgeCases)
    func edgeInputsDrawAWellFormedDeterministicPicture(_ name: String, values: [Double], title: String) throws {
        let samples = values.enumerated().map { index, value in
            LatencySample(
                at: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), document: DocumentID(Fixed.uuid(1)),
                fromDevice: Fixed.device(2), fromName: "B", oneWayMs: value, roundTripMs: index.isMultiple(of: 2) ? value * 2 : nil)
        }
        let svg = LatencyReport.svg(samples, title: title)
        #expect(svg == LatencyReport.svg(samples, title: title))
        let plot = try SVGDocument(svg)
        #expect(!svg.lowercased().contains("nan") && !svg.contains("inf"), "\(name): no non-finite number is written")
        for element in plot.elements where element.name != "svg" {
            for (keys, limit) in [(["x", "x1", "x2", "cx", "width"], plot.width), (["y", "y1", "y2", "cy", "height"], plot.height)] {
                for key in keys {
                    guard let value = element[key], !value.hasSuffix("%") else { continue }
                    let number = try #require(Double(value), "\(name): \(element.name) \(key)=\(value)")
                    #expect((0...limit).contains(number), "\(name): \(element.name) \(key)=\(value) is on the canvas")
                }
            }
        }
        #expect(plot.texts("title").first?.text.hasPrefix(title.filter { $0 >= " " && $0 != "\u{FFFF}" }) == true)
        let nonFinite = values.filter { !$0.isFinite }.count
        let trips = values.enumerated().filter { $0.offset.isMultiple(of: 2) && !($0.element * 2).isFinite }.count
        if nonFinite > 0 {
            #expect(plot.texts("note").contains { $0.text.contains("\(nonFinite + trips) value") && $0.text.contains("not finite") })
        }
    }

    @Test func negativeLatenciesFromSkewedClocksShowBelowZero() throws {
        let samples = Self.samples(50).enumerated().map { index, sample in
            var sample = sample
            sample.oneWayMs -= 6
            return sample
        }
        let plot = try SVGDocument(LatencyReport.svg(samples))
        let values = plot.texts("y-tick").filter { $0.x < 600 }.compactMap { Double($0.text) }
        #expect((values.min() ?? 0) < 0 && values.contains(0))
        #expect(plot.texts("note").isEmpty)
    }

    @Test(arguments: [(0.0, 55.87), (4.1, 8.9), (0, 1), (0.0012, 0.0019), (0, 1e6), (-3, 5), (0, 7.2e6), (17, 17.5)])
    func niceTicksCoverTheRangeInFourToEightRoundSteps(low: Double, high: Double) {
        let ticks = Ticks.nice(low: low, high: high)
        #expect(ticks.low <= low && ticks.high >= high)
        #expect((4...8).contains(ticks.values.count), "\(ticks)")
        #expect(ticks.values.allSatisfy { !ticks.label($0).isEmpty })
    }

    @Test func ticksOfAnEmptyOrUnusableRangeStillDraw() {
        for (low, high) in [(5.0, 5.0), (0, 0), (.nan, .nan), (-.infinity, .infinity), (.greatestFiniteMagnitude, .greatestFiniteMagnitude)] {
            let ticks = Ticks.nice(low: low, high: high)
            #expect(ticks.low.isFinite && ticks.high > ticks.low && (2...8).contains(ticks.values.count), "\(low)…\(high): \(ticks)")
        }
    }
}

/// The elements of an SVG, in document order, from Foundation's XML parser: parsing fails on
/// anything that is not well-formed XML.
struct SVGDocument {
    struct Element {
        var name: String
        var attributes: [String: String]
        var text = ""
        subscript(_ key: String) -> String? { attributes[key] }
    }

    struct Text {
        var text: String
        var x, y, size: Double
        var anchor: String
    }

    var elements: [Element] = []
    var width = 0.0, height = 0.0

    init(_ svg: String) throws {
        let reader = Reader()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = reader
        guard parser.parse() else {
            throw ParseError(message: "not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "?")")
        }
        elements = reader.elements
        let box = (elements.first?["viewBox"] ?? "").split(separator: " ").compactMap { Double($0) }
        guard elements.first?.name == "svg", box.count == 4 else { throw ParseError(message: "no svg element with a viewBox") }
        (width, height) = (box[2], box[3])
    }

    /// Texts with `role` as their class (all of them without one), as drawn.
    func texts(_ role: String? = nil) -> [Text] {
        let base = Double(elements.first?["font-size"] ?? "") ?? 12
        return elements.filter { $0.name == "text" && (role == nil || $0["class"] == role) }.map { element in
            Text(text: element.text, x: Double(element["x"] ?? "") ?? 0, y: Double(element["y"] ?? "") ?? 0,
                 size: Double(element["font-size"] ?? "") ?? base, anchor: element["text-anchor"] ?? "start")
        }
    }

    struct ParseError: Error { var message: String }

    private final class Reader: NSObject, XMLParserDelegate {
        var elements: [Element] = []
        private var open: [Int] = []

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            open.append(elements.count)
            elements.append(Element(name: name, attributes: attributes))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if let index = open.last { elements[index].text += string }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            _ = open.popLast()
        }
    }
}
