#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model
import Storage

// Publishing: a document's info file (and baseline) in the container, written ahead for a new one.
extension Replicator {
    /// Makes a document visible to peers: its info file, and (for a document that already has
    /// history, like one moved to the cloud) a baseline so a fresh peer can build it.
    ///
    /// `writingAhead`: a save of the document whose log (in its `outbox`) is written beside its
    /// slot while the info file is written (unless its commit wrote it ahead already), and
    /// returned for ``flush(_:in:after:)`` to put in place after it: logs never reach peers
    /// before the document's info file does. `info`: the info file written ahead by
    /// ``startPublishing(_:)``, put in place here without a sync of its folder, so that the
    /// first log can follow it at once: the caller calls ``finishPublishing(_:)`` after that
    /// log's flush.
    @discardableResult
    public func publish(
        _ info: DocumentInfo, store: any DocumentStore, baseline: Bool, writingAhead commit: LocalCommit? = nil, info infoAhead: RecordWriteAhead? = nil
    ) throws -> LogWriteAhead? {
        do {
            try container.checkAvailable()
        } catch {
            infoAhead?.discard()
            throw error
        }
        takeDocumentFolder(info.document)
        // Started once the folder is the one made ahead (taken just now): writing into it first
        // would make the folder and leave the one made ahead unused.
        let ahead = commit.flatMap { commit in
            commit.writeAhead
                ?? LogWriteAhead.starting(for: commit, container: container, document: info.document, device: device.id, preparingNext: preparesNextLog)
        }
        let url = container.infoURL(info.document, device: device.id)
        do {
            // The baseline before the info file: a document is published once its info file is
            // there, so a process killed in between leaves peers nothing rather than an empty
            // document that no later pass would fill (the next pass publishes it whole).
            if baseline { try writeBaseline(info.document, from: store) }
            if container.isPublished(info.document, by: device.id) {
                infoAhead?.discard()
            } else if let prepared = try? infoAhead?.take() {
                try container.placeRecord(prepared, syncingFolder: false)
            } else {
                try container.writeJSON(info, to: url)
            }
        } catch {
            ahead?.discard()
            throw error
        }
        return ahead
    }

    /// Starts publishing a new document while its first save commits: takes the document's
    /// folder in the container (the one made ahead, so the save can write its log ahead into
    /// it) and writes its info file under a temporary name on a thread of its own. Nothing is
    /// visible to peers before ``publish(_:store:baseline:writingAhead:info:)`` puts the info
    /// file in place, after the save committed: a process killed before then leaves a folder
    /// without an info file, which peers pass over and the device's next full pass removes
    /// (``removeAbandonedNewDocument(_:)``).
    public func startPublishing(_ info: DocumentInfo) throws(SyncError) -> RecordWriteAhead {
        try container.checkAvailable()
        takeDocumentFolder(info.document)
        let container = container
        let url = container.infoURL(info.document, device: device.id)
        return RecordWriteAhead { () throws(SyncError) in try container.prepareJSON(info, to: url) }
    }

    /// Undoes ``startPublishing(_:)`` for a new document that failed before its info file was
    /// put in place: the file written ahead is removed, so are the empty files the folder made
    /// ahead brought, and then the folder, only as far as it is empty: a file anyone else put
    /// there (a peer's, for a document created under a known UUID) stays, and so does its folder.
    public func abandonPublishing(_ document: DocumentID, _ ahead: RecordWriteAhead) {
        ahead.discard()
        let folder = container.documentDirectory(document)
        let logs = Container.logsDirectory(inDocumentFolder: folder, device: device.id)
        unlink(AtomicFile.spareTemporary(for: Container.infoURL(inDocumentFolder: folder, device: device.id)).path)
        for sequence: UInt64 in [1, 2] {
            unlink(AtomicFile.spareTemporary(for: logs.appendingPathComponent(Container.logFileName(sequence), isDirectory: false)).path)
        }
        for empty in [logs, logs.deletingLastPathComponent(), folder] { rmdir(empty.path) }
    }

    /// Removes what a `new` of this device killed before its info file went in place left in
    /// the container: `document`'s folder when it holds no info file and nothing but this
    /// device's temporary files (the info file and the first log written ahead, the standby and
    /// empty files made ahead), at least one of them written by a process that is gone and none
    /// by one that runs. Anything else in it (a peer's file, a log in its slot) leaves the
    /// folder alone. For a document this device has no record of; returns whether it went.
    @discardableResult
    public func removeAbandonedNewDocument(_ document: DocumentID) -> Bool {
        let folder = container.documentDirectory(document).path
        let own = device.id.description
        let infoName = Container.infoURL(inDocumentFolder: URL(fileURLWithPath: folder), device: device.id).lastPathComponent
        guard let top = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return false }
        var files: [String] = []
        var makers: [pid_t] = []
        for name in top {
            if name == "logs" { continue }
            if name == AtomicFile.spareTemporaryPath(forPath: infoName) {
                files.append(folder + "/" + name)
            } else if let maker = AtomicFile.preparedMaker(name, of: infoName) {
                files.append(folder + "/" + name)
                makers.append(maker)
            } else {
                return false
            }
        }
        let logs = folder + "/logs"
        let logFolders = top.contains("logs") ? ((try? FileManager.default.contentsOfDirectory(atPath: logs)) ?? [""]) : []
        guard logFolders.allSatisfy({ $0 == own }) else { return false }
        if !logFolders.isEmpty {
            let deviceLogs = logs + "/" + own
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: deviceLogs) else { return false }
            for name in names {
                let first = Container.logFileName(1)
                if name == AtomicFile.spareTemporaryPath(forPath: first) || name == AtomicFile.spareTemporaryPath(forPath: Container.logFileName(2)) {
                    files.append(deviceLogs + "/" + name)
                } else if let maker = AtomicFile.preparedMaker(name, of: first) ?? AtomicFile.standbyMaker(name) {
                    files.append(deviceLogs + "/" + name)
                    makers.append(maker)
                } else {
                    return false
                }
            }
        }
        guard !makers.isEmpty, !makers.contains(where: AtomicFile.isRunning) else { return false }
        for file in files { unlink(file) }
        for empty in [logs + "/" + own, logs, folder] { rmdir(empty) }
        return !FileManager.default.fileExists(atPath: folder)
    }

    /// Syncs the folder of a document published with its info file written ahead
    /// (``publish(_:store:baseline:writingAhead:info:)``): the info file's place is durable
    /// once this returns. Until then a power loss may undo its rename while keeping the first
    /// log's (on a file system that does not commit renames in order): the log is then never
    /// put in place by the device's next pass, which places only logs of documents whose
    /// info file is there (``Container/placeUnplacedLogs(_:device:_:bootedAt:refusing:)``).
    public func finishPublishing(_ document: DocumentID) throws(SyncError) {
        let folder = container.documentDirectory(document)
        do {
            try AtomicFile.syncDirectory(folder)
        } catch {
            throw SyncError(.writeFailed, path: folder.path, detail: error.description)
        }
    }
}
