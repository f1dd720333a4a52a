/// A form of one-line text fields on the terminal, each with a label and a hint: Tab and the
/// arrows move between fields, Enter moves on and, on the last field, submits; Esc leaves.
/// Long values scroll so that their end (where the cursor usually is) stays in view.
public struct TerminalForm: Sendable {
    /// One field: what it asks, a hint below it, and the value being typed.
    public struct Field: Sendable {
        public var label: String
        public var hint: String
        public var editor: TextEditor

        public init(label: String, hint: String, text: String) {
            self.label = label
            self.hint = hint
            editor = TextEditor(text: text)
        }
    }

    /// What a key did to the form.
    public enum Action: Sendable, Equatable {
        case none, edited, submit, cancel
    }

    public var fields: [Field]
    /// The field being typed in.
    public var focus = 0
    /// A line below the fields: a question (`isError` false) or what to change.
    public var message: (text: String, isError: Bool)?

    public init(fields: [Field]) {
        self.fields = fields
    }

    /// The value of field `index`.
    public func text(_ index: Int) -> String { fields[index].editor.text }

    /// Handles one key; an edit clears the message.
    public mutating func handle(_ key: Key) -> Action {
        switch key {
        case .escape: return .cancel
        case .tab, .down: focus = (focus + 1) % fields.count
        case .up: focus = (focus + fields.count - 1) % fields.count
        case .enter:
            guard focus < fields.count - 1 else { return .submit }
            focus += 1
        case .backspace: return edit { $0.backspace() }
        case .delete: return edit { $0.deleteForward() }
        case .left: fields[focus].editor.left()
        case .right: fields[focus].editor.right()
        case .home: fields[focus].editor.home()
        case .end: fields[focus].editor.end()
        case .character(let scalar) where scalar.value >= 0x20: return edit { $0.type(scalar) }
        default: break
        }
        return .none
    }

    private mutating func edit(_ change: (inout TextEditor) -> Void) -> Action {
        change(&fields[focus].editor)
        message = nil
        return .edited
    }

    /// Draws the form as a whole screen: a title bar, the lines of `intro`, the fields, the
    /// message and the key hints of `footer` on the last line.
    @MainActor
    public func draw(on terminal: Terminal, title: String, intro: [String], footer: String) {
        terminal.clear()
        let columns = terminal.size.columns
        terminal.drawBar(" " + title, line: 0, style: [.title])
        for (index, line) in intro.enumerated() { terminal.draw(line, line: 2 + index, column: 2) }
        let labelWidth = 20
        var cursor: (line: Int, column: Int)?
        for (index, field) in fields.enumerated() {
            let line = 5 + index * 3
            let focused = index == focus
            terminal.draw(field.label + ":", line: line, column: 2, style: focused ? [.bold] : [])
            let width = max(10, columns - labelWidth - 4)
            let text = field.editor.text
            let shown = TextWidth.of(text) < width ? text : "…" + String(text.suffix(width - 2))
            terminal.draw(TextWidth.pad(shown, to: width), line: line, column: labelWidth, width: width, style: focused ? [.underline, .accent] : [.underline])
            terminal.draw(field.hint, line: line + 1, column: labelWidth, style: [.dim])
            if focused {
                let before = String(field.editor.characters.prefix(field.editor.cursor))
                let offset = TextWidth.of(text) < width ? TextWidth.of(before) : min(width - 1, 1 + TextWidth.of(String(before.suffix(width - 2))))
                cursor = (line, labelWidth + offset)
            }
        }
        if let message {
            terminal.draw(message.text, line: 6 + fields.count * 3, column: 2, style: message.isError ? [.error] : [.accent])
        }
        terminal.drawBar(" " + footer, line: terminal.size.lines - 1, style: [.reverse])
        terminal.placeCursor(cursor)
        terminal.refresh()
    }
}
