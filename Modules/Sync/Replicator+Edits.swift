import Foundation
import Model
import Storage
import Text

// A save's edits of texts at known places (``TextEdit``) made into operations: on the store's
// own texts, applied once where they are made, or (when the save also touches those texts
// another way) on working copies that ``Merge`` then applies.
extension Replicator {
    /// `logged` with the operations of `edits` added to the changes of their objects: each made
    /// from its position in the text as the store holds it. Several edits of one text in a save
    /// apply one after the other, on a working copy.
    static func textOperations(_ edits: [TextEdit], adding logged: [LoggedChange], by agent: Agent, salt: FNV1a, in contents: StoreContents) throws -> [LoggedChange] {
        guard !edits.isEmpty else { return logged }
        var logged = logged
        var working: [TextJournal.Key: TextSequence] = [:]
        for (index, edit) in edits.enumerated() {
            guard let record = contents.graph.objects[edit.object] else { continue }
            let key = TextJournal.Key(object: edit.object, attribute: edit.attribute)
            let again = edits[(index + 1)...].contains { $0.object == edit.object && $0.attribute == edit.attribute }
            // Taken out of `working`, so the edits after the first change the one working copy
            // in place (a copy per edit would copy the whole state each time).
            var stored = working.removeValue(forKey: key) ?? contents.sync.texts[edit.object]?[edit.attribute] ?? Merge.seeded(from: record.attributes[edit.attribute])
            let operations = try operations(for: edit, in: stored, by: agent, salt: salt)
            if again {
                for operation in operations { try stored.apply(operation) }
                working[key] = stored
            }
            guard !operations.isEmpty else { continue }
            add(operations, of: edit, entity: record.entity, to: &logged)
        }
        return logged
    }

    /// Whether `edits` can be applied to the store's texts as their operations are made
    /// (``applyEdits(_:adding:by:salt:in:)``): no change of the save deletes an edited object
    /// or already carries operations of an edited text (a whole new value of it), which
    /// ``Merge`` must apply in the log's order.
    static func editsApplyInPlace(_ edits: [TextEdit], logged: [LoggedChange]) -> Bool {
        guard !edits.isEmpty else { return false }
        var edited: [ObjectID: Set<String>] = [:]
        for edit in edits { edited[edit.object, default: []].insert(edit.attribute) }
        return !logged.contains { change in
            guard let attributes = edited[change.id] else { return false }
            return change.op == .delete || (change.texts ?? [:]).keys.contains { attributes.contains($0) }
        }
    }

    /// ``textOperations(_:adding:by:salt:in:)`` made on the store's own texts, in place: each
    /// edit is made at its position where it is (``Text/TextSequence/replace(_:with:by:from:)``,
    /// so the next edit counts its position in the text it left), the edits of one text are
    /// noted in the store's text journal together, and what they changed is returned per text
    /// for ``Merge``, which does not apply them again. A save then costs what its edits cost:
    /// no copy of a text's whole state, no second lookup of an edit's place. The same
    /// operations, with the same ids, as the copying path. An edit the text refuses (a state
    /// past its limits) fails the save: nothing is logged that this store does not hold.
    static func applyEdits(
        _ edits: [TextEdit], adding logged: [LoggedChange], by agent: Agent, salt: FNV1a, in contents: inout StoreContents
    ) throws -> ([LoggedChange], [TextJournal.Key: Merge.AppliedText]) {
        var logged = logged
        var applied: [TextJournal.Key: Merge.AppliedText] = [:]
        var start = edits.startIndex
        while start < edits.endIndex {
            // The edits of one text in a row (all of them, for an editor's save) are made and
            // applied in one pass over the text, and logged as one list.
            let first = edits[start]
            var end = start + 1
            while end < edits.endIndex, edits[end].object == first.object, edits[end].attribute == first.attribute { end += 1 }
            let group = edits[start..<end]
            start = end
            guard let record = contents.graph.objects[first.object] else { continue }
            let key = TextJournal.Key(object: first.object, attribute: first.attribute)
            let (changes, countBefore, made) = try contents.editText(
                object: first.object, attribute: first.attribute, seed: { Merge.seeded(from: record.attributes[first.attribute]) },
                steps: group.count
            ) { step, sequence in
                let edit = group[group.startIndex + step]
                let (range, scalars) = try edit.resolved(count: sequence.count)
                return try sequence.replace(range, with: scalars, by: agent, from: firstCounter(in: sequence, by: agent, hash: hash(of: range, scalars, salt: salt)))
            }
            // Edits that change nothing leave the store's text as the copying path does.
            guard !made.isEmpty else { continue }
            applied[key, default: Merge.AppliedText(changes: [], countBefore: countBefore)].changes += changes
            add(made, of: first, entity: record.entity, to: &logged)
        }
        return (logged, applied)
    }

    /// The operations of one edit of `sequence`, new ids from a hash-chosen distance past the
    /// agent's last (``firstCounter(in:by:hash:)``).
    static func operations(for edit: TextEdit, in sequence: TextSequence, by agent: Agent, salt: FNV1a) throws -> [TextOperation] {
        let (range, scalars) = try edit.resolved(count: sequence.count)
        return try sequence.operations(replacing: range, with: scalars, by: agent, from: firstCounter(in: sequence, by: agent, hash: hash(of: range, scalars, salt: salt)))
    }

    /// What an edit's first new id is chosen by: the save's salt, the edit's place and text.
    private static func hash(of range: Range<Int>, _ scalars: [Unicode.Scalar], salt: FNV1a) -> FNV1a {
        var hash = salt
        hash.mix(UInt64(range.lowerBound))
        for scalar in scalars { hash.mix(UInt64(scalar.value)) }
        return hash
    }

    /// `operations` of `edit` added to the last change of its object in `logged` (the save's
    /// update of it), or as an update of their own when the save has none.
    private static func add(_ operations: [TextOperation], of edit: TextEdit, entity: String?, to logged: inout [LoggedChange]) {
        if let at = logged.lastIndex(where: { $0.id == edit.object && $0.op != .delete }) {
            logged[at].texts = (logged[at].texts ?? [:]).merging([edit.attribute: operations]) { $0 + $1 }
            if logged[at].entity == nil { logged[at].entity = entity }
        } else {
            logged.append(LoggedChange(op: .update, id: edit.object, entity: entity, texts: [edit.attribute: operations]))
        }
    }
}
