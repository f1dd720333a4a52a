import Engine
import Foundation
import Model

/// What `multidoc edit` was asked to do to a document's text.
public enum TextEditRequest: Sendable {
    case replace(String), append(String), insert(String, at: Int), delete(at: Int, length: Int)
    /// The text in `$VISUAL`, `$EDITOR` or vi; a peer's save while the editor was open is
    /// merged, not overwritten.
    case editor

    /// The request the flags make (none of them: the editor). The flags are checked first.
    public init(text: String?, append: String?, insert: [String], delete: [String]) {
        if let text {
            self = .replace(text)
        } else if let append {
            self = .append(append)
        } else if insert.count == 2, let position = Int(insert[0]) {
            self = .insert(insert[1], at: position)
        } else if delete.count == 2, let position = Int(delete[0]), let length = Int(delete[1]) {
            self = .delete(at: position, length: length)
        } else {
            self = .editor
        }
    }

    /// Saves the edit of document `id`; an edit that changes nothing (an empty insert or
    /// append, a delete of nothing, the text it already has, an editor closed on the text as it
    /// was) makes no save. Returns whether a save was made.
    /// - Throws: the engine's errors; a position past the end is refused even when nothing would
    ///   change there.
    @discardableResult
    public func apply(to id: DocumentID, in library: DocumentLibrary, environment: [String: String]) async throws -> Bool {
        switch self {
        case .replace(let text):
            if try await library.detail(id).text == text { return false }
            try await library.setText(id, text)
        case .append(let suffix):
            if suffix.isEmpty, try await !pastTheEnd(id, in: library, at: 0) { return false }
            try await library.appendText(id, suffix)
        case .insert(let text, let position):
            if text.isEmpty, try await !pastTheEnd(id, in: library, at: position) { return false }
            try await library.insertText(id, text, at: position)
        case .delete(let position, let length):
            if length == 0, try await !pastTheEnd(id, in: library, at: position) { return false }
            try await library.deleteText(id, at: position, length: length)
        case .editor:
            let original = try await library.detail(id).text
            let edited = try TerminalPrompt.edit(original, environment: environment)
            if edited == original { return false }
            try await library.saveEditedText(id, edited, editedFrom: original)
        }
        return true
    }

    /// Whether `position` is past the end of the text: an edit that changes nothing there still
    /// goes to the engine, to be refused with the text's length. Reading the text also refuses
    /// a document that is not viewable here.
    private func pastTheEnd(_ id: DocumentID, in library: DocumentLibrary, at position: Int) async throws -> Bool {
        position > (try await library.detail(id).text.unicodeScalars.count)
    }
}
