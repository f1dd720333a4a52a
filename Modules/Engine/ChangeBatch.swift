import Foundation
import Model
import Sync

/// Collects what the watchers reported between two sync passes, so one pass covers them all:
/// the documents whose files changed, or "everything" when a change lies outside a document's
/// folder (identity, tombstones) or events were lost.
public struct ChangeBatch: Sendable, Equatable {
    public private(set) var documents: Set<DocumentID> = []
    public private(set) var everything = false
    /// The logs seen arriving, per document, for documents where nothing else changed: a pass
    /// imports just those (``DocumentLibrary/sync(documents:arrivals:firstImports:progress:)``)
    /// instead of listing the document's folders.
    public var arrivals: [DocumentID: [DeviceID: Set<UInt64>]] {
        arrived.filter { !otherChanges.contains($0.key) }
    }
    private var arrived: [DocumentID: [DeviceID: Set<UInt64>]] = [:]
    /// Documents with a change that is not an arrived log (an info file, a baseline, a copy).
    private var otherChanges: Set<DocumentID> = []

    public init(everything: Bool = false) { self.everything = everything }

    public var isEmpty: Bool { !everything && documents.isEmpty }

    /// Adds one document directly (a change seen in the device's own `Documents/<uuid>`).
    public mutating func insert(_ id: DocumentID) {
        documents.insert(id)
        otherChanges.insert(id)
    }

    /// Adds one watcher event seen in `container`. Files written by `device` (this device:
    /// its logs, info files, baselines, tombstones, identity) are skipped: every container file
    /// is written by one device only, so what this device wrote never needs importing here.
    public mutating func add(_ event: ContainerWatcher.Event, container: Container, ignoring device: DeviceID? = nil) {
        switch event {
        case .rescan:
            everything = true
        case .changed(let url):
            switch container.classify(url) {
            case .log(let id, let writer, let sequence):
                if let device, writer == device { return }
                documents.insert(id)
                arrived[id, default: [:]][writer, default: []].insert(sequence)
            case .document(let id, let writer):
                if let device, writer == device { return }
                documents.insert(id)
                otherChanges.insert(id)
            case .temporary:
                // It becomes a log (or baseline, info file) by a rename, reported in its turn.
                break
            case .registry, .folder:
                // Registry files only matter for pruning, done in full passes; a folder alone
                // holds nothing to import (its files are reported one by one).
                break
            case .containerWide(let writer):
                if let device, writer == device { return }
                everything = true
            }
        }
    }

    /// The argument for ``DocumentLibrary/sync(documents:progress:)``: nil for a full pass.
    public var target: Set<DocumentID>? { everything ? nil : documents }
}
