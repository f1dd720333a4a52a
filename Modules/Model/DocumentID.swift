import Foundation

/// The identity of a document: a UUID that tells apart documents of the same name made on
/// different devices (seed 000: "Each document has its own UUID").
///
/// The UUID is never shown as the document's name; it precedes the name on disk.
public struct DocumentID: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    public let uuid: UUID

    public init(_ uuid: UUID) { self.uuid = uuid }

    /// Parses a UUID string (any case). Returns nil for anything else.
    public init?(_ string: String) {
        guard let uuid = UUIDText.parse(string) else { return nil }
        self.uuid = uuid
    }

    /// The canonical lower-case spelling used in paths and file contents.
    public var description: String { UUIDText.lowercase(uuid) }

    public static func < (lhs: DocumentID, rhs: DocumentID) -> Bool { UUIDText.less(lhs.uuid, rhs.uuid) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let uuid = UUIDText.parse(string) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a UUID: \(string)")
        }
        self.uuid = uuid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// The identity of a device: one per device root, stable for its life.
public struct DeviceID: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    public let uuid: UUID

    public init(_ uuid: UUID) { self.uuid = uuid }

    public init?(_ string: String) {
        guard let uuid = UUIDText.parse(string) else { return nil }
        self.uuid = uuid
    }

    public var description: String { UUIDText.lowercase(uuid) }

    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool { UUIDText.less(lhs.uuid, rhs.uuid) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let uuid = UUIDText.parse(string) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a UUID: \(string)")
        }
        self.uuid = uuid
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
