import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import Text

// Copies of the container and of documents.
extension DocumentLibrary {
    // MARK: Copies

    /// Copies the container into `destination` for a bug report (CopyContainerOnSegue): its
    /// folders and regular files, each copy private to its user (0600, folders 0700). Links and
    /// special files (a FIFO would block the copy for ever) are not followed or read; sparse
    /// files (a peer's 1 GB hole filled the disk) and files over ``largestCopiedFile`` are not
    /// copied either. Each skipped one is returned with why, so the report can name it. A
    /// destination inside the container (the copy would copy itself) or holding it (making
    /// the destination would take the container away) is refused before anything is made.
    /// - Throws: ``EngineError/badPath(_:)`` for such a destination.
    @discardableResult
    public func copyContainer(to destination: URL) throws -> [QuarantinedFile] {
        guard let replicator else { throw EngineError.containerUnavailable("no container is configured") }
        do { try replicator.container.checkAvailable() } catch { throw EngineError.containerUnavailable("\(error)") }
        let source = FolderPlace(replicator.container.root), target = FolderPlace(destination)
        if target == source || target.isInside(source) {
            throw EngineError.badPath(
                "the copy's destination \(target.path) is inside the container \(source.path), so the copy would copy itself; "
                    + "give a folder outside the container")
        }
        if source.isInside(target) {
            throw EngineError.badPath(
                "the container \(source.path) is inside the copy's destination \(target.path); give a new folder outside the container")
        }
        try? FileManager.default.removeItem(at: destination)
        var skipped: [QuarantinedFile] = []
        do {
            try Self.copyTree(replicator.container.root, to: destination, skipped: &skipped)
        } catch {
            throw EngineError.io(destination.path, "\(error)")
        }
        return skipped
    }

    /// The largest file a container copy takes: the largest any container file may be (a
    /// baseline); anything larger is not a container file a reader would accept.
    public static let largestCopiedFile = Container.maximumBaselineSize

    static func copyTree(_ source: URL, to destination: URL, skipped: inout [QuarantinedFile], depth: Int = 0) throws {
        try AtomicFile.makeDirectory(destination)
        for name in try DirectoryHandle.names(at: source.path).sorted() {
            let from = source.appendingPathComponent(name, isDirectory: false), to = destination.appendingPathComponent(name, isDirectory: false)
            var info = stat()
            guard lstat(from.path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR where depth < 16: try copyTree(from, to: to, skipped: &skipped, depth: depth + 1)
            case S_IFREG:
                let size = Int64(info.st_size)
                // Allocated bytes below the size (in whole 4 KiB blocks, so a small file's
                // tail never counts): a file with holes, never written by multidoc.
                let allocated = Int64(info.st_blocks).multipliedReportingOverflow(by: 512).partialValue
                if size > Int64(largestCopiedFile) {
                    skipped.append(QuarantinedFile(url: from, reason: "\(size) bytes, over the \(largestCopiedFile)-byte limit of a copy; not copied"))
                } else if size - allocated >= 64 * 1024 {
                    skipped.append(QuarantinedFile(url: from, reason: "a sparse file (\(size) bytes, \(allocated) on disk); not copied"))
                } else {
                    try AtomicFile.write(try AtomicFile.read(from, limit: largestCopiedFile, followSymlinks: false), to: to, durability: .none)
                }
            default: skipped.append(QuarantinedFile(url: from, reason: "a link or special file, not copied"))
            }
        }
    }
}
