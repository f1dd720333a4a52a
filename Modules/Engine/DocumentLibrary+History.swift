import Foundation
import Model
import Storage

/// A point in a document's history: a save's number (`multidoc history` lists them) or a time
/// (the text as it was after the last save made at or before it).
public enum HistoryPoint: Sendable, Equatable {
    case save(UInt64)
    case time(Date)
}

extension DocumentLibrary {
    /// The saves that made the document's text, oldest first, as this device applied them: the
    /// last 1,000 and any of the last 30 days (``Storage/TextSave``). Saves of a container of
    /// format 1 (whole texts, last writer wins) are not in it.
    public func history(_ id: DocumentID) async throws -> [TextSave] {
        Self.textSaves(try await viewableContents(id))
    }

    /// The text as it was right after the save `point` names, and that save.
    public func text(_ id: DocumentID, at point: HistoryPoint) async throws -> (text: String, save: TextSave) {
        let contents = try await viewableContents(id)
        let name = localRecord(id)?.name.rawValue ?? id.description
        guard let entry = contents.graph.textEntry else { throw EngineError.notInHistory(name, "its text has no history yet") }
        let saves = Self.textSaves(contents)
        let target: TextSave?
        switch point {
        case .save(let number): target = saves.first { $0.id == number }
        case .time(let date): target = saves.last { $0.committedAt <= date }
        }
        guard let target else {
            let range = saves.first.map { first in "saves \(first.id)–\(saves.last?.id ?? first.id)" } ?? "no saves"
            let what = if case .save(let number) = point { "save \(number)" } else { "save at or before that time" }
            throw EngineError.notInHistory(name, "its history has no \(what) (it holds \(range): the last 1,000 saves and any of the last 30 days; 'multidoc history \(name)' lists them)")
        }
        var text = entry.text
        for save in saves.reversed() where save.id > target.id {
            guard let earlier = save.undone(text) else {
                throw EngineError.notInHistory(name, "its history does not fit its text at save \(save.id); the text before it cannot be rebuilt")
            }
            text = earlier
        }
        return (text, target)
    }

    /// `multidoc revert`: a new save that makes the text what it was after `point` (and syncs
    /// like any save). Returns the save it went back to.
    @discardableResult
    public func revert(_ id: DocumentID, to point: HistoryPoint) async throws -> TextSave {
        let (text, save) = try await text(id, at: point)
        try await setText(id, text)
        return save
    }

    /// The saves of the document's text (its text entry's `text`), oldest first.
    private static func textSaves(_ contents: StoreContents) -> [TextSave] {
        guard let entry = contents.graph.textEntry else { return [] }
        return contents.sync.history.filter { $0.object == entry.id && $0.attribute == Entity.TextEntry.text }
    }

    private func viewableContents(_ id: DocumentID) async throws -> StoreContents {
        let document = try await openEditable(id)
        let contents = try document.read()
        guard contents.graph.textEntry != nil else {
            throw EngineError.notViewableYet(document.record.name.rawValue)
        }
        return contents
    }
}
