#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

extension Container {
    /// Tombstoned documents, with every valid tombstone found for each.
    func tombstones() -> [DocumentID: [DocumentTombstone]] { scanTombstones().tombstones }

    /// Every tombstone file, read: the valid ones per document, and the files that are not
    /// tombstones (damaged, the wrong shape, naming another document, a newer format, links,
    /// from a device that never registered). Each is judged by ``tombstone(named:registered:)``.
    ///
    /// A damaged tombstone is reported and not applied: deleting is final, so it must not rest
    /// on a file that may be a partial delivery or garbage. It is read again on the next pass.
    func scanTombstones() -> (tombstones: [DocumentID: [DocumentTombstone]], problems: [QuarantinedFile]) {
        var result: [DocumentID: [DocumentTombstone]] = [:]
        var problems: [QuarantinedFile] = []
        let registered = registeredDevices()
        for name in listNames(tombstonesDirectory) {
            switch tombstone(named: name, registered: registered) {
            case .valid(let tombstone): result[tombstone.document, default: []].append(tombstone)
            case .refused(let problem): problems.append(problem)
            }
        }
        return (result, problems)
    }

    /// The one rule for whether a file in `tombstones/` deletes a document: its name is
    /// `<document>.<device>.json`, it reads as a tombstone (signed by an admitted device, in a
    /// signed container), of a format this build knows, naming the document and device its
    /// name says, written by a registered device. Applying tombstones, discovery and `container
    /// verify` all ask it, so a file it refuses has no effect anywhere: it neither deletes a
    /// document nor hides one from a device that joins later.
    ///
    /// `registered`: the devices with a registry file, when the caller listed them (nil: looked up).
    func tombstone(named name: String, registered: Set<DeviceID>? = nil) -> TombstoneVerdict {
        let url = tombstonesDirectory.appendingPathComponent(name, isDirectory: false)
        func refused(_ reason: String, writer: DeviceID? = nil) -> TombstoneVerdict {
            // Its writer, or a device that applied it, writes it again once it is gone.
            .refused(QuarantinedFile(url: url, reason: reason, wayOut: writer.map { .replaceDamaged(writer: $0) }))
        }
        let parts = name.hasSuffix(".json") ? name.dropLast(5).split(separator: ".", omittingEmptySubsequences: false) : []
        guard parts.count == 2, let id = DocumentID(String(parts[0])), let device = DeviceID(String(parts[1])) else {
            return refused("not a tombstone name (<document>.<device>.json)")
        }
        // Only a device of this container supplies the file again; a name no device has is junk.
        let known = registered?.contains(device) ?? isRegistered(device)
        let unknown = known ? "" : "; its name's device \(device) never registered in this container: remove it"
        let tombstone: DocumentTombstone
        do {
            tombstone = try readJSON(url, limit: Self.maximumRecordSize)
        } catch {
            return refused(Self.isFolder(url)
                ? "a folder where a tombstone belongs; not applied: remove it or move it out of the container"
                : "not a tombstone, not applied (\(Self.summarize(error)))\(unknown)", writer: known ? device : nil)
        }
        guard tombstone.format <= Self.formatVersion else {
            return refused("format version \(tombstone.format) is newer than this build's \(Self.formatVersion)")
        }
        guard tombstone.document == id, tombstone.deletedBy == device else {
            return refused("names document \(tombstone.document) by \(tombstone.deletedBy), not what its name says\(unknown)", writer: known ? device : nil)
        }
        guard known else {
            return refused("written by device \(device), which never registered in this container; not applied")
        }
        return .valid(tombstone)
    }

    /// The tombstones of one document (cheaper than ``tombstones()`` for a targeted check).
    func tombstones(of id: DocumentID) -> [String] {
        listNames(tombstonesDirectory).filter { $0.hasPrefix("\(id).") && $0.hasSuffix(".json") }
    }
}

/// What ``Container/tombstone(named:registered:)`` decided about one file in `tombstones/`.
enum TombstoneVerdict {
    /// It deletes its document.
    case valid(DocumentTombstone)
    /// It has no effect, and why (reported by the pass that applies tombstones and by verify).
    case refused(QuarantinedFile)

    var tombstone: DocumentTombstone? {
        if case .valid(let tombstone) = self { return tombstone }
        return nil
    }
}
