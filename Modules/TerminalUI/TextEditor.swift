/// A multi-line text being edited: characters (grapheme clusters, so "é", "日" and "🎉" are
/// one each) and a cursor between them, with the edits made so far at their places, so a
/// save can hand over what changed instead of the whole text.
public struct TextEditor: Sendable {
    /// One edit, at a place counted in Unicode scalars in the text as the edits before it left
    /// it (the engine's positions, not characters).
    public enum Edit: Sendable, Equatable {
        case insert(String, at: Int)
        case delete(at: Int, length: Int)
    }

    public private(set) var characters: [Character]
    /// Index of the character the cursor stands before (`characters.count`: at the end).
    public private(set) var cursor: Int
    /// The text when editing began, to tell whether there is anything to save.
    public let original: String
    /// What was typed and removed since editing began, in order; typing on at one place
    /// grows one insert, and removing on at one place grows one delete.
    public private(set) var edits: [Edit] = []
    /// Unicode scalars before the cursor (where an edit at the cursor is).
    private var scalarCursor: Int

    /// Edits `text`, the cursor at its end.
    public init(text: String) {
        characters = Array(text)
        cursor = characters.count
        original = text
        scalarCursor = text.unicodeScalars.count
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
                inserted(String(scalar))
                return
            }
        }
        characters.insert(Character(scalar), at: cursor)
        cursor += 1
        inserted(String(scalar))
    }

    /// Breaks the line at the cursor.
    public mutating func newline() {
        characters.insert("\n", at: cursor)
        cursor += 1
        inserted("\n")
    }

    /// Removes the character before the cursor.
    public mutating func backspace() {
        guard cursor > 0 else { return }
        let removed = characters.remove(at: cursor - 1)
        cursor -= 1
        let length = removed.unicodeScalars.count
        scalarCursor -= length
        deleted(at: scalarCursor, length: length)
    }

    /// Removes the character after the cursor.
    public mutating func deleteForward() {
        guard cursor < characters.count else { return }
        let removed = characters.remove(at: cursor)
        deleted(at: scalarCursor, length: removed.unicodeScalars.count)
    }

    /// One character back.
    public mutating func left() { move(to: max(0, cursor - 1)) }
    /// One character on.
    public mutating func right() { move(to: min(characters.count, cursor + 1)) }

    /// To the start of the logical line.
    public mutating func home() {
        var target = cursor
        while target > 0, characters[target - 1] != "\n" { target -= 1 }
        move(to: target)
    }

    /// To the end of the logical line.
    public mutating func end() {
        var target = cursor
        while target < characters.count, characters[target] != "\n" { target += 1 }
        move(to: target)
    }

    /// The cursor to `target`, its scalar position counted over the characters passed.
    private mutating func move(to target: Int) {
        if target > cursor {
            for character in characters[cursor..<target] { scalarCursor += character.unicodeScalars.count }
        } else {
            for character in characters[target..<cursor] { scalarCursor -= character.unicodeScalars.count }
        }
        cursor = target
    }

    /// Notes `text` typed at the cursor (already in `characters`) and moves the scalar cursor past it.
    private mutating func inserted(_ text: String) {
        if case .insert(let typed, let at) = edits.last, at + typed.unicodeScalars.count == scalarCursor {
            edits[edits.count - 1] = .insert(typed + text, at: at)
        } else {
            edits.append(.insert(text, at: scalarCursor))
        }
        scalarCursor += text.unicodeScalars.count
    }

    /// Notes `length` scalars removed at `position`: a backspace run grows the delete to its
    /// left, a forward-delete run at one place grows it in place.
    private mutating func deleted(at position: Int, length: Int) {
        if case .delete(let at, let count) = edits.last, position + length == at || position == at {
            edits[edits.count - 1] = .delete(at: position, length: count + length)
        } else {
            edits.append(.delete(at: position, length: length))
        }
    }

    /// One visual row up or down in `layout`, keeping the column as far as the row allows.
    public mutating func vertical(_ delta: Int, in layout: TextLayout) {
        let here = layout.positions[cursor]
        let targetRow = here.row + delta
        guard targetRow >= 0, targetRow < layout.rows.count else {
            move(to: delta < 0 ? 0 : characters.count)
            return
        }
        var best: Int?
        for (index, position) in layout.positions.enumerated() where position.row == targetRow && position.column <= here.column {
            best = index
        }
        if let best { move(to: best) }
    }
}
