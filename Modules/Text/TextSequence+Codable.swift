import Foundation

extension TextSequence: Hashable {
    /// Hashes the visible text only: equal states have equal texts, which is all `Hashable`
    /// asks, and it is much cheaper than the ids.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        hasher.combine(text)
    }
}

extension TextSequence: Codable {
    /// A state is coded as its compacted bytes (`encoded`): one value, so a JSON store holds it
    /// as base64 and a binary one as a blob.
    public init(from decoder: any Decoder) throws {
        let data = try decoder.singleValueContainer().decode(Data.self)
        self = try TextSequence(decoding: Array(data))
    }

    public func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        try single.encode(Data(encoded))
    }
}
