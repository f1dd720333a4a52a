/// Reading snapshot format 2 (layout in TextSequence+Snapshot.swift) straight into the item
/// list: one pass over the run headers, one over the visible text, no allocation per run or
/// per scalar. Every count and length is checked before it is used.
extension TextSequence {
    /// Reads a state in snapshot format 2; `reader` is past the magic and the version byte.
    init(decodingFormat2 reader: inout ByteReader) throws(TextDecodingError) {
        self.init()
        // An agent takes 16 bytes and its next counter at least one.
        let agentCount = try readAgents(&reader, bytesEach: 17)

        // A run takes at least its header and its length.
        let runCount = try reader.count(maximum: min(reader.remaining / 2, Self.maximumDecodedScalars))
        // One item per run, in text order; the last one's right origin may be the next one's
        // first id.
        let items = UnsafeMutableBufferPointer<Item>.allocate(capacity: runCount)
        defer { items.deallocate() }
        // Each run's length and whether it is deleted (the low bit), for the pass over the
        // text: sixteen times smaller than the items.
        let spans = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: runCount)
        defer { spans.deallocate() }
        var itemCount = 0
        var lastEnd = [UInt64](repeating: 0, count: agentCount)
        var rightIsNext = false
        var explicitOrigins: [LocalID] = []
        var total = 0
        var visible = 0
        @inline(__always) func agentIndex(_ reader: inout ByteReader) throws(TextDecodingError) -> UInt32 {
            try Self.agentIndex(&reader, agentCount: agentCount)
        }
        for _ in 0..<runCount {
            let headerOffset = reader.offset
            let header = try reader.byte()
            let leftKind = header & 3
            let rightKind = (header >> 2) & 7
            guard rightKind <= 4 else { throw .unknownTag(offset: headerOffset, tag: header) }
            let agent: UInt32
            if header & 0x40 != 0 {
                guard itemCount > 0 else { throw .inconsistentState("the first run names a previous one (at \(headerOffset))") }
                agent = items[itemCount - 1].agent
            } else {
                agent = try agentIndex(&reader)
            }
            let base = lastEnd[Int(agent)]
            var counter = base
            if header & 0x80 == 0 { counter = Self.unzigzag(try reader.varint(), from: base) }
            if rightIsNext { items[itemCount - 1].originRight = LocalID(agent: agent, counter: counter) }
            var left = LocalID.none
            switch leftKind {
            case 1:
                guard itemCount > 0 else { throw .inconsistentState("the first run names a previous one (at \(headerOffset))") }
                let previous = items[itemCount - 1]
                left = previous.id(at: Int(previous.length) - 1)
            case 2: left = LocalID(agent: try agentIndex(&reader), counter: Self.unzigzag(try reader.varint(), from: counter))
            case 3: left = LocalID(agent: agent, counter: Self.unzigzag(try reader.varint(), from: counter))
            default: break
            }
            var right = LocalID.none
            rightIsNext = rightKind == 1
            switch rightKind {
            case 2:
                guard itemCount > 0 else { throw .inconsistentState("the first run names a previous one (at \(headerOffset))") }
                right = items[itemCount - 1].originRight
            case 3: right = LocalID(agent: try agentIndex(&reader), counter: Self.unzigzag(try reader.varint(), from: counter))
            case 4: right = LocalID(agent: agent, counter: Self.unzigzag(try reader.varint(), from: counter))
            default: break
            }
            if leftKind >= 2 { explicitOrigins.append(left) }
            if rightKind >= 3 { explicitOrigins.append(right) }
            let lengthOffset = reader.offset
            let length = try reader.count(maximum: TextOperation.maximumRunLength)
            guard length > 0 else { throw .inconsistentState("an empty run (at \(lengthOffset))") }
            let (end, overflow) = counter.addingReportingOverflow(UInt64(length))
            guard !overflow else { throw .inconsistentState("a run past the last counter (at \(lengthOffset))") }
            guard length <= Self.maximumDecodedScalars - total else { throw .tooLarge(offset: lengthOffset, value: UInt64(length)) }
            let deleted = header & 0x20 != 0
            items.initializeElement(at: itemCount, to: Item(
                agent: agent, length: UInt32(length), counter: counter, slot: total, originLeft: left, originRight: right,
                deleted: deleted))
            spans.initializeElement(at: itemCount, to: UInt32(length) << 1 | (deleted ? 1 : 0))
            itemCount += 1
            total += length
            if !deleted { visible += length }
            lastEnd[Int(agent)] = end
        }
        guard !rightIsNext else { throw .inconsistentState("the last run names a next one") }

