import Foundation
import Model
import Text

/// Format 2's log payload (Docs/CONTAINER-FORMAT.md, "Format 2"): LEB128 varints and
/// length-prefixed UTF-8, read by hand with every count capped (no `JSONDecoder` on the import
/// path). The document, device and sequence are the envelope header's.
///
/// ```
/// stamp wall, stamp counter, committedAt (ms), device name,
/// dependency count, (device UUID, sequence)…, change count, changes
/// change: tag (1 insert, 2 update, 3 delete), object id,
///         [insert, update] entity, attribute count, (name, value)…, text count, (name, operation count, operations)…
/// value:  0 null, 1 string, 2 date (seconds, 8-byte IEEE 754), 3 int (zigzag varint),
///         4 double (8 bytes), 5 false, 6 true
/// ```
extension TransactionLog {
    static let maximumNameLength = 4096

    /// The log as a format 2 file (the envelope around the binary payload), unsigned.
    /// `container`: the identity of the container it is written for (zeros when unknown).
    public func binaryEncoded(container: UUID?) -> Data { Data(envelope(container: container).encoded) }

    /// The envelope around the log's binary payload, to be signed by ``Container/seal(_:)``.
    public func envelope(container: UUID?) -> ContainerEnvelope {
        var writer = ByteWriter()
        writer.varint(stamp.wall)
        writer.varint(UInt64(stamp.counter))
        writer.varint(UInt64(clamping: committedAt.clampedMilliseconds))
        writer.string(deviceName)
        let dependencies = (dependencies ?? [:]).sorted { $0.key < $1.key }
        writer.varint(dependencies.count)
        for (device, sequence) in dependencies {
            writer.uuid(device.uuid)
            writer.varint(sequence)
        }
        writer.varint(changes.count)
        for change in changes {
            switch change.op {
            case .insert: writer.byte(1)
            case .update: writer.byte(2)
            case .delete: writer.byte(3)
            }
            writer.string(change.id.rawValue)
            guard change.op != .delete else { continue }
            writer.string(change.entity ?? "")
            let attributes = (change.attributes ?? [:]).sorted { $0.key < $1.key }
            writer.varint(attributes.count)
            for (name, value) in attributes {
                writer.string(name)
                writer.value(value)
            }
            let texts = (change.texts ?? [:]).sorted { $0.key < $1.key }
            writer.varint(texts.count)
            for (name, operations) in texts {
                writer.string(name)
                writer.varint(operations.count)
                for operation in operations { operation.write(to: &writer) }
            }
        }
        let header = ContainerEnvelope.Header(
            container: container ?? ContainerEnvelope.zero, document: document.uuid, writer: device.uuid, place: sequence,
            writtenAt: UInt64(clamping: committedAt.clampedMilliseconds))
        return ContainerEnvelope(kind: .log, header: header, payload: writer.bytes)
    }

    /// Reads a format 2 log file and checks its header against where it lies.
    static func decodeBinary(
        _ data: Data, document: DocumentID, device: DeviceID, sequence: UInt64, refusing: Set<UUID>
    ) throws(LogDecodingError) -> TransactionLog {
        let envelope = try ContainerEnvelope(decoding: Array(data), maximumPayload: maximumFileSize)
        try envelope.check(kind: .log, refusing: refusing, document: document.uuid, writer: device.uuid, place: sequence)
        guard !envelope.isEncrypted else { throw LogDecodingError(reason: "encrypted; read it through its container, which holds the key") }
        return try decoded(envelope, document: document, device: device, sequence: sequence)
    }

    /// The log in an envelope already checked (and opened) by its container.
    static func decoded(
        _ envelope: ContainerEnvelope, document: DocumentID, device: DeviceID, sequence: UInt64
    ) throws(LogDecodingError) -> TransactionLog {
        var reader = ByteReader(envelope.payload)
        do {
            let wall = try reader.varint()
            let counterOffset = reader.offset
            let counterValue = try reader.varint()
            guard let counter = UInt32(exactly: counterValue) else { throw TextDecodingError.tooLarge(offset: counterOffset, value: counterValue) }
            let committed = try reader.varint()
            let deviceName = try reader.string(maximum: maximumNameLength)
            // Each dependency takes at least 17 bytes.
            let dependencyCount = try reader.count(maximum: reader.remaining / 17)
            var dependencies: [DeviceID: UInt64] = [:]
            for _ in 0..<dependencyCount {
                let other = DeviceID(try reader.uuid())
                let sequenceOffset = reader.offset
                let needed = try reader.varint()
                guard needed <= ContainerBounds.maximumSequence else { throw TextDecodingError.tooLarge(offset: sequenceOffset, value: needed) }
                // Its own device only to say which of its logs it follows, when that is not the
                // one just before it (it stepped over slots that files not its own took).
                guard other != device || needed + 1 < sequence else { throw LogDecodingError(reason: "depends on its own device's logs") }
                dependencies[other] = needed
            }
            // Every change takes at least two bytes.
            let count = try reader.count(maximum: reader.remaining / 2)
            var changes: [LoggedChange] = []
            changes.reserveCapacity(count)
            for _ in 0..<count {
                let tagOffset = reader.offset
                let tag = try reader.byte()
                let id = ObjectID(try reader.string(maximum: maximumNameLength))
                switch tag {
                case 3:
                    changes.append(LoggedChange(op: .delete, id: id))
                case 1, 2:
                    let entity = try reader.string(maximum: maximumNameLength)
                    guard !entity.isEmpty else {
                        throw LogDecodingError(reason: "\(tag == 1 ? "insert" : "update") of \(id) lacks its entity")
                    }
                    let attributeCount = try reader.count(maximum: reader.remaining / 2)
                    var attributes: [String: AttributeValue] = [:]
                    for _ in 0..<attributeCount {
                        let name = try reader.string(maximum: maximumNameLength)
                        attributes[name] = try reader.value(maximumString: maximumFileSize)
                    }
                    let textCount = try reader.count(maximum: reader.remaining / 2)
                    var texts: [String: [TextOperation]] = [:]
                    for _ in 0..<textCount {
                        let name = try reader.string(maximum: maximumNameLength)
                        let operationCount = try reader.count(maximum: reader.remaining / 2)
                        var operations: [TextOperation] = []
                        operations.reserveCapacity(operationCount)
                        for _ in 0..<operationCount { operations.append(try TextOperation.read(from: &reader)) }
                        texts[name] = operations
                    }
                    changes.append(LoggedChange(
                        op: tag == 1 ? .insert : .update, id: id, entity: entity, attributes: attributes,
                        texts: texts.isEmpty ? nil : texts))
                default:
                    throw TextDecodingError.unknownTag(offset: tagOffset, tag: tag)
                }
            }
            try reader.finish()
            var log = TransactionLog(
                document: document, device: device, sequence: sequence, stamp: Stamp(wall: wall, counter: counter, device: device),
                committedAt: Date(timeIntervalSince1970: Double(min(committed, 1 << 52)) / 1000), deviceName: deviceName, changes: changes)
            log.format = 2
            log.dependencies = dependencies
            return log
        } catch let error as LogDecodingError {
            throw error
        } catch {
            throw LogDecodingError(reason: "malformed log: \(error)")
        }
    }
}
