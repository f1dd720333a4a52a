/// A change of the visible text: at `position` (in Unicode scalars), `removed` went and
/// `inserted` came. What ``TextSequence/recordingChanges(_:)`` reports of the operations a body
/// applied, in the order they happened (each position is in the text as it was just before).
public struct TextChange: Hashable, Sendable {
    public var position: Int
    public var removed: [Unicode.Scalar]
    public var inserted: [Unicode.Scalar]

    public init(position: Int, removed: [Unicode.Scalar], inserted: [Unicode.Scalar]) {
        self.position = position
        self.removed = removed
        self.inserted = inserted
    }

    /// Applies `changes` to `text` (of `count` scalars) in place: an insertion at the end, what
    /// typing or an append makes, is appended to the text's own storage, with no copy when the
    /// caller holds the only reference to it; anything else as ``applying(_:to:count:)``.
    /// Returns false, `text` unchanged, when the changes do not fit it.
    public static func apply(_ changes: [TextChange], to text: inout String, count: Int) -> Bool {
        if changes.count == 1, let change = changes.first, change.removed.isEmpty, change.position == count {
            // Through a string of its own: the scalar view's `append(contentsOf:)` builds a new
            // string, where `String.append` writes into this one's spare capacity.
            if change.inserted.allSatisfy(\.isASCII) {
                text.append(String(decoding: change.inserted.map { UInt8(truncatingIfNeeded: $0.value) }, as: UTF8.self))
            } else {
                var inserted = String.UnicodeScalarView()
                inserted.append(contentsOf: change.inserted)
                text.append(String(inserted))
            }
            return true
        }
        guard let result = applying(changes, to: text, count: count) else { return false }
        text = result
        return true
    }

    /// `text`, of `count` Unicode scalars, with `changes` made to it in order: one change is
    /// spliced from the string's UTF-8 (a text of ASCII is indexed in constant time); several
    /// are made on one copy of its bytes (or scalars, past ASCII) with a gap at the last change
    /// (``GapBuffer``), so a change moves only what lies between it and the one before, and the
    /// string is built once. Nil when a change reaches past the end of the text or removes
    /// scalars it does not hold.
    public static func applying(_ changes: [TextChange], to text: String, count: Int) -> String? {
        guard changes.count > 1 else {
            guard let change = changes.first else { return text }
            return splicing(change, into: text, count: count)
        }
        let ascii = text.utf8.count == count
        let inserted = changes.reduce(0) { $0 &+ $1.inserted.count }
        if ascii, changes.allSatisfy({ $0.inserted.allSatisfy(\.isASCII) }) {
            // Copied straight from the string's storage: `Array(text.utf8)` copies a byte at a
            // time, ten times slower for a long text.
            let first = changes[0].position
            var buffer = text.utf8.withContiguousStorageIfAvailable { GapBuffer($0, gap: inserted, at: first, filler: 0) }
                ?? GapBuffer(Array(text.utf8), gap: inserted, at: first, filler: 0)
            for change in changes {
                guard buffer.replace(at: change.position, removing: change.removed, by: { UInt32($0) == $1.value },
                                     inserting: change.inserted.lazy.map { UInt8(truncatingIfNeeded: $0.value) }) else { return nil }
            }
            return buffer.withParts { front, back in
                String(unsafeUninitializedCapacity: front.count + back.count) { output in
                    guard let base = output.baseAddress else { return 0 }
                    if let start = front.baseAddress { base.initialize(from: start, count: front.count) }
                    if let start = back.baseAddress { (base + front.count).initialize(from: start, count: back.count) }
                    return front.count + back.count
                }
            }
        }
        var buffer = GapBuffer(Array(text.unicodeScalars), gap: inserted, at: changes[0].position, filler: " ")
        for change in changes {
            guard buffer.replace(at: change.position, removing: change.removed, by: ==, inserting: change.inserted) else { return nil }
        }
        return buffer.withParts { front, back in
            var view = String.UnicodeScalarView()
            view.append(contentsOf: front)
            view.append(contentsOf: back)
            return String(view)
        }
    }

    /// The positions `change` removes, when they are inside a text of `count` scalars.
    private static func range(of change: TextChange, in count: Int) -> Range<Int>? {
        let (end, overflow) = change.position.addingReportingOverflow(change.removed.count)
        guard change.position >= 0, !overflow, end <= count else { return nil }
        return change.position..<end
    }

    /// One change spliced from the two sides' UTF-8 (copied, not transcoded: the scalar view's
    /// `replaceSubrange` goes through UTF-32 for the whole text).
    private static func splicing(_ change: TextChange, into text: String, count: Int) -> String? {
        guard let range = range(of: change, in: count) else { return nil }
        let start: String.Index, stop: String.Index
        if text.utf8.count == count {
            start = text.utf8.index(text.utf8.startIndex, offsetBy: range.lowerBound)
            stop = text.utf8.index(start, offsetBy: range.count)
        } else {
            let scalars = text.unicodeScalars
            start = scalars.index(scalars.startIndex, offsetBy: range.lowerBound)
            stop = scalars.index(start, offsetBy: range.count)
        }
        guard text.unicodeScalars[start..<stop].elementsEqual(change.removed) else { return nil }
        // One buffer of the final size, each side's UTF-8 copied into it once: a long text costs
        // one copy, not a copy of the front and another when the buffer grows.
        var spliced = String()
        spliced.reserveCapacity(text.utf8.count + change.inserted.count * 4)
        spliced.append(contentsOf: Substring(text.unicodeScalars[..<start]))
        spliced.unicodeScalars.append(contentsOf: change.inserted)
        spliced.append(contentsOf: Substring(text.unicodeScalars[stop...]))
        return spliced
    }
}

