/// A minimal edit between two scalar arrays: Myers' O((N+M)·D) diff after trimming the common
/// prefix and suffix, with a bound on D so that very different texts cost one replacement
/// instead of quadratic time and memory.
package enum ScalarDiff {
    /// A replaced stretch: `old` in the old text becomes `new` of the new text.
    package struct Hunk: Equatable {
        package var old: Range<Int>
        package var new: Range<Int>
    }

    /// The largest edit distance searched for.
    static let maximumDistance = 1024
    /// About how many scalar comparisons a diff may spend (D · (N + M)).
    static let work = 8_000_000

    /// The hunks that turn `old` into `new`, in order, not overlapping.
    package static func hunks(from old: [Unicode.Scalar], to new: [Unicode.Scalar]) -> [Hunk] {
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix,
              old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
        let a = old[prefix..<(old.count - suffix)]
        let b = new[prefix..<(new.count - suffix)]
        if a.isEmpty && b.isEmpty { return [] }
        let whole = [Hunk(old: a.startIndex..<a.endIndex, new: b.startIndex..<b.endIndex)]
        if a.isEmpty || b.isEmpty { return whole }
        let size = a.count + b.count
        let bound = min(size, maximumDistance, max(16, work / size))
        guard let matches = diagonal(a, b, bound: bound) else { return whole }

        // The stretches between matched scalars are the hunks.
        var result: [Hunk] = []
        var x = a.startIndex
        var y = b.startIndex
        for (matchX, matchY) in matches + [(a.endIndex, b.endIndex)] {
            if matchX > x || matchY > y { result.append(Hunk(old: x..<matchX, new: y..<matchY)) }
            x = matchX + 1
            y = matchY + 1
        }
        return result
    }

    /// The matched pairs (indexes into `a` and `b`) of a shortest edit script, in order, or nil
    /// when it needs more than `bound` edits.
    private static func diagonal(_ a: ArraySlice<Unicode.Scalar>, _ b: ArraySlice<Unicode.Scalar>, bound: Int) -> [(Int, Int)]? {
        let n = a.count
        let m = b.count
        let offset = bound + 1
        var v = [Int32](repeating: 0, count: 2 * bound + 3)
        // The frontier before each round d, k from -d-1 through d+1: round d starts at d² + 2d.
        var trace: [Int32] = []
        var distance: Int?
        search: for d in 0...bound {
            trace.append(contentsOf: v[(offset - d - 1)...(offset + d + 1)])
            for k in stride(from: -d, through: d, by: 2) {
                var x = k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])
                    ? Int(v[offset + k + 1]) : Int(v[offset + k - 1]) + 1
                var y = x - k
                while x < n, y < m, a[a.startIndex + x] == b[b.startIndex + y] {
                    x += 1
                    y += 1
                }
                v[offset + k] = Int32(x)
                if x >= n, y >= m {
                    distance = d
                    break search
                }
            }
        }
        guard let distance else { return nil }

        var matches: [(Int, Int)] = []
        var x = n
        var y = m
        for d in stride(from: distance, through: 0, by: -1) {
            let base = d * d + 2 * d
            func frontier(_ k: Int) -> Int { Int(trace[base + k + d + 1]) }
            let k = x - y
            let previousK = d == 0 ? 0 : (k == -d || (k != d && frontier(k - 1) < frontier(k + 1)) ? k + 1 : k - 1)
            let previousX = d == 0 ? 0 : frontier(previousK)
            let previousY = previousX - previousK
            // The snake after this round's edit (or from the start, in round 0).
            let snakeStart = d == 0 ? 0 : (previousK == k + 1 ? previousX : previousX + 1)
            while x > snakeStart, y > 0, x - 1 >= 0 {
                x -= 1
                y -= 1
                matches.append((a.startIndex + x, b.startIndex + y))
            }
            x = previousX
            y = previousY
        }
        return matches.reversed()
    }
}
