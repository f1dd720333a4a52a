import AppSupport
import Engine
import Foundation
import Model
import Settings
import Storage
import Sync
import TerminalUI

extension TUIApp {
    /// Opens the detail of `document` (``LibraryModel/openDetail(_:)``).
    func openDetail(_ document: DocumentSummary) async {
        guard await model.openDetail(document) else { return }
        view = DetailView()
        screen = .detail
    }

    /// Back to the master list; stops inspecting.
    func leaveDetail() async {
        guard model.open != nil else { return }
        view = DetailView()
        await model.leaveDetail()
        screen = .master
    }

    /// Draws the detail and returns where the cursor goes while editing.
    func drawDetail() -> (line: Int, column: Int)? {
        guard let open = model.open else { return nil }
        let (lines, columns) = terminal.size
        drawTitle(open.name)
        let summary = open.detail?.summary
        terminal.draw(" File:     ", line: 1, column: 0, style: [.bold])
        terminal.draw(open.name, line: 1, column: 11)
        terminal.draw(" State:    ", line: 2, column: 0, style: [.bold])
        terminal.draw(summary?.state.statusString ?? "?", line: 2, column: 11)
        terminal.draw(" Modified: ", line: 3, column: 0, style: [.bold])
        terminal.draw(open.detail?.modified.map(TimeText.local) ?? "—", line: 3, column: 11)
        if let summary {
            terminal.draw("\(summary.location.rawValue) · \(summary.store.rawValue) · \(summary.id.description.prefix(8))", line: 1, column: max(40, columns - 30), style: [.dim])
        }
        let editing = view.editor != nil
        terminal.drawBar(editing ? " Text — editing: Esc or F2 saves" : " Text — e or Enter edits", line: 4, style: editing ? [.accent, .bold] : [.bold, .underline])
        let top = 5, height = max(1, lines - top - 2), width = max(2, columns - 2)
        let characters = view.editor?.characters ?? Array(open.detail?.text ?? "")
        let layout = TextLayout(characters, width: width)
        var scroll = view.scroll
        var cursor: (line: Int, column: Int)?
        if let editor = view.editor {
            let position = layout.positions[editor.cursor]
            if position.row < scroll { scroll = position.row }
            if position.row >= scroll + height { scroll = position.row - height + 1 }
            cursor = (top + position.row - scroll, 1 + position.column)
        } else {
            scroll = max(0, min(scroll, layout.rows.count - height))
        }
        view.scroll = scroll
        for (offset, row) in layout.rows.dropFirst(scroll).prefix(height).enumerated() {
            terminal.draw(row, line: top + offset, column: 1, width: width)
        }
        if editing {
            drawKeys("type to edit  arrows move  Enter new line  Esc/F2 save and leave edit mode")
        } else {
            drawKeys("e edit  Esc back  ↑↓ scroll  \(model.settings.enablePing ? "p ping  " : "")r sync  ? keys  q quit")
        }
        return cursor
    }

    func handleDetail(_ key: Key) async {
        guard let open = model.open else {
            screen = .master
            return
        }
        if var editor = view.editor {
            let width = max(2, terminal.size.columns - 2)
            switch key {
            case .escape, .function(2):
                // Leaves edit mode and saves (the seed: dismiss the keyboard to update the object graph).
                view.editor = nil
                await model.saveEdit(editor.text, editedFrom: editor.original, edits: editor.edits.map(\.kind))
                return
            case .enter: editor.newline()
            case .backspace: editor.backspace()
            case .delete: editor.deleteForward()
            case .left: editor.left()
            case .right: editor.right()
            case .up: editor.vertical(-1, in: TextLayout(editor.characters, width: width))
            case .down: editor.vertical(1, in: TextLayout(editor.characters, width: width))
            case .home: editor.home()
            case .end: editor.end()
            case .tab: editor.type(" ")
            case .character(let scalar): editor.type(scalar)
            default: break
            }
            view.editor = editor
            return
        }
        if await handleCommon(key) { return }
        switch key {
        case .character("e"), .enter:
            guard let detail = open.detail, detail.summary.viewable else {
                model.fail("\(open.name) is not viewable yet: waiting for its first import")
                return
            }
            view.editor = TextEditor(text: detail.text)
            model.open?.peerChangedWhileEditing = false
        case .escape, .left, .backspace, .character("b"):
            await leaveDetail()
        case .up: view.scroll = max(0, view.scroll - 1)
        case .down: view.scroll += 1
        case .pageUp: view.scroll = max(0, view.scroll - (terminal.size.lines - 7))
        case .pageDown: view.scroll += terminal.size.lines - 7
        case .character("p"):
            await model.ping()
        default:
            break
        }
    }
}

extension TextEditor.Edit {
    /// The engine's edit at the same place.
    var kind: TextEdit.Kind {
        switch self {
        case .insert(let text, let position): .insert(text, at: position)
        case .delete(let position, let length): .delete(position..<(position + length))
        }
    }
}
