import Engine
import Foundation
import Model
import Sync
import Testing
import Text
import TestSupport

/// A text edited in an editor that knows where its cursor was (the TUI) is saved as the edits
/// it made, at their places: what the user typed stays where it was typed once peers' saves
/// merge in, and a peer's save that came in while the editor was open is merged, not lost.
@Suite(.timeLimit(.minutes(1)))
struct EditedTextTests {
    /// A and B share "aaa"; A types "a" at the very start while B, cut off from A's save,
    /// inserts "X" after the first "a". Saved as an edit at position 0, A's "a" stays first on
    /// both: "aaXaa". A diff of the whole text cannot tell where in "aaaa" the new "a" went
    /// and puts it after the first "a", behind B's "X": "aXaaa".
    @Test func whatIsTypedStaysWhereItWasTyped() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A")
        let b = try harness.device("B")
        let created = try await a.create(name: try DocumentName("Shared"))
        try await a.setText(created.id, "aaa")
        await b.sync()
        #expect(try await b.detail(created.id).text == "aaa")

        let before = Set(Self.files(in: harness.container))
        let outcome = try await a.saveEditedText(created.id, "aaaa", editedFrom: "aaa", edits: [.insert("a", at: 0)])
        #expect(outcome == .mine)
        // A's save is held back (a partition) while B edits, then delivered.
        let held = harness.folder.appending("held")
        try FileManager.default.createDirectory(at: held, withIntermediateDirectories: true)
        let shipped = Self.files(in: harness.container).filter { !before.contains($0) }
        #expect(!shipped.isEmpty)
        for (index, file) in shipped.enumerated() {
            try FileManager.default.moveItem(at: file, to: held.appending(path: "\(index)"))
        }
        try await b.insertText(created.id, "X", at: 1)
        #expect(try await b.detail(created.id).text == "aXaa")
        for (index, file) in shipped.enumerated() {
            try FileManager.default.moveItem(at: held.appending(path: "\(index)"), to: file)
        }
        await a.sync()
        await b.sync()
        #expect(try await a.detail(created.id).text == "aaXaa")
        #expect(try await b.detail(created.id).text == "aaXaa")
        await a.closeAll()
        await b.closeAll()
    }

    static func files(in folder: URL) -> [URL] {
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        return (walker?.allObjects as? [URL] ?? []).filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
    }

    /// B's save arrives while A's editor is open: A's edits were made against a text that is
    /// no longer there, so A's whole text is merged three ways and both saves are kept.
    @Test func aPeersSaveWhileEditingIsMerged() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A")
        let b = try harness.device("B")
        let created = try await a.create(name: try DocumentName("Shared"))
        try await a.setText(created.id, "one\ntwo\n")
        await b.sync()
        try await b.appendText(created.id, "three\n")
        await a.sync()
        let outcome = try await a.saveEditedText(created.id, "zero\none\ntwo\n", editedFrom: "one\ntwo\n", edits: [.insert("zero\n", at: 0)])
        #expect(outcome == .mergedWithPeer)
        #expect(try await a.detail(created.id).text == "zero\none\ntwo\nthree\n")
        await a.closeAll()
        await b.closeAll()
    }

    /// Edits that do not turn the original into the text the editor shows are not trusted:
    /// the text shown is what is saved.
    @Test func editsThatDoNotAddUpSaveTheTextShown() async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let a = try harness.device("A")
        let created = try await a.create(name: try DocumentName("Mine"))
        try await a.setText(created.id, "hello")
        try await a.saveEditedText(created.id, "hello, world", editedFrom: "hello", edits: [.insert("!", at: 99)])
        #expect(try await a.detail(created.id).text == "hello, world")
        try await a.saveEditedText(created.id, "hello world", editedFrom: "hello, world", edits: [.delete(5..<6), .insert("?", at: 0)])
        #expect(try await a.detail(created.id).text == "hello world")
        await a.closeAll()
    }
}
