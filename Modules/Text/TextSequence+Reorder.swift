/// Saves taken back after a crash keep their place before the saves made after them.
extension TextSequence {
    /// Which of two groups of one agent's inserts a scalar belongs to.
    public enum InsertGroup: Sendable {
        /// Made first (a save a power loss took from the store and its log brought back).
        case earlier
        /// Made later without knowing of the earlier ones (the saves made meanwhile).
        case later
    }

    /// The visible text with, in every gap between two other scalars, the `earlier` group's
    /// scalars before the `later` group's. Two groups made without knowing of each other (so
    /// neither's inserts name the other's as neighbours) land in the same gaps ordered by the
    /// merge rule alone; this is the text as it would read had the later group been typed after
    /// the earlier one. `group` says which group a scalar's id is in (nil: neither).
    public func text(placingInGaps group: (TextID) -> InsertGroup?) -> String {
        var result: [Unicode.Scalar] = []
        result.reserveCapacity(list.visibleCount)
        var earlier: [Unicode.Scalar] = [], later: [Unicode.Scalar] = []
        func closeGap() {
            result += earlier
            result += later
            earlier.removeAll(keepingCapacity: true)
            later.removeAll(keepingCapacity: true)
        }
        for orderIndex in list.order.indices {
            for item in list.leaves[Int(list.order[orderIndex])].items {
                for offset in 0..<Int(item.length) {
                    let id = textID(item.id(at: offset))
                    switch id.flatMap(group) {
                    case .earlier?:
                        if !item.deleted { earlier.append(list.content[item.slot + offset]) }
                    case .later?:
                        if !item.deleted { later.append(list.content[item.slot + offset]) }
                    case nil:
                        // Another scalar (visible or a tombstone) closes the gap.
                        closeGap()
                        if !item.deleted { result.append(list.content[item.slot + offset]) }
                    }
                }
            }
        }
        closeGap()
        var text = String.UnicodeScalarView()
        text.append(contentsOf: result)
        return String(text)
    }
}
