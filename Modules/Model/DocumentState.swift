/// A document's state, as UIDocumentState had it, with the seed's status string
/// (seed 000, UIDocument+NPExtending: `[Closed|Editing Disabled]`).
public struct DocumentState: OptionSet, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// No flag set: open and usable.
    public static let normal: DocumentState = []
    public static let closed = DocumentState(rawValue: 1 << 0)
    public static let inConflict = DocumentState(rawValue: 1 << 1)
    public static let savingError = DocumentState(rawValue: 1 << 2)
    public static let editingDisabled = DocumentState(rawValue: 1 << 3)
    public static let progressAvailable = DocumentState(rawValue: 1 << 4)

    private static let names: [(DocumentState, String)] = [
        (.closed, "Closed"), (.inConflict, "In Conflict"), (.savingError, "Saving Error"),
        (.editingDisabled, "Editing Disabled"), (.progressAvailable, "Progress Available"),
    ]

    /// The seed's status string: `[Normal]`, `[Closed]`, `[Closed|Editing Disabled]`, …
    public var statusString: String {
        let parts = Self.names.filter { contains($0.0) }.map(\.1)
        return "[" + (parts.isEmpty ? "Normal" : parts.joined(separator: "|")) + "]"
    }

    public var description: String { statusString }
}

/// Where a document came from, as far as this device knows.
public enum DocumentOrigin: String, Hashable, Sendable, Codable {
    /// Created on this device.
    case created
    /// Found in the container, made by another device.
    case discovered
}

/// Where a document lives.
public enum DocumentLocation: String, Hashable, Sendable, Codable {
    /// Only in this device's sandbox.
    case local
    /// Shipped through the container to every device.
    case cloud
}
