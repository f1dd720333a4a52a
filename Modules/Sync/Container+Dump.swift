import FileIO
import Foundation
import Model
import Text

extension Container {
    /// Any container file, of either format, as readable JSON (`multidoc container dump`):
    /// format 1 files as they are (a baseline's text states shown as their text), format 2
    /// files as their envelope header and decoded payload. Nothing is trusted: a file that
    /// cannot be read says why.
    /// - Throws: ``SyncError`` naming the file and the problem.
    public static func dump(fileAt url: URL) throws(SyncError) -> Data {
        let data: Data
        do {
            data = try AtomicFile.read(url, limit: maximumBaselineSize)
        } catch {
            throw SyncError(.malformedFile, path: url.path, detail: error.detail ?? error.description)
        }
        var output: [String: Any] = ["path": url.path, "bytes": data.count]
        if ContainerEnvelope.isEnvelope(data) {
            let envelope: ContainerEnvelope
            do {
                envelope = try ContainerEnvelope(decoding: Array(data), maximumPayload: maximumBaselineSize)
            } catch {
                throw SyncError(.malformedFile, path: url.path, detail: error.reason)
            }
            let header = envelope.header
            output["format"] = 2
            output["kind"] = envelope.kind.name
            output["signed"] = envelope.isSigned
            output["encrypted"] = envelope.isEncrypted
            // A checksum that does not match refused the file above ("damaged: checksum mismatch").
            output["checksum"] = envelope.isChecksummed ? "matches" : "none (written before checksums)"
            output["header"] = [
                "container": header.container.uuidString.lowercased(), "document": header.document.uuidString.lowercased(),
                "writer": header.writer.uuidString.lowercased(), "place": header.place, "writtenAt": header.writtenAt,
                "fingerprint": KeyFingerprint(bytes: header.fingerprint).description,
            ] as [String: Any]
            if envelope.isSigned {
                // Whether the writer was admitted, and the signature holds, is `container verify`'s to say.
                output["signature"] = "present, not checked here ('multidoc container verify' checks it against the admitted keys)"
            }
            if envelope.isEncrypted {
                output["payload"] = "sealed with the container key (\(envelope.payload.count) bytes)"
                return try serialize(output, url: url)
            }
            if envelope.kind == .baseline, Baseline.isBinary(envelope.payload) {
                do {
                    output["baseline"] = describe(try Baseline.decoded(envelope))
                } catch {
                    throw SyncError(.malformedFile, path: url.path, detail: error.reason)
                }
                return try serialize(output, url: url)
            }
            guard envelope.kind == .log else {
                // Records are JSON inside the envelope.
                if let object = try? JSONSerialization.jsonObject(with: Data(envelope.payload), options: [.fragmentsAllowed]) {
                    output["content"] = object
                } else {
                    output["payloadBytes"] = envelope.payload.count
                }
                return try serialize(output, url: url)
            }
            let log: TransactionLog
            do {
                log = try TransactionLog.decodeBinary(
                    data, document: DocumentID(header.document), device: DeviceID(header.writer), sequence: header.place, refusing: [])
            } catch {
                throw SyncError(.malformedFile, path: url.path, detail: error.reason)
            }
            output["log"] = describe(log)
            return try serialize(output, url: url)
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw SyncError(.malformedFile, path: url.path, detail: "not a container file: neither a format 2 file (no MDC2 magic) nor JSON")
        }
        output["format"] = (object as? [String: Any])?["format"] as? Int ?? 1
        var content = object
        // A baseline's text states are base64 bytes: show their text instead.
        if var baseline = object as? [String: Any], baseline["texts"] != nil,
           let decoded = try? decodeJSON(Baseline.self, from: data) {
            var texts: [String: Any] = [:]
            for (id, attributes) in decoded.texts ?? [:] {
                texts[id.rawValue] = attributes.mapValues { ["text": $0.text, "runs": $0.runCount, "pending": $0.pendingCount] as [String: Any] }
            }
            baseline["texts"] = texts
            content = baseline
        }
        output["content"] = content
        return try serialize(output, url: url)
    }

    static func describe(_ log: TransactionLog) -> [String: Any] {
        var result: [String: Any] = [
            "document": log.document.description, "device": log.device.description, "sequence": log.sequence,
            "stamp": log.stamp.description, "committedAt": log.committedAt.clampedMilliseconds, "deviceName": log.deviceName,
        ]
        if let dependencies = log.dependencies {
            result["dependencies"] = Dictionary(uniqueKeysWithValues: dependencies.map { ($0.key.description, $0.value) })
        }
        result["changes"] = log.changes.map { change -> [String: Any] in
            var entry: [String: Any] = ["op": change.op.rawValue, "id": change.id.rawValue]
            if let entity = change.entity { entry["entity"] = entity }
            if let attributes = change.attributes, !attributes.isEmpty {
                entry["attributes"] = attributes.mapValues(describe)
            }
            if let texts = change.texts {
                entry["texts"] = texts.mapValues { $0.map(describe) }
            }
            return entry
        }
        return result
    }

    static func describe(_ baseline: Baseline) -> [String: Any] {
        func stamps(_ stamps: [String: Stamp]) -> [String: String] { stamps.mapValues(\.description) }
        var result: [String: Any] = [
            "format": baseline.format, "document": baseline.document.description, "writtenBy": baseline.writtenBy.description,
            "writtenAt": baseline.writtenAt.clampedMilliseconds,
            "applied": Dictionary(uniqueKeysWithValues: baseline.applied.map { ($0.key.description, $0.value) }),
            "objects": Dictionary(uniqueKeysWithValues: baseline.objects.map { id, object in
                (id.rawValue, ["entity": object.entity, "attributes": object.attributes.mapValues(describe)] as [String: Any])
            }),
            "stamps": Dictionary(uniqueKeysWithValues: baseline.stamps.map { ($0.key.rawValue, stamps($0.value)) }),
            "tombstones": Dictionary(uniqueKeysWithValues: baseline.tombstones.map { ($0.key.rawValue, $0.value.description) }),
        ]
        if let texts = baseline.texts {
            result["texts"] = Dictionary(uniqueKeysWithValues: texts.map { id, attributes in
                (id.rawValue, attributes.mapValues { ["text": $0.text, "runs": $0.runCount, "pending": $0.pendingCount] as [String: Any] })
            })
        }
        return result
    }

    static func describe(_ value: AttributeValue) -> Any {
        switch value {
        case .string(let string): string
        case .date(let date): ["date": date.timeIntervalSince1970]
        case .int(let int): ["int": int]
        case .double(let double): ["double": double]
        case .bool(let bool): ["bool": bool]
        case .null: NSNull()
        }
    }

    static func describe(_ operation: TextOperation) -> [String: Any] {
        switch operation {
        case .insert(let insertion):
            return [
                "insert": insertion.text, "id": insertion.id.description,
                "after": insertion.originLeft?.description ?? NSNull(), "before": insertion.originRight?.description ?? NSNull(),
            ]
        case .delete(let ranges):
            return ["delete": ranges.map { ["agent": $0.agent.description, "from": $0.counters.lowerBound, "count": $0.counters.count] as [String: Any] }]
        }
    }

    private static func serialize(_ object: [String: Any], url: URL) throws(SyncError) -> Data {
        do {
            return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        } catch {
            throw SyncError(.malformedFile, path: url.path, detail: "cannot be shown as JSON: \(error)")
        }
    }
}
