/// A multi-line text being edited: characters (grapheme clusters, so "é", "日" and "🎉" are
/// one each) and a cursor between them.
public struct TextEditor: Sendable {
    public private(set) var characters: [Character]
    /// Index of the character the cursor stands before (`characters.count`: at the end).
    public private(set) var cursor: Int
    /// The text when editing began, to tell whether there is anything to save.
    public let original: String

    /// Edits `text`, the cursor at its end.
    public init(text: String) {
        characters = Array(text)
        cursor = characters.count
        original = text
    }

    public var text: String { String(characters) }
    public var isChanged: Bool { text != original }

    /// Types one Unicode scalar; a combining mark, variation selector or joiner joins the
    /// character before the cursor, as the terminal shows it.
    public mutating func type(_ scalar: Unicode.Scalar) {
        if cursor > 0 {
            let merged = String(characters[cursor - 1]) + String(scalar)
            if merged.count == 1, let character = merged.first {
                characters[cursor - 1] = character
                return
            }
        }
        characters.insert(Character(scalar), at: cursor)
        cursor += 1
    }

    /// Breaks the line at the cursor.
    public mutating func newline() {
        characters.insert("\n", at: cursor)
        cursor += 1
    }

    /// Removes the character before the cursor.
    public mutating func backspace() {
        guard cursor > 0 else { return }
        characters.remove(at: cursor - 1)
        cursor -= 1
    }

    /// Removes the character after the cursor.
    public mutating func deleteForward() {
        guard cursor < characters.count else { return }
        characters.remove(at: cursor)
    }

    /// One character back.
    public mutating func left() { cursor = max(0, cursor - 1) }
    /// One character on.
    public mutating func right() { cursor = min(characters.count, cursor + 1) }

    /// To the start of the logical line.
    public mutating func home() {
        while cursor > 0, characters[cursor - 1] != "\n" { cursor -= 1 }
    }

    /// To the end of the logical line.
    public mutating func end() {
        while cursor < characters.count, characters[cursor] != "\n" { cursor += 1 }
    }

    /// One visual row up or down in `layout`, keeping the column as far as the row allows.
    public mutating func vertical(_ delta: Int, in layout: TextLayout) {
        let here = layout.positions[cursor]
        let targetRow = here.row + delta
        guard targetRow >= 0, targetRow < layout.rows.count else {
            cursor = delta < 0 ? 0 : characters.count
            return
        }
        var best: Int?
        for (index, position) in layout.positions.enumerated() where position.row == targetRow && position.column <= here.column {
            best = index
        }
        if let best { cursor = best }
    }
}
