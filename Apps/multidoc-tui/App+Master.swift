import AppSupport
import Engine
import Foundation
import Model
import TerminalUI

extension TUIApp {
    /// The master table: one row per document. Rows not viewable yet (discovered, first import
    /// pending) are dim and cannot be opened; the next refresh after the import shows them normal.
    func drawMaster() {
        let (lines, columns) = terminal.size
        let documents = model.documents, selected = model.selected
        drawTitle("multidoc — \(documents.count) document\(documents.count == 1 ? "" : "s")")
        // Narrow terminals lose the origin column first, then state text.
        let stateWidth = columns >= 100 ? 44 : (columns >= 80 ? 30 : (columns >= 60 ? 18 : 12))
        let originWidth = columns >= 70 ? 11 : 0, percentWidth = 7, locationWidth = 5
        let nameWidth = max(6, columns - stateWidth - originWidth - percentWidth - locationWidth - 6)
        func row(_ name: String, _ state: String, _ origin: String, _ percent: String, _ location: String) -> String {
            " " + TextWidth.pad(name, to: nameWidth) + " " + TextWidth.pad(state, to: stateWidth) + " "
                + (originWidth > 0 ? TextWidth.pad(origin, to: originWidth) + " " : "")
                + String(repeating: " ", count: max(0, percentWidth - percent.count)) + percent
                + " " + TextWidth.pad(location, to: locationWidth)
        }
        terminal.drawBar(row("Name", "State", "Created", "Down", "Where"), line: 1, style: [.bold, .underline])
        let top = 2, height = max(1, lines - 4)
        if documents.isEmpty {
            terminal.draw(" No documents yet. Press + or n to add one; documents from peers appear here by themselves.", line: top + 1, column: 0, style: [.dim])
        }
        if selected < listScroll { listScroll = selected }
        if selected >= listScroll + height { listScroll = selected - height + 1 }
        for (offset, document) in documents.dropFirst(listScroll).prefix(height).enumerated() {
            let index = listScroll + offset
            let origin = document.origin == .created ? "created" : "discovered"
            let text = row(document.name, document.state.statusString, origin, DocumentRow.downloaded(document), document.location.rawValue)
            var style: Style = []
            if !document.viewable { style.insert(.dim) }
            if document.problem != nil { style.insert(.error) }
            if index == selected { style.insert(.reverse) }
            terminal.drawBar(text, line: top + offset, style: style)
        }
        // Fits 80 columns; + and r are in the ? help.
        drawKeys("n new  Enter open  d delete  t trash  s settings  l latencies  ? keys  q quit")
    }

    func handleMaster(_ key: Key) async {
        if await handleCommon(key) { return }
        let page = max(1, terminal.size.lines - 4), last = max(0, model.documents.count - 1)
        switch key {
        case .up, .character("k"): model.selected = max(0, model.selected - 1)
        case .down, .character("j"): model.selected = min(last, model.selected + 1)
        case .pageUp: model.selected = max(0, model.selected - page)
        case .pageDown: model.selected = min(last, model.selected + page)
        case .home: model.selected = 0
        case .end: model.selected = last
        case .character("+"), .character("n"):
            await model.create()
        case .character("d"), .delete:
            guard model.documents.indices.contains(model.selected) else { return }
            pendingDelete = model.documents[model.selected]
        case .enter, .right:
            guard model.documents.indices.contains(model.selected) else { return }
            await openDetail(model.documents[model.selected])
        case .character("s"):
            settingsCursor = 0
            screen = .settings
        case .character("l"):
            model.loadLatencies()
            screen = .latencies
        case .character("t"):
            await model.loadTrash()
            trashCursor = 0
            screen = .trash
        default:
            break
        }
    }

    /// The trash: documents deleted here or by a peer, restorable for 30 days as new documents
    /// (what `multidoc trash` and `multidoc restore` do).
    func drawTrash() {
        let (lines, columns) = terminal.size, trashEntries = model.trashEntries
        drawTitle("Trash — \(trashEntries.count) document\(trashEntries.count == 1 ? "" : "s"), kept \(DocumentLibrary.trashDays) days")
        let nameWidth = max(8, columns - 46)
        terminal.drawBar(" " + TextWidth.pad("Name", to: nameWidth) + " " + TextWidth.pad("Deleted", to: 20) + " By", line: 1, style: [.bold, .underline])
        if trashEntries.isEmpty {
            terminal.draw(" The trash is empty. Deleted documents stay here for \(DocumentLibrary.trashDays) days.", line: 3, column: 0, style: [.dim])
        }
        for (index, entry) in trashEntries.prefix(max(1, lines - 4)).enumerated() {
            let row = " " + TextWidth.pad(entry.name, to: nameWidth) + " " + TextWidth.pad(TimeText.local(entry.deletedAt), to: 20) + " " + entry.deletedBy
            terminal.drawBar(row, line: 2 + index, style: index == trashCursor ? [.reverse] : [])
        }
        drawKeys("Enter restore (as a new document)  Esc back  ? keys  q quit")
    }

    func handleTrash(_ key: Key) async {
        if await handleCommon(key) { return }
        switch key {
        case .up, .character("k"): trashCursor = max(0, trashCursor - 1)
        case .down, .character("j"): trashCursor = min(max(0, model.trashEntries.count - 1), trashCursor + 1)
        case .escape, .left: screen = .master
        case .enter:
            guard model.trashEntries.indices.contains(trashCursor) else { return }
            if await model.restore(model.trashEntries[trashCursor]) { screen = .master }
            trashCursor = min(trashCursor, max(0, model.trashEntries.count - 1))
        default:
            break
        }
    }
}
