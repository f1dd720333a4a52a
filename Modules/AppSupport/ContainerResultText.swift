import Engine
import Foundation
import Model
import Sync

// What the container verbs that change it say, in words: the rows are the engine's results.

extension ContainerUpgrade {
    /// Why the container was not moved (a registered device does not read format 2), or nil.
    public var refusal: AppError? {
        guard !upgraded, !already else { return nil }
        let one = devicesNotReady.count == 1
        return AppError(.containerFormat, "not moved: \(devicesNotReady.joined(separator: ", ")) \(one ? "is" : "are") not known to read format 2; "
            + "update \(one ? "it" : "them") and run `multidoc sync` there, or add --force")
    }

    /// `container upgrade` in words.
    public var lines: [String] {
        if already { return ["the container is already of format \(format)"] }
        return ["moved the container to format \(format): text edits made on several devices at once now merge"]
            + (devicesNotReady.isEmpty ? [] : ["these devices must be updated before they sync again: \(devicesNotReady.joined(separator: ", "))"])
    }
}

extension ContainerSecuring {
    /// Why the container was not signed (a registered device cannot sign), or nil.
    public var refusal: AppError? {
        guard !signed else { return nil }
        let one = devicesNotReady.count == 1
        return AppError(.containerFormat, "not moved: \(devicesNotReady.joined(separator: ", ")) \(one ? "runs a build" : "run builds") that cannot sign; "
            + "update \(one ? "it" : "them") and run `multidoc sync` there, or add --force")
    }

    /// `container upgrade --sign/--encrypt` in words.
    public var lines: [String] {
        var lines = ["the container is signed\(encrypted ? " and encrypted" : ""); its root is this device, fingerprint \(root)"]
        if !waitingForAdmission.isEmpty {
            lines.append("asking to join (compare each fingerprint on that device, then 'multidoc device admit FINGERPRINT'):")
            lines += waitingForAdmission.map { "  \($0)" }
        }
        if encrypted { lines.append("other devices run 'multidoc container unlock' with the passphrase") }
        return lines
    }
}

/// `multidoc container repair`: one document's outcome (documented field names).
public struct RepairRow: Encodable, Sendable {
    public var name: String
    public var repaired: Bool
    public var gaps: [String]
    public var detail: String

    /// The row of one repair outcome.
    public init(_ repair: GapRepair) {
        name = repair.name
        repaired = repair.repaired
        gaps = repair.gaps.map(\.description)
        detail = repair.detail
    }
}

extension GapRepair {
    /// The outcome in one line: what is missing, and what was done or is to be done.
    public var line: String {
        let missing = gaps.map { "\($0) (log \($0.nextPresent) is there)" }.joined(separator: ", ")
        return "\(name): \(repaired ? "repaired" : "not repaired"): missing \(missing); \(detail)"
    }
}

extension DeviceList {
    /// `device list` in words.
    public var lines: [String] {
        var lines = [
            "this device: \(thisDevice), fingerprint \(thisFingerprint ?? "none (no usable device key)")",
            signed ? "container: signed\(encrypted ? " and encrypted" : ""), root \(root ?? "?")"
                : "container: not signed (anyone who can write into it is trusted; 'multidoc container upgrade --sign' signs it)",
        ]
        if let keyProblem { lines.insert("  \(keyProblem)", at: 1) }
        lines += devices.map { "  \($0.fingerprint ?? "(no key)")  \($0.name)  \($0.device.prefix(8))  \($0.state)" + ($0.warning.map { "  (careful: \($0))" } ?? "") }
        lines += problems.map { "  not trusted: \($0)" }
        if devices.contains(where: { $0.state == "asks to join" }) {
            lines.append("admit one with 'multidoc device admit FINGERPRINT' after comparing it on that device")
        }
        return lines
    }
}

/// `device new-identity --json` (documented field names).
public struct NewIdentityRow: Encodable, Sendable {
    public var old: String
    public var new: String
    public var resaved: [String]
    public var saves: Int
    /// The new key's fingerprint (null when a change cut short is finished).
    public var fingerprint: String?

    /// The row of what taking a new identity did.
    public init(_ report: NewIdentityReport) {
        (old, new, resaved, saves) = (report.old.description, report.new.description, report.resaved, report.saves)
        fingerprint = report.newFingerprint?.description
    }
}
