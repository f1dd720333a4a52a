/// Every scalar a text's items hold, by slot: one byte each while every one is ASCII, four
/// once one is not.
///
/// Most texts are ASCII, and their content is the largest part of a loaded state: a
/// 1M-character text holds 1 MB here instead of 4 MB, a quarter of the pages a process touches
/// to load it and gives back at exit, and its visible runs are already their UTF-8. A decoded
/// snapshot's deleted scalars, whose text it did not keep, are ``TextSequence/deletedPlaceholder``;
/// the narrow form stores them as ``placeholderByte``, which no visible slot holds (a scalar
/// appended that is not ASCII, the placeholder included, widens the whole store once).
struct SlotScalars {
    /// The byte of a deleted scalar whose text was not kept, in the narrow form.
    static let placeholderByte: UInt8 = 0xFF

    /// The scalars while the store is narrow; empty once it is wide.
    private(set) var bytes: [UInt8]
    /// The scalars once the store is wide; empty while it is narrow.
    private(set) var wide: [Unicode.Scalar] = []
    private(set) var isWide = false

    init() { bytes = [] }

    /// A narrow store of `bytes`: ASCII, and ``placeholderByte`` for deleted scalars only.
    init(narrow bytes: [UInt8]) { self.bytes = bytes }

    init(wide scalars: [Unicode.Scalar]) {
        bytes = []
        wide = scalars
        isWide = true
    }

    /// A store of `scalars`: narrow when all are ASCII.
    init(_ scalars: [Unicode.Scalar]) {
        if scalars.allSatisfy(\.isASCII) {
            self.init(narrow: scalars.map { UInt8(truncatingIfNeeded: $0.value) })
        } else {
            self.init(wide: scalars)
        }
    }

    var count: Int { isWide ? wide.count : bytes.count }

    subscript(slot: Int) -> Unicode.Scalar {
        guard !isWide else { return wide[slot] }
        let byte = bytes[slot]
        return byte < 0x80 ? Unicode.Scalar(byte) : TextSequence.deletedPlaceholder
    }

    /// The scalars of `range`.
    func scalars(_ range: Range<Int>) -> [Unicode.Scalar] {
        if isWide { return Array(wide[range]) }
        return bytes[range].map { $0 < 0x80 ? Unicode.Scalar($0) : TextSequence.deletedPlaceholder }
    }

    /// Appends the scalars of `range` to `result`.
    func append(_ range: Range<Int>, to result: inout [Unicode.Scalar]) {
        if isWide {
            result.append(contentsOf: wide[range])
        } else {
            result.append(contentsOf: bytes[range].lazy.map { $0 < 0x80 ? Unicode.Scalar($0) : TextSequence.deletedPlaceholder })
        }
    }

    mutating func append(contentsOf scalars: some Collection<Unicode.Scalar>) {
        if !isWide {
            // Typing appends one scalar at a time: checked and appended without a sequence
            // wrapped around it.
            if scalars.count == 1, let scalar = scalars.first, scalar.isASCII {
                bytes.append(UInt8(truncatingIfNeeded: scalar.value))
                return
            }
            if scalars.allSatisfy({ $0.isASCII }) {
                for scalar in scalars { bytes.append(UInt8(truncatingIfNeeded: scalar.value)) }
                return
            }
        }
        widen()
        wide.append(contentsOf: scalars)
    }

    /// Turns a narrow store wide (once; a no-op when it is).
    private mutating func widen() {
        guard !isWide else { return }
        wide.reserveCapacity(bytes.count + 16)
        wide.append(contentsOf: bytes.lazy.map { $0 < 0x80 ? Unicode.Scalar($0) : TextSequence.deletedPlaceholder })
        bytes = []
        isWide = true
    }

    /// About how many bytes the storage takes.
    var byteCapacity: Int { bytes.capacity + wide.capacity * MemoryLayout<Unicode.Scalar>.stride }

    /// Whether both are the same storage (copy-on-write not triggered).
    func sharesStorage(with other: SlotScalars) -> Bool {
        guard isWide == other.isWide, count == other.count else { return false }
        if isWide {
            return wide.withUnsafeBufferPointer { x in other.wide.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
        }
        return bytes.withUnsafeBufferPointer { x in other.bytes.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress } }
    }
}