        let textOffset = reader.offset
        let byteCount = try reader.count(maximum: min(reader.remaining, visible * 4))
        // `remaining` was read before the count's own bytes: checked again after them.
        guard byteCount <= reader.remaining else { throw .truncated(offset: reader.offset) }
        guard byteCount >= visible else { throw .invalidText(offset: textOffset) }
        let text = reader.offset..<(reader.offset + byteCount)
        reader.offset += byteCount
        let decoded = UnsafeBufferPointer(rebasing: items[0..<itemCount])
        let runs = UnsafeBufferPointer(rebasing: spans[0..<itemCount])
        let content: SlotScalars
        if byteCount == visible, reader.bytes.withUnsafeBufferPointer({ UnsafeBufferPointer(rebasing: $0[text]).isASCII }), let bytes = Self.bytes(of: runs, text: reader.bytes, range: text, total: total) {
            content = SlotScalars(narrow: bytes)
        } else {
            content = SlotScalars(wide: try Self.scalars(of: runs, text: reader.bytes, range: text, total: total))
        }
        try finishDecoding(items: decoded, content: content, agentCount: agentCount, origins: explicitOrigins, reader: &reader)
    }

    // MARK: Shared by both formats

    /// Reads the agent table (each agent's 16 bytes, then each one's next counter), interning
    /// the agents in order. Returns their number; each takes at least `bytesEach` bytes.
    mutating func readAgents(_ reader: inout ByteReader, bytesEach: Int) throws(TextDecodingError) -> Int {
        let agentCount = try reader.count(maximum: min(Self.maximumAgents, reader.remaining / bytesEach))
        agents.reserveCapacity(agentCount)
        for _ in 0..<agentCount {
            let agent = try reader.agent()
            guard agentNumbers[agent] == nil else { throw .inconsistentState("agent \(agent) listed twice") }
            _ = intern(agent)
        }
        for index in 0..<agentCount { nextCounter[index] = try reader.varint() }
        return agentCount
    }

    /// An index into the agent table, which holds `agentCount` agents.
    @inline(__always)
    static func agentIndex(_ reader: inout ByteReader, agentCount: Int) throws(TextDecodingError) -> UInt32 {
        let offset = reader.offset
        let value = try reader.varint()
        guard value < UInt64(agentCount) else { throw .inconsistentState("agent index \(value) at \(offset)") }
        return UInt32(value)
    }

    /// The list from the decoded `items` (text order, slots consecutive from 0) and their
    /// `content`, each agent's counters noted, `origins` checked to be in it; then the pending
    /// operations, each validated, and the end of the bytes.
    mutating func finishDecoding(
        items: UnsafeBufferPointer<Item>, content: SlotScalars, agentCount: Int, origins: [LocalID], reader: inout ByteReader
    ) throws(TextDecodingError) {
        // A run's origins are outside it: one inside would make operations peers refuse.
        for item in items where item.contains(item.originLeft) || item.contains(item.originRight) {
            let origin = item.contains(item.originLeft) ? item.originLeft : item.originRight
            throw .inconsistentState("the run at \(agents[Int(item.agent)])@\(item.counter) has its own \(origin.counter) as an origin")
        }
        let names = agents
        list = try ItemListBuilder.list(of: items, content: content, agentCount: agentCount) { names[$0].description }
        // An agent's sorted runs end at its highest counter.
        for (agent, runs) in list.runs.enumerated() {
            if let last = runs.last { noteCounters(agent: UInt32(agent), end: last.end) }
        }
        if let origin = list.firstMissing(of: origins) {
            throw .inconsistentState("origin \(agents[Int(origin.agent)])@\(origin.counter) is missing")
        }
        let pendingCount = try reader.count(maximum: reader.remaining)
        for _ in 0..<pendingCount {
            // Validated as it is read.
            let operation = try TextOperation.read(from: &reader)
            if case .insert(let insertion) = operation {
                noteCounters(agent: intern(insertion.id.agent), end: insertion.id.counter &+ UInt64(insertion.scalars.count))
            }
            pending.append(operation)
        }
        try reader.finish()
    }

    /// Every slot's byte for a narrow store, when `range` of `bytes` (the visible text) is
    /// ASCII and holds exactly the visible runs' scalars: theirs copied from it in order, the
    /// placeholder byte for the deleted ones. `spans` (length, and deletion in the low bit)
    /// hold `total` slots. Nil when they do not add up (the wide decoding says where).
    private static func bytes(of spans: UnsafeBufferPointer<UInt32>, text bytes: [UInt8], range: Range<Int>, total: Int) -> [UInt8]? {
        var complete = false
        let result = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            guard let output = buffer.baseAddress else { return }
            bytes.withUnsafeBufferPointer { utf8 in
                guard let input = utf8.baseAddress else { return }
                var position = range.lowerBound
                var slot = 0
                for span in spans {
                    let length = Int(span >> 1)
                    guard total - slot >= length else { break }
                    if span & 1 != 0 {
                        (output + slot).initialize(repeating: SlotScalars.placeholderByte, count: length)
                    } else {
                        guard range.upperBound - position >= length else { break }
                        (output + slot).initialize(from: input + position, count: length)
                        position += length
                    }
                    slot += length
                }
                initialized = slot
                complete = slot == total && position == range.upperBound
            }
        }
        return complete ? result : nil
    }

    /// Every slot's scalar: the visible runs' from `text` (UTF-8, exactly as many scalars as
    /// they hold), the placeholder for deleted ones; `spans` (length, and deletion in the low bit)
    /// hold `total` slots in order.
    ///
    /// Runs are short and of every length, so the usual ones are written sixteen scalars at a
    /// time whatever their length, past their end into the next run's slots (the array has room
    /// for sixteen more): fewer branches to mispredict.
    private static func scalars(of spans: UnsafeBufferPointer<UInt32>, text bytes: [UInt8], range: Range<Int>, total: Int) throws(TextDecodingError) -> [Unicode.Scalar] {
        var failure: Int?
        let placeholder = deletedPlaceholder
        let placeholders = SIMD16<UInt32>(repeating: placeholder.value)
        let content = [Unicode.Scalar](unsafeUninitializedCapacity: total + 16) { buffer, initialized in
            var slot = 0
            defer { initialized = min(slot, total) }
            guard let output = UnsafeMutableRawPointer(buffer.baseAddress) else { return }
            bytes.withUnsafeBufferPointer { utf8 in
                var position = range.lowerBound
                let end = range.upperBound
                for span in spans {
                    let length = Int(span >> 1)
                    let stop = slot + length
                    guard stop <= total else {
                        failure = position
                        return
                    }
                    if span & 1 != 0 {
                        if length <= 16 {
                            output.storeBytes(of: placeholders, toByteOffset: slot * 4, as: SIMD16<UInt32>.self)
                        } else {
                            buffer[slot..<stop].initialize(repeating: placeholder)
                        }
                        slot = stop
                        continue
                    }
                    // ASCII text (the usual case), sixteen bytes at a time; reading past the
                    // run stays inside `bytes`.
                    if end - position >= length, utf8.count - position >= length + 16, let input = utf8.baseAddress,
                       Self.isASCII(input + position, count: length) {
                        var offset = 0
                        repeat {
                            let chunk = UnsafeRawPointer(input + position + offset).loadUnaligned(as: SIMD16<UInt8>.self)
                            output.storeBytes(
                                of: SIMD16<UInt32>(truncatingIfNeeded: chunk), toByteOffset: (slot + offset) * 4, as: SIMD16<UInt32>.self)
                            offset += 16
                        } while offset < length
                        slot = stop
                        position += length
                        continue
                    }
                    while slot < stop {
                        guard position < end else {
                            failure = position
                            return
                        }
                        let lead = utf8[position]
                        if lead < 0x80 {
                            buffer.initializeElement(at: slot, to: Unicode.Scalar(lead))
                            position += 1
                        } else {
                            guard let (scalar, width) = decodeMultibyte(utf8, at: position, end: end) else {
                                failure = position
                                return
                            }
                            buffer.initializeElement(at: slot, to: scalar)
                            position += width
                        }
                        slot += 1
                    }
                }
                if position != end || slot != total { failure = position }
            }
        }
        if let failure { throw .invalidText(offset: failure) }
        return content
    }

    /// Whether the `count` bytes at `start` are all ASCII; `count + 8` bytes must be readable.
    @inline(__always)
    private static func isASCII(_ start: UnsafePointer<UInt8>, count: Int) -> Bool {
        let high: UInt64 = 0x8080_8080_8080_8080
        if count <= 8 {
            let word = UInt64(littleEndian: UnsafeRawPointer(start).loadUnaligned(as: UInt64.self))
            return word & high & ~(UInt64.max << UInt64(8 * count)) == 0
        }
        var any: UInt64 = 0
        var index = 0
        while count - index >= 8 {
            any |= UnsafeRawPointer(start + index).loadUnaligned(as: UInt64.self)
            index += 8
        }
        let rest = UInt64(littleEndian: UnsafeRawPointer(start + index).loadUnaligned(as: UInt64.self))
        any |= rest & ~(UInt64.max << UInt64(8 * (count - index)))
        return any & high == 0
    }

    /// The scalar of 2 to 4 bytes at `position` and its width; nil for anything that is not
    /// the shortest UTF-8 of a scalar.
    private static func decodeMultibyte(_ utf8: UnsafeBufferPointer<UInt8>, at position: Int, end: Int) -> (Unicode.Scalar, Int)? {
        let lead = utf8[position]
        let width: Int
        var value: UInt32
        switch lead {
        case 0xC2...0xDF: width = 2; value = UInt32(lead & 0x1F)
        case 0xE0...0xEF: width = 3; value = UInt32(lead & 0x0F)
        case 0xF0...0xF4: width = 4; value = UInt32(lead & 0x07)
        default: return nil
        }
        guard end - position >= width else { return nil }
        for index in 1..<width {
            let byte = utf8[position + index]
            guard byte & 0xC0 == 0x80 else { return nil }
            value = value << 6 | UInt32(byte & 0x3F)
        }
        let shortest: UInt32 = width == 2 ? 0x80 : width == 3 ? 0x800 : 0x10000
        guard value >= shortest, let scalar = Unicode.Scalar(value) else { return nil }
        return (scalar, width)
    }
}


