import Model
import Text

/// An edit of a text at a known place, as an editor or a script knows it: what a save carries
/// instead of the whole new text (``Replicator/commit(document:device:format:keys:now:to:ship:durable:editing:)``).
/// Positions count Unicode scalars of the text as it is inside the save's transaction.
public struct TextEdit: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// `text` inserted at `position`.
        case insert(String, at: Int)
        /// `text` added at the end.
        case append(String)
        /// The scalars in `range` removed.
        case delete(Range<Int>)
    }

    public var object: ObjectID
    public var attribute: String
    public var kind: Kind

    public init(object: ObjectID, attribute: String, _ kind: Kind) {
        self.object = object
        self.attribute = attribute
        self.kind = kind
    }

    /// The range replaced and the scalars put there, in a text of `count` scalars.
    /// - Throws: `TextError.positionOutOfRange` when the edit reaches outside the text.
    func resolved(count: Int) throws(TextError) -> (range: Range<Int>, scalars: [Unicode.Scalar]) {
        switch kind {
        case .insert(let text, let position):
            guard position >= 0, position <= count else { throw .positionOutOfRange(position: position, count: count) }
            return (position..<position, Array(text.unicodeScalars))
        case .append(let text):
            return (count..<count, Array(text.unicodeScalars))
        case .delete(let range):
            guard range.lowerBound >= 0, range.upperBound <= count else {
                throw .positionOutOfRange(position: range.lowerBound < 0 ? range.lowerBound : range.upperBound, count: count)
            }
            return (range, [])
        }
    }

    /// `text` with the edit made (for a text kept as a plain value).
    func applied(to text: String) throws(TextError) -> String {
        let scalars = text.unicodeScalars
        let (range, inserted) = try resolved(count: scalars.count)
        let start = scalars.index(scalars.startIndex, offsetBy: range.lowerBound)
        let end = scalars.index(start, offsetBy: range.count)
        var result = text.unicodeScalars
        result.replaceSubrange(start..<end, with: inserted)
        return String(result)
    }
}
