/// The leaf holding each slot, in pages of ``pageSize`` slots: a page whose slots all lie in
/// one leaf is that leaf's number alone; a page of several leaves holds a number per slot.
///
/// A text pasted or decoded in long runs fills whole pages from one leaf, so a long document
/// costs a few bytes per page here rather than four per scalar, written on load; typing,
/// whose items are short and spread over leaves, costs what a number per slot costs.
struct SlotLeaves {
    static let pageShift = 8
    static let pageSize = 1 << pageShift

    /// Per page: the leaf of all its slots (≥ 0), or the bitwise complement of where its
    /// numbers start in `mixed` (< 0).
    private(set) var pages: [Int32] = []
    /// The numbers of the mixed pages, `pageSize` each.
    private(set) var mixed: [Int32] = []
    /// Where in `mixed` a page that became whole again left its numbers, for the next one.
    private var spare: [Int] = []
    /// The number of slots.
    private(set) var count = 0

    init() {}

    /// The leaf of `slot` (< `count`).
    @inline(__always)
    subscript(slot: Int) -> Int32 {
        let page = pages[slot >> Self.pageShift]
        return page >= 0 ? page : mixed[Int(~page) + (slot & (Self.pageSize - 1))]
    }

    /// `length` new slots after the last one, all in `leaf`.
    mutating func append(_ length: Int, in leaf: Int32) {
        set(count..<(count + length), to: leaf)
    }

    /// Puts the slots in `range` (starting at or before `count`; the slots past `count` are
    /// added) in `leaf`.
    mutating func set(_ range: Range<Int>, to leaf: Int32) {
        guard !range.isEmpty else { return }
        let pageSize = Self.pageSize
        if range.upperBound > count {
            let pageCount = (range.upperBound + pageSize - 1) >> Self.pageShift
            if pageCount > pages.count { pages.append(contentsOf: repeatElement(leaf, count: pageCount - pages.count)) }
            count = range.upperBound
        }
        var slot = range.lowerBound
        while slot < range.upperBound {
            let number = slot >> Self.pageShift
            let pageStart = number << Self.pageShift
            let stop = min(range.upperBound, pageStart + pageSize)
            let page = pages[number]
            if slot == pageStart, stop >= min(pageStart + pageSize, count) {
                // Every slot the page holds: whole again.
                if page < 0 { spare.append(Int(~page)) }
                pages[number] = leaf
            } else if page != leaf {
                let base: Int
                if page >= 0 {
                    base = spare.popLast() ?? mixed.count
                    if base == mixed.count {
                        mixed.append(contentsOf: repeatElement(page, count: pageSize))
                    } else {
                        mixed.withUnsafeMutableBufferPointer { $0[base..<(base + pageSize)].update(repeating: page) }
                    }
                    pages[number] = Int32(truncatingIfNeeded: ~base)
                } else {
                    base = Int(~page)
                }
                let from = base + slot - pageStart, to = base + stop - pageStart
                mixed.withUnsafeMutableBufferPointer { $0[from..<to].update(repeating: leaf) }
            }
            slot = stop
        }
    }

    /// Whether both are one storage that neither changed since.
    func sharesStorage(with other: SlotLeaves) -> Bool {
        func same(_ a: [Int32], _ b: [Int32]) -> Bool {
            a.count == b.count && a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
        }
        return count == other.count && same(pages, other.pages) && same(mixed, other.mixed)
    }

    /// About how many bytes it takes.
    var estimatedByteSize: Int { (pages.capacity + mixed.capacity) * MemoryLayout<Int32>.stride + spare.capacity * MemoryLayout<Int>.stride }
}
