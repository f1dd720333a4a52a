#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

extension Container {
    /// Baselines of a document with their file URLs, largest coverage first.
    func baselines(_ id: DocumentID) -> [(url: URL, baseline: Baseline)] {
        listNames(baselinesDirectory(id))
            .filter { BaselineFileName.parse($0) != nil }
            .compactMap { name -> (URL, Baseline)? in
                let url = baselinesDirectory(id).appendingPathComponent(name, isDirectory: false)
                guard let baseline = try? readBaseline(url), baseline.document == id,
                      baseline.format <= Self.formatVersion, baseline.problem() == nil else { return nil }
                return (url, baseline)
            }
            .sorted { $0.1.coverage > $1.1.coverage }
    }

    /// A baseline file of either form, checked against where it lies: JSON (format 1, or a
    /// signed container's envelope around JSON) or a format 2 envelope around the binary payload
    /// (``Baseline/envelope(container:)``).
    func readBaseline(_ url: URL) throws -> Baseline {
        let bytes = try readBytes(path: url.path, limit: Self.maximumBaselineSize)
        guard ContainerEnvelope.isEnvelope(bytes) else { return try Self.decodeJSON(Baseline.self, from: try openRecord(Data(bytes), at: url)) }
        guard let place = filePlace(of: url), place.kind == .baseline else { throw LogDecodingError(reason: "not a baseline's place in the container") }
        let envelope = try open(
            bytes, kind: .baseline, document: place.document, writer: place.writer, place: place.place, maximumPayload: bytes.count)
        if Baseline.isBinary(envelope.payload) { return try Baseline.decoded(envelope) }
        return try Self.decodeJSON(Baseline.self, from: Data(envelope.payload))
    }

    /// The names of `device`'s baselines of a document, of either form (none read).
    func baselineNames(_ id: DocumentID, by device: DeviceID) -> [String] {
        listNames(baselinesDirectory(id)).filter { BaselineFileName.parse($0)?.writer == device }
    }

    /// Whether a file (or anything) is at the path of a log (one `lstat`).
    public func hasLog(_ id: DocumentID, device: DeviceID, sequence: UInt64) -> Bool {
        var info = stat()
        return lstat(logPath(id, device: device, sequence: sequence), &info) == 0
    }

    /// Why `baseline` cannot stand for the last log it claims of a device while that log is in
    /// the container (it does not hold what the log did), or nil. Imports and `verify` ask the same.
    func reflectionProblem(_ baseline: Baseline, refusing: Set<UUID> = []) -> String? {
        for (origin, sequence) in baseline.applied.sorted(by: { $0.key < $1.key }) where sequence > 0 {
            guard let log = try? readLog(baseline.document, device: origin, sequence: sequence, refusing: refusing) else { continue }
            if !baseline.reflects(log) {
                return "it claims log \(sequence) of device \(origin) but does not hold what that log did"
            }
        }
        return nil
    }

    /// Reads and validates one log file.
    ///
    /// The log's stamp is taken as every reader takes it (``ContainerBounds/clamped(_:)``),
    /// whatever this device's clock says.
    /// `refusing`: container identities a format 2 log must not name (replaced by a reset).
    public func readLog(
        _ id: DocumentID, device: DeviceID, sequence: UInt64, refusing: Set<UUID> = []
    ) throws(LogDecodingError) -> TransactionLog {
        let bytes: [UInt8]
        do {
            bytes = try readBytes(path: logPath(id, device: device, sequence: sequence), limit: TransactionLog.maximumFileSize)
        } catch {
            throw LogDecodingError(reason: error.detail ?? error.description)
        }
        return try decodeLog(bytes: bytes, id, device: device, sequence: sequence, refusing: refusing)
    }

    /// Validates and decodes the bytes of one log (``readLog(_:device:sequence:refusing:)``
    /// without the file: a log still in a device's outbox).
    public func decodeLog(
        _ data: Data, _ id: DocumentID, device: DeviceID, sequence: UInt64, refusing: Set<UUID> = []
    ) throws(LogDecodingError) -> TransactionLog {
        try decodeLog(bytes: Array(data), id, device: device, sequence: sequence, refusing: refusing)
    }

    func decodeLog(
        bytes: [UInt8], _ id: DocumentID, device: DeviceID, sequence: UInt64, refusing: Set<UUID>
    ) throws(LogDecodingError) -> TransactionLog {
        var log: TransactionLog
        if ContainerEnvelope.isEnvelope(bytes) {
            let envelope = try open(
                bytes, kind: .log, document: id.uuid, writer: device, place: sequence, maximumPayload: TransactionLog.maximumFileSize,
                refusing: refusing)
            log = try TransactionLog.decoded(envelope, document: id, device: device, sequence: sequence)
        } else {
            if let keys, keys.policy.isSigned { throw LogDecodingError(reason: "refused: unsigned, in a signed container (claimed writer \(device))") }
            log = try TransactionLog.decode(Data(bytes), document: id, device: device, sequence: sequence, refusing: refusing)
        }
        log.stamp = ContainerBounds.clamped(log.stamp)
        return log
    }
}
