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

    public init(inserted: Set<ObjectID> = [], updated: Set<ObjectID> = [], deleted: Set<ObjectID> = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    public mutating func formUnion(_ other: ChangeSummary) {
        inserted.formUnion(other.inserted)
        updated.formUnion(other.updated.subtracting(inserted))
        deleted.formUnion(other.deleted)
        inserted.subtract(deleted)
        updated.subtract(deleted)
    }
}
