/// Merges a text edited from `original` with the text a peer saved meanwhile (the TUI's editor,
/// `$EDITOR`): a three-way merge over Unicode scalars. Where the two changed different parts,
/// both changes are kept; where they changed the same part (or parts that touch), both
/// versions of that part are kept, the peer's first (it was saved first), never one dropped.
/// The merged text is then saved as operations on the replicated text like any other edit.
public enum TextMerge {
    public enum Outcome: Sendable, Equatable {
        /// Nobody else changed the text: mine as it is.
        case mine
        /// A peer changed other parts meanwhile: both kept.
        case mergedWithPeer
        /// A peer changed the same part meanwhile: both versions of it kept, theirs first.
        case keptBoth
    }

    /// The text to save and how it was reached.
    /// - Parameters:
    ///   - original: the text when editing began.
    ///   - mine: the text as edited here.
    ///   - current: the text in the store now (a peer's save may have changed it).
    public static func merge(original: String, mine: String, current: String) -> (text: String, outcome: Outcome) {
        if current == original || current == mine { return (mine, .mine) }
        if mine == original { return (current, .mergedWithPeer) }
        let base = Array(original.unicodeScalars), ours = Array(mine.unicodeScalars), theirs = Array(current.unicodeScalars)
        let theirsRaw = ScalarDiff.hunks(from: base, to: theirs)
        // A change both made alike is made once (it is the peer's).
        let same = Set(theirsRaw.map { Change(old: $0.old, new: Array(theirs[$0.new])) })
        let oursRaw = ScalarDiff.hunks(from: base, to: ours).filter { !same.contains(Change(old: $0.old, new: Array(ours[$0.new]))) }
        let theirsHunks = coarsened(theirsRaw, base: base), oursHunks = coarsened(oursRaw, base: base)
        var result: [Unicode.Scalar] = []
        var position = 0
        var i = 0, j = 0
        var keptBoth = false
        while i < oursHunks.count || j < theirsHunks.count {
            // The next group: hunks of either side whose ranges overlap or touch.
            let startsWithOurs = j >= theirsHunks.count || (i < oursHunks.count && oursHunks[i].old.lowerBound < theirsHunks[j].old.lowerBound)
            let first = startsWithOurs ? oursHunks[i] : theirsHunks[j]
            let start = first.old.lowerBound
            var end = first.old.upperBound
            var ourGroup: [ScalarDiff.Hunk] = [], theirGroup: [ScalarDiff.Hunk] = []
            var grew = true
            while grew {
                grew = false
                if i < oursHunks.count, oursHunks[i].old.lowerBound >= start, oursHunks[i].old.lowerBound <= end {
                    ourGroup.append(oursHunks[i])
                    end = max(end, oursHunks[i].old.upperBound)
                    i += 1
                    grew = true
                }
                if j < theirsHunks.count, theirsHunks[j].old.lowerBound >= start, theirsHunks[j].old.lowerBound <= end {
                    theirGroup.append(theirsHunks[j])
                    end = max(end, theirsHunks[j].old.upperBound)
                    j += 1
                    grew = true
                }
            }
            result += base[position..<start]
            let theirVersion = version(of: base, start..<end, hunks: theirGroup, new: theirs)
            let ourVersion = version(of: base, start..<end, hunks: ourGroup, new: ours)
            if ourGroup.isEmpty {
                result += theirVersion
            } else if theirGroup.isEmpty {
                result += ourVersion
            } else {
                result += theirVersion
                if ourVersion != theirVersion {
                    result += ourVersion
                    keptBoth = true
                }
            }
            position = end
        }
        result += base[position...]
        var view = String.UnicodeScalarView()
        view.append(contentsOf: result)
        return (String(view), keptBoth ? .keptBoth : .mergedWithPeer)
    }

    struct Change: Hashable {
        var old: Range<Int>
        var new: [Unicode.Scalar]
    }

    /// One side's hunks with those inside one word made one (separated by a few scalars that
    /// are not white space): two rewrites of one word conflict as words, not letter by letter.
    static func coarsened(_ hunks: [ScalarDiff.Hunk], base: [Unicode.Scalar]) -> [ScalarDiff.Hunk] {
        var result: [ScalarDiff.Hunk] = []
        for hunk in hunks {
            if let last = result.last, hunk.old.lowerBound - last.old.upperBound <= 32,
               !base[last.old.upperBound..<hunk.old.lowerBound].contains(where: { $0.properties.isWhitespace }) {
                result[result.count - 1] = ScalarDiff.Hunk(
                    old: last.old.lowerBound..<hunk.old.upperBound, new: last.new.lowerBound..<hunk.new.upperBound)
            } else {
                result.append(hunk)
            }
        }
        return result
    }

    /// `range` of `base` with a side's hunks in it applied.
    static func version(of base: [Unicode.Scalar], _ range: Range<Int>, hunks: [ScalarDiff.Hunk], new: [Unicode.Scalar]) -> [Unicode.Scalar] {
        var result: [Unicode.Scalar] = []
        var position = range.lowerBound
        for hunk in hunks {
            result += base[position..<hunk.old.lowerBound]
            result += new[hunk.new]
            position = hunk.old.upperBound
        }
        result += base[position..<range.upperBound]
        return result
    }
}
