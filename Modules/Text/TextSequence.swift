import Synchronization

/// Replicated text: a sequence CRDT over Unicode scalars.
///
/// Every inserted scalar has an id (agent, counter) and is placed between the neighbours it was
/// typed between; concurrent inserts at one place are ordered by the FugueMax rule (the YjsMod
/// integration of Gentle's reference CRDTs), so runs typed concurrently never interleave and
/// every replica orders them alike. Deleted scalars stay as tombstones. Remote operations apply
/// in any order and any number of times: one whose neighbours are not here yet waits in a
/// pending buffer.
///
/// Positions count Unicode scalars. A value type: copies are independent replicas.
public struct TextSequence: Sendable {
    var list = ItemList()
    /// Interned agents: the number an agent has in this state, and back.
    var agents: [Agent] = []
    var agentNumbers: [Agent: UInt32] = [:]
    /// Per interned agent, one past the highest counter it used in this state (pending operations
    /// included), so its next local insert gets new ids.
    var nextCounter: [UInt64] = []
    /// Remote operations waiting for ids they refer to.
    var pending: [TextOperation] = []
    /// A number no other state of this process has: a copy keeps it, every change replaces it
    /// (``revision``).
    private(set) var revisionToken = TextSequence.nextRevision()

    /// An empty text.
    public init() {}

    private static let revisions = Atomic<UInt64>(1)

    static func nextRevision() -> UInt64 { revisions.add(1, ordering: .relaxed).newValue }

    /// Identifies this state within the process: copies share it until one of them changes,
    /// and every change (an insert, a delete, an operation applied, counters skipped) gives
    /// the changed copy a number no state of this process had before. Equal revisions mean the
    /// same state, without comparing a scalar: how a store tells which texts a transaction
    /// changed, and whether the operations it was told of are all that changed them. Not part
    /// of equality, nor of the encoded state.
    public var revision: UInt64 { revisionToken }

    /// Marks the state changed (``revision``).
    mutating func changed() { revisionToken = Self.nextRevision() }

    /// The number of visible scalars.
    public var count: Int { list.visibleCount }

    /// The visible text.
    ///
    /// Written as UTF-8 straight into the string's own storage (appending scalars one slice at a
    /// time, or going through an array of bytes, costs a long text a copy or more), with room
    /// for what a few more saves append, so an editor's append changes it in place.
    public var text: String {
        let byteCount = visibleUTF8Count()
        return String(unsafeUninitializedCapacity: byteCount + byteCount / 32 + 256) { buffer in
            writeVisibleUTF8(into: buffer)
        }
    }

