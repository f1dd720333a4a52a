import Foundation
import Model
import Sync

/// Collects what the container watcher reported between two sync passes, so one pass covers
/// them all: the documents whose files changed, or "everything" when a change lies outside a
/// document's folder (identity, tombstones, registry) or events were lost.
public struct ChangeBatch: Sendable, Equatable {
    public private(set) var documents: Set<DocumentID> = []
    public private(set) var everything = false

    public init(everything: Bool = false) { self.everything = everything }

    public var isEmpty: Bool { !everything && documents.isEmpty }

    /// Adds one document directly (a change seen in the device's own `Documents/<uuid>`).
    public mutating func insert(_ id: DocumentID) { documents.insert(id) }

    /// Adds one watcher event, seen under `container`. Files in `device`'s own names (its logs,
    /// info file and baselines) are skipped: every container file is written by one device
    /// only, so what this device wrote never needs importing here (a pass for it found nothing
    /// and delayed the next peer's log behind it).
    public mutating func add(_ event: ContainerWatcher.Event, container: URL, ignoring device: DeviceID? = nil) {
        switch event {
        case .rescan:
            everything = true
        case .changed(let url):
            let base = container.standardizedFileURL.path
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(base + "/") else { everything = true; return }
            let parts = path.dropFirst(base.count + 1).split(separator: "/")
            if parts.count >= 2, parts[0] == "documents", let id = DocumentID(String(parts[1])) {
                if let device, Self.isOwn(parts.dropFirst(2), device: device.description) { return }
                documents.insert(id)
            } else if parts.first == "devices" {
                // Registry files only matter for pruning, done in full passes.
            } else {
                everything = true
            }
        }
    }

    /// Whether the path below `documents/<uuid>/` is one of `device`'s own files.
    static func isOwn(_ rest: ArraySlice<Substring>, device: String) -> Bool {
        guard let first = rest.first else { return false }
        switch first {
        case "logs": return rest.dropFirst().first.map { $0 == device } ?? false
        case "baselines": return rest.dropFirst().first.map { $0.hasPrefix(device + "-") } ?? false
        default: return rest.count == 1 && first == "info-\(device).json"
        }
    }

    /// The argument for ``DocumentLibrary/sync(documents:)``: nil for a full pass.
    public var target: Set<DocumentID>? { everything ? nil : documents }
}
