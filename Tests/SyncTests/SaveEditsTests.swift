import Foundation
import Model
import Storage
@testable import Sync
import Testing
import TestSupport
import Text

/// A save's edits at known places are applied once, to the store's own text, as their
/// operations are made: the same log, text and history entry as when they were made on a
/// working copy and the log then applied (the path a save that also writes the text whole takes).
@Suite struct SaveEditsTests {
    let doc = DocumentID(Fixed.uuid(0xED1))
    let format2 = LogFormat(version: 2, container: Fixed.uuid(7))
    var textID: ObjectID { ObjectID("text-\(doc)") }
    /// "one two three" after ``edits``.
    static let edited = "el\u{E9}lo,  two three! ok"

    /// Several edits of one text, each counted in the text the ones before left.
    var edits: [TextEdit] {
        [.insert("Hello, ", at: 0), .delete(7..<10), .append("!"), .insert("é", at: 3), .delete(0..<1), .append(" ok")]
            .map { TextEdit(object: textID, attribute: Entity.TextEntry.text, $0) }
    }

    /// A document with a text of format 2 operations, and the store's contents.
    func started(_ harness: SyncHarness) throws -> (SyncDevice, StoreContents) {
        let a = harness.device(1, "A", format: format2)
        try a.create(doc, name: "Edits", text: "one two three", now: harness.clock.now())
        let store = try a.store(doc)
        defer { store.close() }
        return (a, try store.read())
    }

    func stage(_ edits: [TextEdit], changes: [Change] = [], _ device: SyncDevice, in contents: inout StoreContents) throws -> LocalCommit {
        try Replicator.stage(
            changes, edits: edits, document: doc, device: device.identity, format: format2, wall: 1_000, committedAt: Date(timeIntervalSince1970: 1),
            ship: true, in: &contents)
    }

    @Test func editsAppliedInPlaceMakeWhatACopyMakes() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let (a, contents) = try started(harness)
        let agent = Agent(a.identity.id)
        var salt = FNV1a()
        salt.mix(7)

        // The working-copy path: operations made on a copy, then the log applied.
        var copied = contents
        let viaCopy = try Replicator.textOperations(edits, adding: [], by: agent, salt: salt, in: copied)
        let committedByCopy = try Replicator.stage(
            logged: viaCopy, document: doc, device: a.identity, format: format2, wall: 1_000, committedAt: Date(timeIntervalSince1970: 1),
            ship: true, in: &copied)

        // In place: applied as made, not applied again by the merge.
        var inPlace = contents
        #expect(Replicator.editsApplyInPlace(edits, logged: []))
        let (logged, applied) = try Replicator.applyEdits(edits, adding: [], by: agent, salt: salt, in: &inPlace)
        #expect(applied.count == 1)
        let committedInPlace = try Replicator.stage(
            logged: logged, document: doc, device: a.identity, format: format2, wall: 1_000, committedAt: Date(timeIntervalSince1970: 1),
            ship: true, textsApplied: applied, in: &inPlace)

        #expect(logged == viaCopy)
        #expect(committedInPlace.log.changes == committedByCopy.log.changes)
        #expect(inPlace.graph.textEntry?.text == Self.edited)
        #expect(inPlace.graph.textEntry?.text == copied.graph.textEntry?.text)
        #expect(inPlace.sync.texts[textID]?[Entity.TextEntry.text]?.text == Self.edited)
        #expect(inPlace.sync.history == copied.sync.history)
        #expect(inPlace.sync.history.last?.sequence == committedInPlace.log.sequence)
    }

    /// Through the store, on each backend: the edits' text is what the store holds after the
    /// save, and a peer importing the log holds the same.
    @Test(arguments: [SyncBackend.sqlite, .json, .memory])
    func aSaveOfEditsReachesThePeer(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2), b = harness.device(2, "B", format: format2)
        try a.create(doc, name: "Edits", text: "one two three", now: harness.clock.now())
        try b.importPending(doc)
        let store = try a.store(doc)
        _ = try Replicator.commit(
            document: doc, device: a.identity, format: format2, now: { harness.clock.now() }, to: store, ship: true
        ) { _ in ([], edits) }
        try a.replicator.flush(doc, in: store)
        store.close()
        try b.importPending(doc)
        #expect(try a.text(doc) == Self.edited)
        #expect(try b.text(doc) == Self.edited)
    }

    /// An edit past the end after others applied in place: nothing is saved, the store's text
    /// and its next save as they were.
    @Test(arguments: [SyncBackend.sqlite, .json])
    func anEditPastTheEndAfterOthersSavesNothing(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2)
        try a.create(doc, name: "Edits", text: "one two three", now: harness.clock.now())
        let store = try a.store(doc)
        defer { store.close() }
        let bad = edits + [TextEdit(object: textID, attribute: Entity.TextEntry.text, .insert("x", at: 1_000))]
        #expect(throws: TextError.self) {
            try Replicator.commit(document: doc, device: a.identity, format: format2, now: { harness.clock.now() }, to: store, ship: true) { _ in ([], bad) }
        }
        #expect(try store.read().graph.textEntry?.text == "one two three")
        #expect(try store.read().sync.texts[textID]?[Entity.TextEntry.text]?.text == "one two three")
        _ = try Replicator.commit(document: doc, device: a.identity, format: format2, now: { harness.clock.now() }, to: store, ship: true) { _ in ([], edits) }
        #expect(try store.read().graph.textEntry?.text == Self.edited)
    }

    /// Edits that change nothing (an empty insert, an empty delete) of a text that is still a
    /// plain value leave it so, in place as on a copy: no text state no log mentions.
    @Test func editsThatChangeNothingLeaveAPlainTextAlone() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let (a, started) = try started(harness)
        var contents = started
        contents.sync.texts[textID] = nil
        let nothing = [TextEdit(object: textID, attribute: Entity.TextEntry.text, .insert("", at: 2)),
                       TextEdit(object: textID, attribute: Entity.TextEntry.text, .delete(3..<3))]
        let (logged, applied) = try Replicator.applyEdits(nothing, adding: [], by: Agent(a.identity.id), salt: FNV1a(), in: &contents)
        #expect(logged.isEmpty)
        #expect(applied.isEmpty)
        #expect(contents.sync.texts[textID] == nil)
        #expect(try Replicator.textOperations(nothing, adding: [], by: Agent(a.identity.id), salt: FNV1a(), in: started).isEmpty)
    }

    /// A save that also writes the text whole, or deletes the object, goes the working-copy way
    /// (the merge applies its operations in the log's order).
    @Test func aSaveThatAlsoWritesTheTextWholeOrDeletesItEditsACopy() {
        let whole = LoggedChange(op: .update, id: textID, entity: Entity.textEntry, texts: [Entity.TextEntry.text: []])
        #expect(!Replicator.editsApplyInPlace(edits, logged: [whole]))
        #expect(!Replicator.editsApplyInPlace(edits, logged: [LoggedChange(op: .delete, id: textID)]))
        let other = LoggedChange(op: .update, id: ObjectID("other"), entity: Entity.textEntry, texts: [Entity.TextEntry.text: []])
        #expect(Replicator.editsApplyInPlace(edits, logged: [other]))
    }
}
