/// "Did you mean …": the candidates close to what someone typed, for verbs, options, setting
/// keys and document names.
public enum Suggestions {
    /// The candidates that equal `typed` ignoring case, or are within a small edit distance of
    /// it (adjacent swaps count as one edit), closest first; at most `limit`.
    public static func closest(to typed: String, among candidates: some Sequence<String>, limit: Int = 3) -> [String] {
        let wanted = Array(typed.lowercased())
        guard !wanted.isEmpty, wanted.count <= 256 else { return [] }
        // Short words tolerate one edit, longer ones up to three.
        let allowed = min(3, max(1, wanted.count / 3))
        var scored: [(distance: Int, candidate: String)] = []
        var seen = Set<String>()
        for candidate in candidates where seen.insert(candidate).inserted {
            let other = Array(candidate.lowercased())
            guard abs(other.count - wanted.count) <= allowed, other.count <= 256 else { continue }
            let distance = Self.distance(wanted, other)
            if distance <= allowed { scored.append((distance, candidate)) }
        }
        return scored.sorted { $0.distance != $1.distance ? $0.distance < $1.distance : $0.candidate < $1.candidate }
            .prefix(max(0, limit)).map(\.candidate)
    }

    /// The optimal string alignment distance: insertions, deletions, substitutions and swaps of
    /// two neighbours, each one edit.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, before[j - 2] + 1) }
                current[j] = value
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }

    /// `; did you mean A, B or C?`, or nothing when there is no suggestion.
    public static func phrase(_ suggestions: [String], quoted: Bool = false) -> String {
        let shown = suggestions.map { quoted ? "'\($0)'" : $0 }
        guard let last = shown.last else { return "" }
        let head = shown.dropLast()
        return "; did you mean " + (head.isEmpty ? last : head.joined(separator: ", ") + " or " + last) + "?"
    }
}
