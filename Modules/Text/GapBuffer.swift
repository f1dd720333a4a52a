/// Elements with a gap at the place of the last change: a change moves only the elements
/// between its place and the last one's, where an array's `replaceSubrange` moves everything
/// after it. What ``TextChange/applying(_:to:count:)`` splices a save's or an import's changes
/// with: consecutive changes of typing are next to each other, so a text of any length costs
/// one copy in and one out, not one per change.
///
/// The storage holds `front`, the gap, then `back`; positions count the elements outside the
/// gap. Elements are plain values (bytes, scalars): the gap holds stale ones.
struct GapBuffer<Element: BitwiseCopyable> {
    private var storage: [Element]
    private var gapStart: Int
    private var gapEnd: Int
    /// What the gap holds when it is made or widened.
    private let filler: Element

    /// `elements` with a gap of `gap` elements at `position` (clamped to the elements): room
    /// for that many insertions before the storage grows. Taken from a buffer, so each side is
    /// one copy (a string's UTF-8 view and its slices copy a byte at a time).
    init(_ elements: UnsafeBufferPointer<Element>, gap: Int, at position: Int, filler: Element) {
        let split = min(max(position, 0), elements.count)
        let room = max(gap, 16)
        var storage: [Element] = []
        storage.reserveCapacity(elements.count + room)
        storage.append(contentsOf: UnsafeBufferPointer(rebasing: elements[..<split]))
        storage.append(contentsOf: repeatElement(filler, count: room))
        storage.append(contentsOf: UnsafeBufferPointer(rebasing: elements[split...]))
        self.storage = storage
        self.filler = filler
        gapStart = split
        gapEnd = split + room
    }

    /// `elements` with a gap, as ``init(_:gap:at:filler:)`` makes it from their buffer.
    init(_ elements: [Element], gap: Int, at position: Int, filler: Element) {
        self = elements.withUnsafeBufferPointer { GapBuffer($0, gap: gap, at: position, filler: filler) }
    }

    /// The number of elements outside the gap.
    var count: Int { storage.count - (gapEnd - gapStart) }

    /// Replaces the elements at `position` that match `removed` (by `matches`) with
    /// `inserted`. False, nothing changed, when they are not there: the range reaches past
    /// the end or holds other elements.
    mutating func replace<Removed: Collection, Inserted: Collection>(
        at position: Int, removing removed: Removed, by matches: (Element, Removed.Element) -> Bool, inserting inserted: Inserted
    ) -> Bool where Inserted.Element == Element {
        let (end, overflow) = position.addingReportingOverflow(removed.count)
        guard position >= 0, !overflow, end <= count else { return false }
        moveGap(to: position)
        guard storage[gapEnd..<(gapEnd + removed.count)].elementsEqual(removed, by: matches) else { return false }
        gapEnd += removed.count
        if gapEnd - gapStart < inserted.count { grow(by: inserted.count) }
        for element in inserted {
            storage[gapStart] = element
            gapStart += 1
        }
        return true
    }

    /// Calls `body` with the elements before the gap and those after it.
    func withParts<Result>(_ body: (UnsafeBufferPointer<Element>, UnsafeBufferPointer<Element>) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBufferPointer { all in
            try body(UnsafeBufferPointer(rebasing: all[..<gapStart]), UnsafeBufferPointer(rebasing: all[gapEnd...]))
        }
    }

    /// Puts the gap at `position` (at most ``count``), moving the elements between.
    private mutating func moveGap(to position: Int) {
        guard position != gapStart else { return }
        let (start, end) = (gapStart, gapEnd)
        let stride = MemoryLayout<Element>.stride
        storage.withUnsafeMutableBufferPointer { all in
            guard let base = all.baseAddress else { return }
            // Overlapping moves are fine: `copyMemory` is a memmove.
            if position < start {
                // The elements from `position` to the gap go to the gap's end.
                let moved = start - position
                UnsafeMutableRawPointer(base + end - moved).copyMemory(from: base + position, byteCount: moved * stride)
            } else {
                // The elements after the gap, up to `position`, go to its start.
                let moved = position - start
                UnsafeMutableRawPointer(base + start).copyMemory(from: base + end, byteCount: moved * stride)
            }
        }
        gapEnd = end + position - start
        gapStart = position
    }

    /// Widens the gap so that `needed` more elements fit, doubling the storage at least.
    private mutating func grow(by needed: Int) {
        let room = max(needed, storage.count, 16)
        var grown: [Element] = []
        grown.reserveCapacity(storage.count + room)
        grown.append(contentsOf: storage[..<gapStart])
        grown.append(contentsOf: repeatElement(filler, count: gapEnd - gapStart + room))
        grown.append(contentsOf: storage[gapEnd...])
        gapEnd += room
        storage = grown
    }
}
