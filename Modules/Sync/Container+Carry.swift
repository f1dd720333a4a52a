#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

extension Container {
    /// Copies files of this container into `other`, as a replication engine would: the identity
    /// files, and what `device` wrote for `document` (its info file and its logs 1 through
    /// `sequence`). Files already there are left alone (write-once). For `multidoc-trace`, which
    /// gives every device a container folder of its own and carries logs between them in the
    /// order a trace's causal history says.
    /// - Throws: ``SyncError`` naming the file that could not be read or written.
    /// `after`: the logs up to it were carried before (only later ones are looked at).
    /// Carried files are not synced (the replay's, not a device's: see `copy`).
    public func carry(_ document: DocumentID, device: DeviceID, after carried: UInt64 = 0, through sequence: UInt64, to other: Container) throws(SyncError) {
        // Only a device that created the document has an info file.
        if carried == 0 { try copy(infoURL(document, device: device), to: other.infoURL(document, device: device), other: other, optional: true) }
        guard sequence > carried else { return }
        for number in (carried + 1)...sequence {
            try copy(logURL(document, device: device, sequence: number), to: other.logURL(document, device: device, sequence: number), other: other, optional: false)
        }
    }

    /// Copies every identity file into `other` (so its devices sync with the same container).
    public func carryIdentity(to other: Container) throws(SyncError) {
        for name in try names(in: identityDirectory) {
            try copy(identityDirectory.appendingPathComponent(name, isDirectory: false),
                     to: other.identityDirectory.appendingPathComponent(name, isDirectory: false), other: other, optional: false)
        }
    }

    /// A hard link where it can be (the file is written once, so both names hold the same
    /// bytes for good), a copy elsewhere. Neither is synced: what a device's saves rest on is
    /// its own log, made durable when it was written; a carried file is the replay's stand-in
    /// for a replication engine's copy, and a new inode and two syncs per log were most of
    /// what a replay spent carrying.
    private func copy(_ source: URL, to destination: URL, other: Container, optional: Bool) throws(SyncError) {
        if FileManager.default.fileExists(atPath: destination.path) { return }
        if optional, !FileManager.default.fileExists(atPath: source.path) { return }
        do {
            try AtomicFile.makeDirectory(destination.deletingLastPathComponent(), below: other.root)
            if link(source.path, destination.path) != 0 {
                let data = try readFile(source, limit: Self.maximumBaselineSize)
                if !FileManager.default.fileExists(atPath: destination.path) { try AtomicFile.write(data, to: destination, durability: .none) }
            }
        } catch {
            throw SyncError(.writeFailed, path: destination.path, detail: "could not carry \(source.path): \(error)")
        }
        other.didChangeFile(destination)
    }
}
