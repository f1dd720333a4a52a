#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

/// What a document's folders hold, listed once: each device's logs, the baselines' names and
/// the conflict copies. An import plans, reports its progress and finds conflict copies from
/// one listing (it listed the same folders a dozen times, a fifth of the time an edit took to
/// reach another device).
public struct DocumentListing: Sendable {
    /// Each device's log sequences present, ascending (folders named by a device's UUID).
    public var logs: [DeviceID: [UInt64]] = [:]
    /// The names of the files in `baselines/` (ignored names left out).
    public var baselineNames: [String] = []
    /// Conflict copies in the document's folders (reported, never imported).
    public var conflictCopies: [URL] = []
    /// Each device's logs under the temporary names a save writes them by, with the sequence
    /// of the slot each goes to (``Container/placeUnplacedLogs(_:device:_:bootedAt:refusing:)``).
    var unplacedLogs: [DeviceID: [UnplacedLog]] = [:]
    /// Each device's empty files made for a save's log that a kill left (``AtomicFile/StandbyFile``),
    /// with the process that made each.
    var standbyFiles: [DeviceID: [(maker: pid_t, name: String)]] = [:]

    /// The devices with a log folder, in order.
    public var devices: [DeviceID] { logs.keys.sorted() }

    /// The largest coverage a baseline's name claims (``BaselineFileName``), from the names
    /// alone: whether a baseline may hold logs this device lacks, without reading one.
    var largestBaselineCoverage: UInt64? {
        baselineNames.compactMap { BaselineFileName.parse($0)?.coverage }.max()
    }
}

/// A device's log under the temporary name a save wrote it by, not in its slot (a power loss
/// undid the rename, a process was killed before it, or a process is about to make it).
struct UnplacedLog: Sendable {
    var sequence: UInt64
    /// The process that wrote it.
    var maker: pid_t
    var name: String
}

extension Container {
    /// One look at a document's folders (`<doc>/`, `logs/`, each `logs/<device>/`,
    /// `baselines/`), relative to the document's folder opened once. No link is followed and
    /// nothing deeper is read: a hostile tree cannot make it long.
    public func listing(_ id: DocumentID) -> DocumentListing {
        var listing = DocumentListing()
        let folder = documentDirectory(id)
        guard symlinkProblem(folder) == nil, let handle = DirectoryHandle(path: folder.path) else { return listing }
        func copies(_ names: [(name: String, isFolderOrUnknown: Bool)], in relative: String?) {
            for entry in names where ContainerFiles.isConflictCopy(entry.name) {
                let directory = relative.map { folder.appendingPathComponent($0, isDirectory: true) } ?? folder
                listing.conflictCopies.append(directory.appendingPathComponent(entry.name, isDirectory: false))
            }
        }
        copies(handle.entries(".", followLinks: false) ?? [], in: nil)
        let logs = handle.entries("logs", followLinks: false) ?? []
        copies(logs, in: "logs")
        for entry in logs where entry.isFolderOrUnknown && !ContainerFiles.isIgnored(entry.name) {
            let relative = "logs/" + entry.name
            let names = handle.entries(relative, followLinks: false) ?? []
            copies(names, in: relative)
            // Only the lower-case spelling is a device's folder (the one a log's path names).
            guard let device = DeviceID(entry.name), device.description == entry.name else { continue }
            listing.logs[device] = names.compactMap { Self.sequence(fromLogName: $0.name) }.sorted()
            let unplaced = names.compactMap { entry in
                Self.unplacedLog(fromName: entry.name).map { UnplacedLog(sequence: $0.sequence, maker: $0.maker, name: entry.name) }
            }
            if !unplaced.isEmpty { listing.unplacedLogs[device] = unplaced }
            let standby = names.compactMap { entry in AtomicFile.standbyMaker(entry.name).map { (maker: $0, name: entry.name) } }
            if !standby.isEmpty { listing.standbyFiles[device] = standby }
        }
        let baselines = handle.entries("baselines", followLinks: false) ?? []
        copies(baselines, in: "baselines")
        listing.baselineNames = baselines.map(\.name).filter { !ContainerFiles.isIgnored($0) }.sorted()
        listing.conflictCopies.sort { $0.path < $1.path }
        return listing
    }
}
