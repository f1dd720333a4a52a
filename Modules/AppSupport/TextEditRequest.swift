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

    /// Saves the edit of document `id`.
    public func apply(to id: DocumentID, in library: DocumentLibrary, environment: [String: String]) async throws {
        switch self {
        case .replace(let text): try await library.setText(id, text)
        case .append(let suffix): try await library.appendText(id, suffix)
        case .insert(let text, let position): try await library.insertText(id, text, at: position)
        case .delete(let position, let length): try await library.deleteText(id, at: position, length: length)
        case .editor:
            let original = try await library.detail(id).text
            try await library.saveEditedText(id, try TerminalPrompt.edit(original, environment: environment), editedFrom: original)
        }
    }
}
