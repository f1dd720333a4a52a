/// Text wrapped to a width: the rows to show and where each character index lands.
public struct TextLayout {
    /// The rows, each already made printable.
    public var rows: [String]
    /// For every index 0...count: its row and column (the last one is the end of the text).
    public var positions: [(row: Int, column: Int)]

    /// Wraps `characters` to `width` columns (at least 2).
    public init(_ characters: [Character], width: Int) {
        let width = max(2, width)
        var rows = [""]
        var positions: [(row: Int, column: Int)] = []
        positions.reserveCapacity(characters.count + 1)
        var row = 0, column = 0
        for character in characters {
            if character == "\n" {
                positions.append((row, column))
                row += 1
                column = 0
                rows.append("")
                continue
            }
            let shown = TextWidth.printable(character)
            let columns = TextWidth.of(shown)
            if column + columns > width {
                row += 1
                column = 0
                rows.append("")
            }
            positions.append((row, column))
            rows[row].append(shown)
            column += columns
        }
        if column >= width {
            row += 1
            column = 0
            rows.append("")
        }
        positions.append((row, column))
        self.rows = rows
        self.positions = positions
    }
}
