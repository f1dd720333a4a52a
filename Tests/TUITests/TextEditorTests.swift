import Testing
import TerminalUI
import TestSupport

/// The editor's edits, applied in order to the text it started from, give the text it shows,
/// whatever was typed, removed and moved over (combining marks, emoji, line breaks).
struct TextEditorTests {
    /// Applies `edits` to `text` by Unicode scalar positions, as the engine does.
    static func apply(_ edits: [TextEditor.Edit], to text: String) -> String {
        var scalars = Array(text.unicodeScalars)
        for edit in edits {
            switch edit {
            case .insert(let inserted, let position): scalars.insert(contentsOf: inserted.unicodeScalars, at: position)
            case .delete(let position, let length): scalars.removeSubrange(position..<(position + length))
            }
        }
        var result = String.UnicodeScalarView()
        result.append(contentsOf: scalars)
        return String(result)
    }

    @Test(arguments: 0..<40)
    func editsReplayToTheTextShown(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let alphabet: [Unicode.Scalar] = ["a", "b", " ", "é", "\u{301}", "日", "🎉", "\u{200D}", "\u{FE0F}"]
        let starts = ["", "hello\nworld", "e\u{301}t\u{E9} 🎉\n日本", "one\ntwo\nthree\n"]
        let original = starts[Int(random.next() % UInt64(starts.count))]
        var editor = TextEditor(text: original)
        let layoutWidth = 5
        for _ in 0..<200 {
            switch random.next() % 10 {
            case 0, 1, 2, 3: editor.type(alphabet[Int(random.next() % UInt64(alphabet.count))])
            case 4: editor.newline()
            case 5: editor.backspace()
            case 6: editor.deleteForward()
            case 7: random.next() % 2 == 0 ? editor.left() : editor.right()
            case 8: random.next() % 2 == 0 ? editor.home() : editor.end()
            default: editor.vertical(random.next() % 2 == 0 ? -1 : 1, in: TextLayout(editor.characters, width: layoutWidth))
            }
            #expect(Self.apply(editor.edits, to: original).unicodeScalars.elementsEqual(editor.text.unicodeScalars))
        }
    }

    /// Typing on at one place is one insert; backspacing over it shrinks to one delete of what
    /// was there before.
    @Test func runsOfTypingAndRemovingAreOneEditEach() {
        var editor = TextEditor(text: "abc")
        editor.left()
        for scalar in "XYZ".unicodeScalars { editor.type(scalar) }
        #expect(editor.edits == [.insert("XYZ", at: 2)])
        editor.right()
        editor.backspace()
        editor.backspace()
        #expect(editor.edits == [.insert("XYZ", at: 2), .delete(at: 4, length: 2)])
        #expect(editor.text == "abXY")
    }
}
