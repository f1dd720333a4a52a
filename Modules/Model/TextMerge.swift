/// Merges a text edited from `original` with the text a peer saved meanwhile, for edits that
/// are appends (the ping stunt's ` B pings`, a note added at the end): both survive. Anything
/// else is last-writer-wins, the document's conflict rule, and says so.
public enum TextMerge {
    public enum Outcome: Sendable, Equatable {
        /// Nobody else changed the text: mine as it is.
        case mine
        /// A peer appended meanwhile: their addition is kept after mine (or after my edit).
        case mergedWithPeer
        /// A peer changed the text in another way meanwhile: mine replaces theirs.
        case replacedPeerEdit
    }

    /// The text to save and how it was reached.
    /// - Parameters:
    ///   - original: the text when editing began.
    ///   - mine: the text as edited here.
    ///   - current: the text in the store now (a peer's save may have changed it).
    public static func merge(original: String, mine: String, current: String) -> (text: String, outcome: Outcome) {
        if current == original || current == mine { return (mine, .mine) }
        guard current.hasPrefix(original) else { return (mine, .replacedPeerEdit) }
        let theirs = current.dropFirst(original.count)
        if mine == original { return (current, .mergedWithPeer) }
        if mine.hasPrefix(original) {
            // Both appended: the peer's addition was saved first, so it comes first.
            return (original + theirs + mine.dropFirst(original.count), .mergedWithPeer)
        }
        return (mine + theirs, .mergedWithPeer)
    }
}
