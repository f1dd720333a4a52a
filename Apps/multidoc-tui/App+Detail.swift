import AppSupport
import Engine
import Foundation
import Model
import Settings
import Storage
import Text
import TerminalUI

extension TUIApp {
    /// Opens the detail (the seed's segue): copies the container first with
    /// CopyContainerOnSegue (the engine does it), and inspects the document so imported changes
    /// record latencies and, with EnablePing, are answered.
    func openDetail(_ document: DocumentSummary) async {
        guard document.viewable else {
            fail("\(document.name) is not viewable yet: waiting for its first import")
            return
        }
        do {
            let detail = try await library.detail(document.id, segue: true)
            detailState = DetailState(id: document.id, name: detail.summary.name, detail: detail)
            screen = .detail
            await library.inspect(document.id)
            if let problem = detail.containerCopyProblem {
                fail(problem)
            } else if settings.copyContainerOnSegue {
                show("container copied to Documents/copyOfCloudContainer")
            }
        } catch {
            fail(error)
        }
    }

    /// Back to the master list; stops inspecting.
    func leaveDetail() async {
        guard detailState != nil else { return }
        await library.inspect(nil)
        detailState = nil
        screen = .master
        await refreshList()
    }

    /// Draws the detail and returns where the cursor goes while editing.
    func drawDetail() -> (line: Int, column: Int)? {
        guard let state = detailState else { return nil }
        let (lines, columns) = terminal.size
        drawTitle(state.name)
        let summary = state.detail?.summary
        terminal.draw(" File:     ", line: 1, column: 0, style: [.bold])
        terminal.draw(state.name, line: 1, column: 11)
        terminal.draw(" State:    ", line: 2, column: 0, style: [.bold])
        terminal.draw(summary?.state.statusString ?? "?", line: 2, column: 11)
        terminal.draw(" Modified: ", line: 3, column: 0, style: [.bold])
        terminal.draw(state.detail?.modified.map(Self.format) ?? "—", line: 3, column: 11)
        if let summary {
            terminal.draw("\(summary.location.rawValue) · \(summary.store.rawValue) · \(summary.id.description.prefix(8))", line: 1, column: max(40, columns - 30), style: [.dim])
        }
        let editing = state.editor != nil
        terminal.drawBar(editing ? " Text — editing: Esc or F2 saves" : " Text — e or Enter edits", line: 4, style: editing ? [.accent, .bold] : [.bold, .underline])
        let top = 5, height = max(1, lines - top - 2), width = max(2, columns - 2)
        let characters = state.editor?.characters ?? Array(state.detail?.text ?? "")
        let layout = TextLayout(characters, width: width)
        var scroll = state.scroll
        var cursor: (line: Int, column: Int)?
        if let editor = state.editor {
            let position = layout.positions[editor.cursor]
            if position.row < scroll { scroll = position.row }
            if position.row >= scroll + height { scroll = position.row - height + 1 }
            cursor = (top + position.row - scroll, 1 + position.column)
        } else {
            scroll = max(0, min(scroll, layout.rows.count - height))
        }
        detailState?.scroll = scroll
        for (offset, row) in layout.rows.dropFirst(scroll).prefix(height).enumerated() {
            terminal.draw(row, line: top + offset, column: 1, width: width)
        }
        if editing {
            drawKeys("type to edit  arrows move  Enter new line  Esc/F2 save and leave edit mode")
        } else {
            drawKeys("e edit  Esc back  ↑↓ scroll  \(settings.enablePing ? "p ping  " : "")r sync  ? keys  q quit")
        }
        return cursor
    }

    func handleDetail(_ key: Key) async {
        guard var state = detailState else {
            screen = .master
            return
        }
        if var editor = state.editor {
            let width = max(2, terminal.size.columns - 2)
            switch key {
            case .escape, .function(2):
                await saveEdit(editor)
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
            state.editor = editor
            detailState = state
            return
        }
        if await handleCommon(key) { return }
        switch key {
        case .character("e"), .enter:
            guard let detail = state.detail, detail.summary.viewable else {
                fail("\(state.name) is not viewable yet: waiting for its first import")
                return
            }
            state.editor = TextEditor(text: detail.text)
            state.peerChangedWhileEditing = false
            detailState = state
        case .escape, .left, .backspace, .character("b"):
            await leaveDetail()
        case .up: detailState?.scroll = max(0, state.scroll - 1)
        case .down: detailState?.scroll = state.scroll + 1
        case .pageUp: detailState?.scroll = max(0, state.scroll - (terminal.size.lines - 7))
        case .pageDown: detailState?.scroll = state.scroll + (terminal.size.lines - 7)
        case .character("p"):
            guard settings.enablePing else {
                fail("EnablePing is off (s for settings)")
                return
            }
            do {
                try await library.startPing()
                show("ping sent")
                await reloadDetail()
            } catch {
                fail(error)
            }
        default:
            break
        }
    }

    /// Leaves edit mode and saves (the seed: dismiss the keyboard to update the object graph).
    private func saveEdit(_ editor: TextEditor) async {
        guard let id = detailState?.id else { return }
        detailState?.editor = nil
        if editor.isChanged {
            do {
                switch try await library.saveEditedText(id, editor.text, editedFrom: editor.original) {
                case .mine: show("saved")
                case .mergedWithPeer: show("saved, with what a peer added meanwhile")
                case .keptBoth: show("saved; a peer changed the same part meanwhile: both versions kept, theirs first")
                }
            } catch {
                fail(error)
            }
        }
        await reloadDetail()
    }

    static func format(_ date: Date) -> String { TimeText.local(date) }
}
