import Foundation

/// A value that is a UUID and nothing else (``DocumentID``, ``DeviceID``): parsed in any case,
/// spelt in lower case in paths, file contents and JSON (a plain string), ordered as that text.
/// Each identifier is a type of its own, so a device's UUID cannot stand where a document's is
/// expected.
public protocol UUIDIdentifier: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    var uuid: UUID { get }
    init(_ uuid: UUID)
}

extension UUIDIdentifier {
    /// Parses a UUID string (any case). Returns nil for anything else.
    @inlinable public init?(_ string: String) {
        guard let uuid = UUIDText.parse(string) else { return nil }
        self.init(uuid)
    }

    /// The canonical lower-case spelling used in paths and file contents.
    @inlinable public var description: String { UUIDText.lowercase(uuid) }

    @inlinable public static func < (lhs: Self, rhs: Self) -> Bool { UUIDText.less(lhs.uuid, rhs.uuid) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let uuid = UUIDText.parse(string) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a UUID: \(string)")
        }
        self.init(uuid)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// The identity of a document: a UUID that tells apart documents of the same name made on
/// different devices (seed 000: "Each document has its own UUID").
///
/// The UUID is never shown as the document's name; it precedes the name on disk.
public struct DocumentID: UUIDIdentifier {
    public let uuid: UUID

    public init(_ uuid: UUID) { self.uuid = uuid }
}

/// The identity of a device: one per device root, stable for its life.
public struct DeviceID: UUIDIdentifier {
    public let uuid: UUID

    public init(_ uuid: UUID) { self.uuid = uuid }
}
