import CNcurses

/// Display widths of text in terminal columns (wcwidth under the UTF-8 locale): accents take
/// one column, CJK and most emoji two.
public enum TextWidth {
    /// The columns `character` takes: 1 or 2.
    public static func of(_ character: Character) -> Int {
        var total = 0
        for scalar in character.unicodeScalars {
            let width = multidoc_wcwidth(scalar.value)
            if width > 0 { total += Int(width) }
        }
        return max(1, min(2, total))
    }

    /// The columns `text` takes.
    public static func of(_ text: String) -> Int { text.reduce(0) { $0 + of($1) } }

    /// What is shown for a character: control characters become spaces.
    public static func printable(_ character: Character) -> Character {
        if let scalar = character.unicodeScalars.first, character.unicodeScalars.count == 1,
           scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
            return " "
        }
        return character
    }

    /// `text` if it fits in `width` columns, else its longest prefix that fits with a "…".
    public static func clip(_ text: String, to width: Int) -> String {
        guard width > 0 else { return "" }
        let shown = String(text.map(printable))
        guard of(shown) > width else { return shown }
        var result = ""
        var used = 0
        for character in shown {
            let columns = of(character)
            if used + columns > width - 1 { break }
            result.append(character)
            used += columns
        }
        return result + "…"
    }

    /// `text` clipped and padded with spaces to exactly `width` columns.
    public static func pad(_ text: String, to width: Int) -> String {
        let clipped = clip(text, to: width)
        return clipped + String(repeating: " ", count: max(0, width - of(clipped)))
    }
}
