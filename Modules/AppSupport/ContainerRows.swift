import Engine
import Foundation
import Sync

/// What `multidoc container status` shows of the container (documented field names).
public struct ContainerStatusRow: Encodable, Sendable {
    public var path: String
    public var containerID: String?
    public var format: Int?
    public var devices: [String]
    public var documents: Int
    public var tombstones: Int
    public var logs: Int
    public var trust: TrustState?
    /// Files of the identity folder passed over (damaged): named with the way out.
    public var passedOver: [String]

    /// Reads the container's summary.
    /// - Throws: ``EngineError/containerFormat(_:)`` for a format this build does not read,
    ///   ``EngineError/containerUnavailable(_:)`` for a container it cannot read.
    public init(_ container: Container) throws(EngineError) {
        let summary: ContainerSummary
        do throws(SyncError) {
            summary = try container.summary()
        } catch {
            if case .unknownFormat = error.kind { throw .containerFormat(error.description) }
            throw .containerUnavailable(error.description)
        }
        path = container.root.path
        containerID = summary.identity?.containerID.uuidString.lowercased()
        format = summary.identity?.format
        devices = summary.devices.map { "\($0.name) (\($0.device))" }
        documents = summary.documents
        tombstones = summary.tombstones
        logs = summary.logs
        trust = summary.trust
        passedOver = summary.passedOver.map(\.description)
    }

    /// The row in words, one fact a line.
    public var lines: [String] {
        var lines = [
            "container:  \(path)",
            "identity:   \(containerID ?? "not seeded") format \(format.map(String.init) ?? "-")",
            "devices:    \(devices.joined(separator: ", "))",
            "documents:  \(documents) (\(logs) logs), tombstones: \(tombstones)",
        ]
        if let trust {
            lines.append("trust:      signed\(trust.encrypted ? " and encrypted" : ""), root \(trust.root); \(trust.admitted) admitted, "
                + "\(trust.askingToJoin) asking to join, \(trust.removed) removed ('multidoc device list')")
        } else {
            lines.append("trust:      not signed: anyone who can write into the folder is trusted ('multidoc container upgrade --sign')")
        }
        return lines + passedOver.map { "passed over: \($0)" }
    }
}

/// What `multidoc container verify` found (documented field names): every file read once,
/// conflict copies included, and this device's saves that cannot ship because another file
/// took their slot (the container is sound, the device is stuck, and the line says what gets
/// it out).
public struct ContainerCheck: Encodable, Sendable {
    public var checkedFiles: Int
    public var checkedLogs: Int
    public var problems: [String]
    /// Files not finished yet (not a problem).
    public var waiting: [String]

    /// Checks `container`; `stuck` are the device's stuck saves (``DocumentLibrary/stuckSaves()``).
    /// - Throws: ``EngineError/containerUnavailable(_:)`` when the container cannot be listed:
    ///   nothing was checked, so it is not a container with problems in it.
    public init(_ container: Container, stuck: [SyncProblem]) throws(EngineError) {
        problems = stuck.map(\.description)
        do throws(SyncError) {
            _ = try container.identity()
        } catch {
            if error.kind == .containerUnavailable { throw .containerUnavailable(error.description) }
            problems.append("\(error)")
        }
        let verification = container.verify()
        checkedFiles = verification.checkedFiles
        checkedLogs = verification.checkedLogs
        problems += verification.problems.map(\.description)
        waiting = verification.waiting.map(\.description)
    }

    /// The result in words.
    public var lines: [String] {
        ["checked \(checkedFiles) files (\(checkedLogs) logs): \(problems.isEmpty ? "all valid" : "\(problems.count) problems")"]
            + problems.map { "  \($0)" }
            + (waiting.isEmpty ? [] : ["\(waiting.count) not finished yet (not a problem):"])
            + waiting.map { "  \($0)" }
    }
}
