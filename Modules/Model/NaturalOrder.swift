/// The order people expect of names: case-insensitive, with runs of digits compared as numbers
/// (`TestDoc2` before `TestDoc10`), as Finder and `localizedStandardCompare` sort. Keys are
/// made once per name, so sorting thousands of names costs no locale-aware comparison per pair.
public enum NaturalOrder {
    public struct Key: Comparable, Hashable, Sendable {
        fileprivate var parts: [Part]

        public static func < (lhs: Key, rhs: Key) -> Bool { lhs.parts.lexicographicallyPrecedes(rhs.parts) }
    }

    fileprivate enum Part: Comparable, Hashable, Sendable {
        /// A run of digits: its value's digit count (leading zeros dropped), then the digits.
        case number(length: Int, digits: String)
        case text(String)

        static func < (lhs: Part, rhs: Part) -> Bool {
            switch (lhs, rhs) {
            case (.number(let a, let x), .number(let b, let y)): return a != b ? a < b : x < y
            case (.number, .text): return true
            case (.text, .number): return false
            case (.text(let x), .text(let y)): return x < y
            }
        }
    }

    public static func key(_ name: String) -> Key {
        var parts: [Part] = []
        var text = ""
        var digits = ""
        func flushDigits() {
            guard !digits.isEmpty else { return }
            let trimmed = String(digits.drop { $0 == "0" })
            parts.append(.number(length: trimmed.count, digits: trimmed))
            digits = ""
        }
        func flushText() {
            guard !text.isEmpty else { return }
            parts.append(.text(text.lowercased()))
            text = ""
        }
        for scalar in name.unicodeScalars {
            if scalar.value >= 0x30, scalar.value <= 0x39 {
                flushText()
                digits.unicodeScalars.append(scalar)
            } else {
                flushDigits()
                text.unicodeScalars.append(scalar)
            }
        }
        flushDigits()
        flushText()
        return Key(parts: parts)
    }
}
