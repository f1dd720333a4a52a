import Model
import Text

/// What a store compares a write against: the contents as the write found them, without the
/// texts' states (a store compares those by revision), without the history when the store
/// compares it by entry id, and without the strings of long texts held by sequences.
///
/// A long text's string is left out so that the write's body holds the only reference to it:
/// an append at its end is then made in place (``Text/TextChange/apply(_:to:count:)``), where
/// a baseline holding the string made every save of a megabyte text copy it. Its record is
/// compared with the string left out on both sides; the record's row never holds a held
/// text's value (the state does), so nothing that is written is missed. A record whose text
/// stops being held by a sequence is written again whatever else changed: its row says the
/// state holds the value.
struct WriteBaseline {
    /// Strings of held texts from this many UTF-8 bytes on are left out: below it a copy costs
    /// less than the copy of the objects' table that leaving them out takes.
    static let longText = 64 * 1024

    /// The contents as the write found them, long held strings empty.
    private(set) var contents: StoreContents
    /// Per object, the attributes whose strings were left out.
    private(set) var leftOut: [ObjectID: Set<String>] = [:]
    /// Per object, the attributes held by sequences: a record whose text stops being one is
    /// written again (its row said the state holds the value).
    private var held: [ObjectID: Set<String>] = [:]

    /// The baseline of `current`, which the write's body changes next: `current` is left as
    /// it was, holding its long strings alone. `history`: whether the baseline keeps the
    /// history (each entry retained, so a new entry copies the list). Without `objects` it
    /// keeps no object and no stamp: the body notes what it changes (``StoreContents/objectJournal``),
    /// and its first change copies no table of a million entries.
    init(of current: inout StoreContents, history: Bool, objects: Bool = true) {
        guard objects else {
            contents = current
            contents.graph.objects = [:]
            contents.sync.stamps = [:]
            contents.sync.texts = [:]
            if !history { contents.sync.history = [] }
            return
        }
        var long: [(id: ObjectID, name: String)] = []
        for (id, texts) in current.sync.texts {
            held[id] = Set(texts.keys)
            for name in texts.keys {
                if case .string(let text)? = current.graph.objects[id]?.attributes[name], text.utf8.count >= Self.longText {
                    long.append((id, name))
                }
            }
        }
        var aside: [AttributeValue] = []
        aside.reserveCapacity(long.count)
        for (id, name) in long {
            aside.append(current.graph.objects[id]?.attributes[name] ?? .string(""))
            current.graph.objects[id]?.attributes[name] = .string("")
        }
        contents = current
        contents.sync.texts = [:]
        if !history { contents.sync.history = [] }
        // Put back into `current` alone (its table of objects copied once, the strings not).
        for (place, value) in zip(long, aside) {
            current.graph.objects[place.id]?.attributes[place.name] = value
            leftOut[place.id, default: []].insert(place.name)
        }
    }

    /// Whether any object of `after` may differ from the baseline's (false only when the two
    /// tables are one).
    func objectsMayDiffer(from after: StoreContents) -> Bool {
        !leftOut.isEmpty || contents.graph != after.graph || held.contains { id, names in lostSequence(id, names, in: after) }
    }

    private func lostSequence(_ id: ObjectID, _ names: Set<String>, in after: StoreContents) -> Bool {
        names.contains { after.sync.texts[id]?[$0] == nil }
    }

    /// Whether `record`, object `id` of `after`, differs from the baseline's: with a long
    /// string left out, compared without it when `after` still holds it by a sequence.
    func changed(_ id: ObjectID, _ record: ObjectRecord, in after: StoreContents) -> Bool {
        if let names = held[id], lostSequence(id, names, in: after) { return true }
        guard let names = leftOut[id] else { return contents.graph.objects[id] != record }
        guard let old = contents.graph.objects[id] else { return true }
        var new = record
        for name in names {
            guard case .string? = new.attributes[name], after.sync.texts[id]?[name] != nil else { return true }
            new.attributes[name] = .string("")
        }
        return old != new
    }
}
