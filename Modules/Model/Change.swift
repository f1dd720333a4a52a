import Foundation

/// One change to a document's graph.
public enum Change: Hashable, Sendable {
    case insert(ObjectID, entity: String, attributes: [String: AttributeValue])
    case update(ObjectID, attributes: [String: AttributeValue])
    case delete(ObjectID)

    public var objectID: ObjectID {
        switch self {
        case .insert(let id, _, _), .update(let id, _), .delete(let id): id
        }
    }
}

extension Change: Codable {
    private enum Key: String, CodingKey { case op, id, entity, attributes }

    public init(from decoder: any Decoder) throws {
        let keyed = try decoder.container(keyedBy: Key.self)
        let op = try keyed.decode(String.self, forKey: .op)
        let id = try keyed.decode(ObjectID.self, forKey: .id)
        switch op {
        case "insert":
            self = .insert(id, entity: try keyed.decode(String.self, forKey: .entity),
                           attributes: try keyed.decode([String: AttributeValue].self, forKey: .attributes))
        case "update":
            self = .update(id, attributes: try keyed.decode([String: AttributeValue].self, forKey: .attributes))
        case "delete":
            self = .delete(id)
        default:
            throw DecodingError.dataCorruptedError(forKey: .op, in: keyed, debugDescription: "unknown change \(op)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var keyed = encoder.container(keyedBy: Key.self)
        switch self {
        case .insert(let id, let entity, let attributes):
            try keyed.encode("insert", forKey: .op)
            try keyed.encode(id, forKey: .id)
            try keyed.encode(entity, forKey: .entity)
            try keyed.encode(attributes, forKey: .attributes)
        case .update(let id, let attributes):
            try keyed.encode("update", forKey: .op)
            try keyed.encode(id, forKey: .id)
            try keyed.encode(attributes, forKey: .attributes)
        case .delete(let id):
            try keyed.encode("delete", forKey: .op)
            try keyed.encode(id, forKey: .id)
        }
    }
}

/// What a transaction or an import did to the graph, by object identifier
/// (the analog of NSPersistentStoreDidImportUbiquitousContentChangesNotification's user info).
public struct ChangeSummary: Hashable, Sendable, Codable {
    public var inserted: Set<ObjectID>
    public var updated: Set<ObjectID>
    public var deleted: Set<ObjectID>
    /// Values that last-writer-wins decided between two devices that had not seen each other's
    /// write: the one kept and the one that lost (not counted in ``isEmpty``).
    public var conflicts: [Conflict] = []

    public init(inserted: Set<ObjectID> = [], updated: Set<ObjectID> = [], deleted: Set<ObjectID> = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    public mutating func formUnion(_ other: ChangeSummary) {
        Self.union(&inserted, other.inserted)
        Self.union(&updated, other.updated.isEmpty || inserted.isEmpty ? other.updated : other.updated.subtracting(inserted))
        Self.union(&deleted, other.deleted)
        if !deleted.isEmpty {
            inserted.subtract(deleted)
            updated.subtract(deleted)
        }
        conflicts += other.conflicts
    }

    /// `set ∪ more`, the smaller one inserted into the larger unless `set` has room for both:
    /// an import's summary of a million objects added to an empty one is taken whole, not
    /// hashed again entry by entry.
    private static func union(_ set: inout Set<ObjectID>, _ more: Set<ObjectID>) {
        guard set.count < more.count, set.capacity < set.count + more.count else {
            set.formUnion(more)
            return
        }
        var larger = more
        larger.formUnion(set)
        set = larger
    }
}

/// Two devices wrote one attribute without having seen each other's write, and
/// last-writer-wins kept one value: what was kept, what was lost, and who wrote each.
public struct Conflict: Hashable, Sendable, Codable, CustomStringConvertible {
    public var object: ObjectID
    public var entity: String
    public var attribute: String
    public var kept: AttributeValue
    public var keptBy: DeviceID
    public var lost: AttributeValue
    public var lostBy: DeviceID

    public init(object: ObjectID, entity: String, attribute: String, kept: AttributeValue, keptBy: DeviceID, lost: AttributeValue, lostBy: DeviceID) {
        self.object = object
        self.entity = entity
        self.attribute = attribute
        self.kept = kept
        self.keptBy = keptBy
        self.lost = lost
        self.lostBy = lostBy
    }

    public var description: String {
        "\(entity).\(attribute): kept \(Self.short(kept)) (device \(keptBy)), overwrote \(Self.short(lost)) (device \(lostBy))"
    }

    /// A value in a few words (long texts cut), for reports.
    public static func short(_ value: AttributeValue) -> String {
        switch value {
        case .string(let text): (text.count > 60 ? String(text.prefix(57)) + "…" : text).debugDescription
        case .date(let date): date.formatted(.iso8601)
        case .int(let int): "\(int)"
        case .double(let double): "\(double)"
        case .bool(let bool): "\(bool)"
        case .null: "nothing"
        }
    }
}