extension TextSequence {
    /// Runs `body` on this state and returns what it changed in the visible text, change by
    /// change (``TextChange``): the insertions and deletions its operations made, pending ones
    /// that became ready included. A caller keeping the visible text beside the state splices
    /// these instead of reading the whole text again.
    public mutating func recordingChanges<E: Error>(_ body: (inout TextSequence) throws(E) -> Void) throws(E) -> [TextChange] {
        list.recorded = []
        do {
            try body(&self)
        } catch {
            list.recorded = nil
            throw error
        }
        let changes = list.recorded ?? []
        list.recorded = nil
        return changes
    }

    /// The operations that replace the visible scalars in `range` with `scalars`, made by
    /// `agent` with new ids from `counter` on, as ``insert(_:at:by:)`` and ``delete(_:by:)``
    /// would make them, without changing this state: applied here (``apply(_:)``) they make
    /// that edit. Deletes first, then inserts of at most `TextOperation.maximumRunLength`
    /// scalars each. Empty when nothing changes.
    ///
    /// - Throws: `TextError.positionOutOfRange` when `range` reaches outside the text,
    ///   `.countersExhausted` when the new ids would pass `UInt64.max`.
    public func operations(
        replacing range: Range<Int>, with scalars: [Unicode.Scalar], by agent: Agent, from counter: UInt64
    ) throws(TextError) -> [TextOperation] {
        guard range.lowerBound >= 0, range.upperBound <= count else {
            throw .positionOutOfRange(position: range.lowerBound < 0 ? range.lowerBound : range.upperBound, count: count)
        }
        var operations = deletions(range)
        guard !scalars.isEmpty else { return operations }
        let (_, overflow) = counter.addingReportingOverflow(UInt64(scalars.count))
        guard !overflow else { throw .countersExhausted(agent) }
        // The neighbours: the visible scalar before the place, and whatever item follows it in
        // text order (a tombstone too), as a local insert names them.
        var originLeft: TextID?
        var originRight: TextID?
        if range.lowerBound > 0 {
            let (found, offset) = list.findVisible(range.lowerBound - 1)
            let item = list.item(at: found)
            originLeft = textID(item.id(at: offset))
            if offset + 1 < Int(item.length) {
                originRight = textID(item.id(at: offset + 1))
            } else {
                var next = Cursor(order: found.order, index: found.index + 1)
                if list.normalize(&next) { originRight = textID(list.item(at: next).id(at: 0)) }
            }
        } else {
            var first = Cursor(order: 0, index: 0)
            if list.normalize(&first) { originRight = textID(list.item(at: first).id(at: 0)) }
        }
        var start = 0
        var next = counter
        while start < scalars.count {
            let end = min(scalars.count, start + TextOperation.maximumRunLength)
            let id = TextID(agent: agent, counter: next)
            operations.append(.insert(TextInsertion(id: id, originLeft: originLeft, originRight: originRight, scalars: Array(scalars[start..<end]))))
            next += UInt64(end - start)
            originLeft = TextID(agent: agent, counter: next - 1)
            start = end
        }
        return operations
    }

    /// The operations that turn the visible text into `newText` (a Myers diff over Unicode
    /// scalars after trimming the common prefix and suffix, as ``edits(to:by:)``), made by
    /// `agent` with new ids from `counter` on, without changing this state.
    public func operations(to newText: String, by agent: Agent, from counter: UInt64) throws(TextError) -> [TextOperation] {
        let old = currentScalars()
        let new = Array(newText.unicodeScalars)
        var operations: [TextOperation] = []
        var next = counter
        for hunk in ScalarDiff.hunks(from: old, to: new).reversed() {
            operations += try self.operations(replacing: hunk.old, with: Array(new[hunk.new]), by: agent, from: next)
            next = next &+ UInt64(hunk.new.count)
        }
        return operations
    }

    /// Delete operations naming the visible scalars in `range` (within the text), as
    /// ``delete(_:by:)`` makes them.
    func deletions(_ range: Range<Int>) -> [TextOperation] {
        guard !range.isEmpty else { return [] }
        var (cursor, offset) = list.findVisible(range.lowerBound)
        var remaining = range.count
        var deleted: [TextIDRange] = []
        while remaining > 0, list.normalize(&cursor) {
            let item = list.item(at: cursor)
            defer { cursor.index += 1 }
            if item.deleted {
                offset = 0
                continue
            }
            let length = min(Int(item.length) - offset, remaining)
            let agent = agents[Int(item.agent)]
            let start = item.counter &+ UInt64(offset)
            let counters = start..<(start &+ UInt64(length))
            if let last = deleted.last, last.agent == agent, last.counters.upperBound == counters.lowerBound,
               last.counters.count + counters.count <= TextOperation.maximumRunLength {
                deleted[deleted.count - 1].counters = last.counters.lowerBound..<counters.upperBound
            } else {
                deleted.append(TextIDRange(agent: agent, counters: counters))
            }
            remaining -= length
            offset = 0
        }
        return stride(from: 0, to: deleted.count, by: TextOperation.maximumRangeCount).map { start in
            .delete(Array(deleted[start..<min(deleted.count, start + TextOperation.maximumRangeCount)]))
        }
    }
}
