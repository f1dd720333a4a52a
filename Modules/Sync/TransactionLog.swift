import Foundation
import Model
import Text

/// One change as shipped in a log. Unlike ``Model/Change``, updates carry the entity too, so a
/// peer can apply a device's update before it has the insert from another device.
public struct LoggedChange: Codable, Sendable, Hashable {
    public enum Operation: String, Codable, Sendable { case insert, update, delete }

    public var op: Operation
    public var id: ObjectID
    public var entity: String?
    public var attributes: [String: AttributeValue]?
    /// Text attributes changed by operations on their replicated sequence (format 2 only), per
    /// attribute in the order they were made; an insert or update only.
    public var texts: [String: [TextOperation]]?

    private enum CodingKeys: String, CodingKey { case op, id, entity, attributes }

    public init(
        op: Operation, id: ObjectID, entity: String? = nil, attributes: [String: AttributeValue]? = nil,
        texts: [String: [TextOperation]]? = nil
    ) {
        self.op = op
        self.id = id
        self.entity = entity
        self.attributes = attributes
        self.texts = texts
    }
}

/// The transaction log of one save: written once, by one device, never modified.
public struct TransactionLog: Codable, Sendable, Hashable {
    public var format: Int
    public var document: DocumentID
    public var device: DeviceID
    /// 1, 2, 3, … per device and document, without gaps.
    public var sequence: UInt64
    /// The hybrid logical clock stamp every change in the log carries.
    public var stamp: Stamp
    /// Wall-clock time of the local commit (for one-way latency).
    public var committedAt: Date
    /// The writing device's name (shown in ping messages and reports).
    public var deviceName: String
    public var changes: [LoggedChange]
    /// Format 2: what the writer had applied of other devices' logs when it saved. A reader
    /// applies the log only after those (causal order), so an edit never shows without the
    /// text it was made on. Nil in format 1.
    public var dependencies: [DeviceID: UInt64]?

    /// `format` 1 is JSON (a container of format 1); 2 the binary envelope, whose changes may
    /// carry text operations.
    public init(
        format: Int = 1, document: DocumentID, device: DeviceID, sequence: UInt64, stamp: Stamp, committedAt: Date, deviceName: String,
        changes: [LoggedChange]
    ) {
        self.format = format
        self.document = document
        self.device = device
        self.sequence = sequence
        self.stamp = stamp
        self.committedAt = committedAt
        self.deviceName = deviceName
        self.changes = changes
    }

    /// The largest log file a reader accepts; anything bigger is quarantined unread.
    public static let maximumFileSize = 64 * 1024 * 1024

    /// The file's bytes in the log's format: format 1 as compact JSON with sorted keys, format 2
    /// as the binary envelope (identical logs encode identically in both). `container`: the
    /// identity a format 2 log is written for.
    public func encoded(container: UUID? = nil) throws -> Data {
        if format >= 2 { return binaryEncoded(container: container) }
        guard !changes.contains(where: { $0.texts != nil }) else {
            throw LogDecodingError(reason: "text operations need a format 2 log")
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return try encoder.encode(self)
    }

    /// Whether `applied` holds everything the log was made on.
    public func dependenciesMet(by applied: [DeviceID: UInt64]) -> Bool {
        (dependencies ?? [:]).allSatisfy { device, sequence in (applied[device] ?? 0) >= sequence }
    }

    /// The log of its own device this one follows: the one before it, or, when its writer
    /// stepped over slots that files not its own took (``Replicator/flush(_:in:)``), the one
    /// its dependencies name for its own device.
    public var follows: UInt64 { dependencies?[device] ?? (sequence &- 1) }

    /// Whether this log is the next of its device for a reader that applied `applied` of it.
    public func isNext(after applied: UInt64) -> Bool { sequence > applied && follows == applied }

    /// Decodes and validates a log file's bytes against what its path says.
    /// - Throws: a description of the first problem (for the quarantine report).
    /// `refusing`: container identities a format 2 log's header must not name (replaced ones).
    public static func decode(
        _ data: Data, document: DocumentID, device: DeviceID, sequence: UInt64, refusing: Set<UUID> = []
    ) throws(LogDecodingError) -> TransactionLog {
        if ContainerEnvelope.isEnvelope(data) {
            return try decodeBinary(data, document: document, device: device, sequence: sequence, refusing: refusing)
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        let log: TransactionLog
        do {
            log = try decoder.decode(TransactionLog.self, from: data)
        } catch {
            throw LogDecodingError(reason: data.isEmpty ? "empty file" : "not a transaction log (\(Self.summarize(error)))")
        }
        guard log.format <= 1 else {
            throw LogDecodingError(reason: "a JSON log of format version \(log.format): only format 1 is JSON (format 2 logs are binary)")
        }
        guard log.document == document else { throw LogDecodingError(reason: "names document \(log.document) but lies in \(document)'s folder") }
        guard log.device == device else { throw LogDecodingError(reason: "claims device \(log.device) but lies in \(device)'s folder") }
        guard log.sequence == sequence else { throw LogDecodingError(reason: "claims sequence \(log.sequence) but is named \(sequence)") }
        guard log.stamp.device == device else { throw LogDecodingError(reason: "stamp names another device") }
        for change in log.changes {
            switch change.op {
            case .insert, .update:
                guard let entity = change.entity, !entity.isEmpty, change.attributes != nil else {
                    throw LogDecodingError(reason: "\(change.op.rawValue) of \(change.id) lacks its entity or attributes")
                }
            case .delete: break
            }
        }
        return log
    }

    private static func summarize(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context): return context.debugDescription
        case DecodingError.keyNotFound(let key, _): return "missing \(key.stringValue)"
        case DecodingError.typeMismatch(_, let context): return "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.valueNotFound(_, let context): return "missing value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: return "\(error)"
        }
    }
}

/// Why a log file cannot be imported.
public struct LogDecodingError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}

extension TransactionLog {
    /// Turns in-memory changes into logged ones, taking entities from the graph the changes
    /// apply to. An update of an object this device does not have (never inserted, or deleted)
    /// is dropped: there is nothing to update, and a peer could not tell its entity.
    public static func logged(_ changes: [Change], in graph: ObjectGraph) -> [LoggedChange] {
        var entities: [ObjectID: String] = [:]
        return changes.compactMap { change in
            switch change {
            case .insert(let id, let entity, let attributes):
                entities[id] = entity
                return LoggedChange(op: .insert, id: id, entity: entity, attributes: attributes)
            case .update(let id, let attributes):
                guard let entity = entities[id] ?? graph[id]?.entity, !entity.isEmpty else { return nil }
                return LoggedChange(op: .update, id: id, entity: entity, attributes: attributes)
            case .delete(let id):
                entities[id] = nil
                return LoggedChange(op: .delete, id: id)
            }
        }
    }
}

/// The container format a device writes and, for format 2, the container identity its files
/// name in their header.
public struct LogFormat: Sendable, Hashable {
    public var version: Int
    public var container: UUID?

    public init(version: Int, container: UUID?) {
        self.version = version
        self.container = container
    }

    /// Format 1: JSON logs, every attribute last-writer-wins.
    public static let version1 = LogFormat(version: 1, container: nil)
}
