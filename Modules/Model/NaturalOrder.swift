/// The order people expect of names: case-insensitive, with runs of digits compared as numbers
/// (`TestDoc2` before `TestDoc10`), as Finder and `localizedStandardCompare` sort. Keys are
/// made once per name, so sorting thousands of names costs no locale-aware comparison per pair.
public enum NaturalOrder {
    /// A name's parts as bytes that compare as the parts do, so two keys compare with one
    /// `memcmp`-like walk (keys as arrays of parts cost a retain and a release per step of a
    /// 10,000-name sort):
    /// - a run of digits is `0x01`, its digit count without leading zeros (4 bytes, big-endian),
    ///   then those digits: a number sorts before text, a shorter number before a longer one;
    /// - a run of anything else is `0x02` and its lowercased UTF-8, whose bytes (all at least
    ///   `0x20` in a name) sort after the marker that starts the next part, so `ab` comes
    ///   before `ab2` and `abc`. UTF-8 keeps the order of Unicode scalars.
    public struct Key: Comparable, Hashable, Sendable {
        fileprivate var bytes: [UInt8]

        public static func < (lhs: Key, rhs: Key) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
    }

    public static func key(_ name: String) -> Key {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(name.utf8.count + 8)
        var text = ""
        var digits: [UInt8] = []
        func flushDigits() {
            guard !digits.isEmpty else { return }
            let trimmed = digits.drop { $0 == UInt8(ascii: "0") }
            let count = UInt32(clamping: trimmed.count)
            bytes.append(0x01)
            bytes.append(contentsOf: [UInt8(truncatingIfNeeded: count >> 24), UInt8(truncatingIfNeeded: count >> 16),
                                      UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count)])
            bytes.append(contentsOf: trimmed)
            digits.removeAll(keepingCapacity: true)
        }
        func flushText() {
            guard !text.isEmpty else { return }
            bytes.append(0x02)
            bytes.append(contentsOf: text.lowercased().utf8)
            text = ""
        }
        for scalar in name.unicodeScalars {
            if scalar.value >= 0x30, scalar.value <= 0x39 {
                flushText()
                digits.append(UInt8(truncatingIfNeeded: scalar.value))
            } else {
                flushDigits()
                text.unicodeScalars.append(scalar)
            }
        }
        flushDigits()
        flushText()
        return Key(bytes: bytes)
    }
}
