// Dictionaries keyed by these identifiers encode as JSON objects ({"<uuid>": …}), not as
// arrays of alternating keys and values, so the files stay readable.

private struct StringKey: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

extension DocumentID: CodingKeyRepresentable {
    public var codingKey: any CodingKey { StringKey(stringValue: description) }
    public init?<T: CodingKey>(codingKey: T) { self.init(codingKey.stringValue) }
}

extension DeviceID: CodingKeyRepresentable {
    public var codingKey: any CodingKey { StringKey(stringValue: description) }
    public init?<T: CodingKey>(codingKey: T) { self.init(codingKey.stringValue) }
}

extension ObjectID: CodingKeyRepresentable {
    public var codingKey: any CodingKey { StringKey(stringValue: rawValue) }
    public init?<T: CodingKey>(codingKey: T) { self.init(codingKey.stringValue) }
}
