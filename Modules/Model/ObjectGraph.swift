import Foundation

/// The stable identifier of one object in a document's graph.
///
/// Ordinary objects get a random UUID; seed objects that every device creates on its own get a
/// deterministic identifier (``ObjectID/seed(_:)``) so that two devices end with one copy.
public struct ObjectID: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// A fresh random identifier.
    public static func random(using generate: () -> UUID = UUID.init) -> ObjectID {
        ObjectID(generate().uuidString.lowercased())
    }

    /// A deterministic, global identifier for seed data (Ensembles' "global identifiers").
    public static func seed(_ key: String) -> ObjectID { ObjectID("seed:\(key)") }

    public var description: String { rawValue }
    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// The value of one attribute.
public enum AttributeValue: Hashable, Sendable {
    case string(String)
    case date(Date)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null

    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    public var dateValue: Date? { if case .date(let value) = self { value } else { nil } }
    public var intValue: Int64? { if case .int(let value) = self { value } else { nil } }
}

extension AttributeValue: Codable {
    private enum Key: String, CodingKey { case date, int, double, bool }

    /// Strings are JSON strings, `null` is JSON null, everything else a one-key object
    /// (`{"date": 1700000000.5}`), so the JSON stays readable and unambiguous.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer() {
            if single.decodeNil() { self = .null; return }
            if let string = try? single.decode(String.self) { self = .string(string); return }
        }
        let keyed = try decoder.container(keyedBy: Key.self)
        if let seconds = try keyed.decodeIfPresent(Double.self, forKey: .date) {
            self = .date(Date(timeIntervalSince1970: seconds))
        } else if let value = try keyed.decodeIfPresent(Int64.self, forKey: .int) {
            self = .int(value)
        } else if let value = try keyed.decodeIfPresent(Double.self, forKey: .double) {
            self = .double(value)
        } else if let value = try keyed.decodeIfPresent(Bool.self, forKey: .bool) {
            self = .bool(value)
        } else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown attribute value"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .string(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .date(let value):
            var keyed = encoder.container(keyedBy: Key.self)
            try keyed.encode(value.timeIntervalSince1970, forKey: .date)
        case .int(let value):
            var keyed = encoder.container(keyedBy: Key.self)
            try keyed.encode(value, forKey: .int)
        case .double(let value):
            var keyed = encoder.container(keyedBy: Key.self)
            try keyed.encode(value, forKey: .double)
        case .bool(let value):
            var keyed = encoder.container(keyedBy: Key.self)
            try keyed.encode(value, forKey: .bool)
        }
    }
}

/// One object: its entity and its attributes.
public struct ObjectRecord: Hashable, Sendable, Codable {
    public var entity: String
    public var attributes: [String: AttributeValue]

    public init(entity: String, attributes: [String: AttributeValue] = [:]) {
        self.entity = entity
        self.attributes = attributes
    }
}

/// The entities of the document schema (seed 000: one `TextEntry` and one `ModelVersion`).
public enum Entity {
    public static let textEntry = "TextEntry"
    public static let modelVersion = "ModelVersion"
    /// Document-level properties that travel with the logs (its display name).
    public static let documentInfo = "DocumentInfo"

    public enum TextEntry {
        public static let text = "text"
        public static let modified = "modified"
    }
    public enum ModelVersion {
        public static let version = "version"
    }
    public enum DocumentInfo {
        public static let name = "name"
    }
}

/// The version of the document schema this build writes. Version 2 added `ModelVersion.version`
/// and document-level info objects; stores of version 1 migrate on open.
public enum SchemaVersion {
    public static let current: Int64 = 2
}

/// A document's object graph: every live object by identifier.
public struct ObjectGraph: Hashable, Sendable, Codable {
    public var objects: [ObjectID: ObjectRecord]

    public init(objects: [ObjectID: ObjectRecord] = [:]) { self.objects = objects }

    public subscript(id: ObjectID) -> ObjectRecord? {
        get { objects[id] }
        set { objects[id] = newValue }
    }

    /// The objects of one entity, in identifier order.
    public func objects(of entity: String) -> [(id: ObjectID, record: ObjectRecord)] {
        objects.filter { $0.value.entity == entity }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The document's main text entry: the first `TextEntry` by identifier, if any.
    public var textEntry: (id: ObjectID, text: String, modified: Date?)? {
        guard let first = objects(of: Entity.textEntry).first else { return nil }
        return (first.id, first.record.attributes[Entity.TextEntry.text]?.stringValue ?? "",
                first.record.attributes[Entity.TextEntry.modified]?.dateValue)
    }

    /// The document's display name as carried by its `DocumentInfo` object, if any.
    public var carriedName: String? {
        objects(of: Entity.documentInfo).first?.record.attributes[Entity.DocumentInfo.name]?.stringValue
    }

    /// Applies changes without any conflict rule (the caller has already resolved them).
    public mutating func apply(_ changes: [Change]) {
        for change in changes {
            switch change {
            case .insert(let id, let entity, let attributes):
                var record = objects[id] ?? ObjectRecord(entity: entity)
                record.entity = entity
                record.attributes.merge(attributes) { _, new in new }
                objects[id] = record
            case .update(let id, let attributes):
                guard var record = objects[id] else { continue }
                record.attributes.merge(attributes) { _, new in new }
                objects[id] = record
            case .delete(let id):
                objects[id] = nil
            }
        }
    }
}

extension Date {
    /// Whole milliseconds since 1970, clamped to `Int64` (0 for a date that is not a number):
    /// dates come from peers' files, and `Int64(_:)` of a `Double` out of range traps.
    public var clampedMilliseconds: Int64 {
        let milliseconds = (timeIntervalSince1970 * 1000).rounded()
        guard milliseconds.isFinite else { return 0 }
        if milliseconds >= 9.2e18 { return .max }
        if milliseconds <= -9.2e18 { return .min }
        return Int64(milliseconds)
    }
}