    /// The visible text as UTF-8, in text order (what ``text`` holds, and a snapshot writes).
    func visibleUTF8() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: visibleUTF8Count()) { buffer, initialized in
            initialized = writeVisibleUTF8(into: buffer)
        }
    }

    /// The number of UTF-8 bytes of the visible text.
    private func visibleUTF8Count() -> Int {
        // A narrow store's visible slots are ASCII: a byte each.
        guard list.content.isWide else { return list.visibleCount }
        return list.content.wide.withUnsafeBufferPointer { content in
            var count = 0
            for orderIndex in list.order.indices {
                for item in list.leaves[Int(list.order[orderIndex])].items where !item.deleted {
                    count += Self.utf8Count(of: UnsafeBufferPointer(rebasing: content[item.slot..<(item.slot + Int(item.length))]))
                }
            }
            return count
        }
    }

    /// The UTF-8 length of `scalars`: runs of ASCII are skipped sixteen scalars at a time.
    private static func utf8Count(of scalars: UnsafeBufferPointer<Unicode.Scalar>) -> Int {
        guard let base = UnsafeRawPointer(scalars.baseAddress) else { return 0 }
        var count = scalars.count
        var index = 0
        while index < scalars.count {
            if scalars.count - index >= 16, isASCII(base + index * 4) {
                index += 16
                continue
            }
            let value = scalars[index].value
            count += value < 0x80 ? 0 : value < 0x800 ? 1 : value < 0x1_0000 ? 2 : 3
            index += 1
        }
        return count
    }

    /// Whether the sixteen scalars at `start` are all ASCII.
    @inline(__always)
    private static func isASCII(_ start: UnsafeRawPointer) -> Bool {
        var any: UInt64 = 0
        for word in 0..<8 { any |= start.loadUnaligned(fromByteOffset: word * 8, as: UInt64.self) }
        return any & 0xFFFF_FF80_FFFF_FF80 == 0
    }

    /// Writes the visible text's UTF-8 into `buffer` (at least ``visibleUTF8Count()`` bytes)
    /// and returns how many bytes it wrote: a narrow store's runs as they are, a wide one's ASCII
    /// sixteen scalars at a time.
    private func writeVisibleUTF8(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        guard let output = UnsafeMutableRawPointer(buffer.baseAddress) else { return 0 }
        guard list.content.isWide else {
            return list.content.bytes.withUnsafeBufferPointer { content in
                guard let input = content.baseAddress else { return 0 }
                var written = 0
                for orderIndex in list.order.indices {
                    for item in list.leaves[Int(list.order[orderIndex])].items where !item.deleted {
                        let length = Int(item.length)
                        guard buffer.count - written >= length else { return written }
                        (output + written).copyMemory(from: input + item.slot, byteCount: length)
                        written += length
                    }
                }
                return written
            }
        }
        return list.content.wide.withUnsafeBufferPointer { content in
            guard let input = UnsafeRawPointer(content.baseAddress) else { return 0 }
            var written = 0
            for orderIndex in list.order.indices {
                for item in list.leaves[Int(list.order[orderIndex])].items where !item.deleted {
                    var slot = item.slot
                    let end = item.slot + Int(item.length)
                    while slot < end {
                        if end - slot >= 16, buffer.count - written >= 16, Self.isASCII(input + slot * 4) {
                            let chunk = input.loadUnaligned(fromByteOffset: slot * 4, as: SIMD16<UInt32>.self)
                            output.storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: chunk), toByteOffset: written, as: SIMD16<UInt8>.self)
                            written += 16
                            slot += 16
                            continue
                        }
                        let scalar = content[slot]
                        let width = scalar.utf8.count
                        guard buffer.count - written >= width else { return written }
                        for byte in scalar.utf8 {
                            buffer[written] = byte
                            written += 1
                        }
                        slot += 1
                    }
                }
            }
            return written
        }
    }

    /// The number of remote operations waiting for ids they refer to.
    public var pendingCount: Int { pending.count }

    /// The counter `agent`'s next local insert will start at: above every counter of the agent
    /// this state has seen.
    public func nextCounter(for agent: Agent) -> UInt64 {
        agentNumbers[agent].map { nextCounter[Int($0)] } ?? 0
    }

    /// Makes `agent`'s next local insert start at `counter` or later. Counters need not be
    /// contiguous: a writer may skip ahead so that two replicas of one agent (a copied device)
    /// are very unlikely to mint the same ids.
    public mutating func skipCounters(for agent: Agent, to counter: UInt64) {
        changed()
        noteCounters(agent: intern(agent), end: counter)
    }

    // MARK: - Agents

    func number(of agent: Agent) -> UInt32? { agentNumbers[agent] }

    mutating func intern(_ agent: Agent) -> UInt32 {
        if let number = agentNumbers[agent] { return number }
        let number = UInt32(agents.count)
        agents.append(agent)
        agentNumbers[agent] = number
        nextCounter.append(0)
        return number
    }

    func localID(_ id: TextID?) -> LocalID? {
        guard let id else { return LocalID.none }
        return agentNumbers[id.agent].map { LocalID(agent: $0, counter: id.counter) }
    }

    func textID(_ id: LocalID) -> TextID? {
        id.isNone ? nil : TextID(agent: agents[Int(id.agent)], counter: id.counter)
    }

    mutating func noteCounters(agent: UInt32, end: UInt64) {
        if nextCounter[Int(agent)] < end { nextCounter[Int(agent)] = end }
    }
}

extension TextSequence: Equatable {
    /// Two states are equal when they hold the same scalars, in the same order, with the same
    /// ids and origins and tombstones, and the same pending operations (however their items are
    /// split into runs).
    public static func == (lhs: TextSequence, rhs: TextSequence) -> Bool {
        if lhs.sharesStorage(with: rhs) { return true }
        return lhs.count == rhs.count && lhs.text == rhs.text && lhs.snapshotRuns() == rhs.snapshotRuns() && Set(lhs.pending) == Set(rhs.pending)
    }

    /// Whether both are copies of one state that neither changed since (every array still
    /// shared, copy-on-write not triggered): equal without looking at a scalar. A store
    /// compares its contents before and after every write, and most texts are untouched.
    /// The list's visible sums are not looked at: they change only with its leaves.
    func sharesStorage(with other: TextSequence) -> Bool {
        func same<T>(_ a: [T], _ b: [T]) -> Bool {
            a.count == b.count && a.withUnsafeBufferPointer { x in b.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
        }
        return same(list.leaves, other.list.leaves) && same(list.order, other.list.order) && same(list.orderOf, other.list.orderOf)
            && list.content.sharesStorage(with: other.list.content) && list.leafOfSlot.sharesStorage(with: other.list.leafOfSlot) && same(list.runs, other.list.runs)
            && list.visibleCount == other.list.visibleCount && same(agents, other.agents) && same(nextCounter, other.nextCounter)
            && same(pending, other.pending)
    }
}

extension TextSequence {
    /// About how many bytes the state's storage takes (array capacities; dictionaries and
    /// pending operations estimated): for benchmarks and budgets, not exact.
    public var estimatedByteSize: Int {
        var total = list.content.byteCapacity
            + list.leafOfSlot.estimatedByteSize
            + (list.order.capacity + list.orderOf.capacity) * MemoryLayout<Int32>.stride
            + list.leaves.capacity * MemoryLayout<Leaf>.stride
        for leaf in list.leaves { total += leaf.items.capacity * MemoryLayout<Item>.stride }
        for runs in list.runs { total += runs.capacity * MemoryLayout<SlotRun>.stride }
        total += agents.count * (MemoryLayout<Agent>.stride * 3 + MemoryLayout<UInt64>.stride)
        total += pending.count * 64
        return total
    }

    /// The number of runs (items) the state holds, tombstones included.
    public var runCount: Int { list.leaves.reduce(0) { $0 + $1.items.count } }
}
