#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

/// The shared container folder, as one device sees it. Layout and rules are in
/// Docs/CONTAINER-FORMAT.md; in short, every file is written once, by one device, under a name
/// no other device writes, atomically.
///
/// ```
/// <container>/
///   identity/<deviceID>.json                           ContainerIdentity (seeding device)
///   devices/<deviceID>.json                            DeviceRecord (replaced by its owner only)
///   documents/<docID>/info-<deviceID>.json             DocumentInfo (creator; once)
///   documents/<docID>/logs/<deviceID>/<seq>.log         TransactionLog (seq: 16 digits)
///   documents/<docID>/baselines/<deviceID>-<n>.json     Baseline
///   tombstones/<docID>.<deviceID>.json                  DocumentTombstone
/// ```
public struct Container: Sendable {
    /// The newest container format this build reads, and the one it seeds new containers with.
    /// Format 2 (Docs/CONTAINER-FORMAT.md) writes logs as binary envelopes whose changes may
    /// carry text operations; a container of format 1 keeps format 1 logs until
    /// `multidoc container upgrade` moves it.
    public static let formatVersion = 2
    /// The version of info, tombstone and registry records: their shape is the same in both
    /// formats, so devices of either read them.
    public static let recordFormat = 1

    public let root: URL
    /// `root`'s path, and that path with "." and ".." resolved: kept, since the checks of every
    /// save's and import's files start from them.
    let rootPath: String
    let standardRootPath: String
    /// Told about every file this device writes or removes in the container, after the change
    /// is durable (for example to nudge a replication engine). Nil: nobody is told.
    public let writeObserver: (any ContainerWriteObserver)?
    /// The device's keys and the container's policy (signed, admitted devices, encrypted).
    /// Nil: a view that neither signs nor checks signatures (tools, dumps, copies).
    public let keys: ContainerKeys?

    /// - Parameters:
    ///   - root: the container folder.
    ///   - writeObserver: told the path (relative to `root`) of every file written or removed.
    ///   - keys: the device's keys, for a container that may be signed or encrypted.
    public init(root: URL, writeObserver: (any ContainerWriteObserver)? = nil, keys: ContainerKeys? = nil) {
        self.root = root
        rootPath = root.path
        standardRootPath = root.standardizedFileURL.path
        self.writeObserver = writeObserver
        self.keys = keys
    }

    /// `url`'s path relative to the container root (`documents/<uuid>/logs/<device>/<seq>.log`),
    /// or nil for a path outside the container.
    public func relativePath(of url: URL) -> String? {
        let base = standardRootPath
        let path = Self.standardPath(of: url)
        guard path.hasPrefix(base + "/") else { return nil }
        return String(path.dropFirst(base.count + 1))
    }

    func didChangeFile(_ url: URL) { didChange(url) }

    private func didChange(_ url: URL) {
        guard let writeObserver, let relative = relativePath(of: url) else { return }
        writeObserver.containerDidChange(relative)
    }

    // MARK: Paths

    public var identityDirectory: URL { root.appendingPathComponent("identity", isDirectory: false) }
    public var devicesDirectory: URL { root.appendingPathComponent("devices", isDirectory: false) }
    public var documentsDirectory: URL { root.appendingPathComponent("documents", isDirectory: false) }
    public var tombstonesDirectory: URL { root.appendingPathComponent("tombstones", isDirectory: false) }

    public func documentDirectory(_ id: DocumentID) -> URL { documentsDirectory.appendingPathComponent(id.description, isDirectory: false) }
    /// A device's next document folder, made ahead (``Replicator/prepareDocumentFolder()``): a
    /// dot name, which every reader skips.
    public func spareDocumentDirectory(device: DeviceID) -> URL {
        documentsDirectory.appendingPathComponent(".spare-\(device)", isDirectory: false)
    }
    public func infoURL(_ id: DocumentID, device: DeviceID) -> URL {
        Self.infoURL(inDocumentFolder: documentDirectory(id), device: device)
    }
    /// Whether any device's info file of the document is in its folder (it is published).
    func hasInfoFile(_ id: DocumentID) -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: documentDirectory(id).path)) ?? []
        return names.contains { $0.hasPrefix("info-") && $0.hasSuffix(".json") }
    }
    public func logsDirectory(_ id: DocumentID, device: DeviceID) -> URL {
        Self.logsDirectory(inDocumentFolder: documentDirectory(id), device: device)
    }
    static func infoURL(inDocumentFolder folder: URL, device: DeviceID) -> URL {
        folder.appendingPathComponent("info-\(device).json", isDirectory: false)
    }
    static func logsDirectory(inDocumentFolder folder: URL, device: DeviceID) -> URL {
        folder.appendingPathComponent("logs", isDirectory: false).appendingPathComponent(device.description, isDirectory: false)
    }
    public func logURL(_ id: DocumentID, device: DeviceID, sequence: UInt64) -> URL {
        logsDirectory(id, device: device).appendingPathComponent(Self.logFileName(sequence), isDirectory: false)
    }
    /// ``logURL(_:device:sequence:)``'s path, built without a URL (every import reads logs by it).
    func logPath(_ id: DocumentID, device: DeviceID, sequence: UInt64) -> String {
        logsPath(id, device: device) + "/" + Self.logFileName(sequence)
    }
    /// ``logsDirectory(_:device:)``'s path, built without a URL (a save's log is written by it).
    func logsPath(_ id: DocumentID, device: DeviceID) -> String {
        rootPath + "/documents/" + id.description + "/logs/" + device.description
    }
    public func baselinesDirectory(_ id: DocumentID) -> URL { documentDirectory(id).appendingPathComponent("baselines", isDirectory: false) }
    public func tombstoneURL(_ id: DocumentID, device: DeviceID) -> URL {
        tombstonesDirectory.appendingPathComponent("\(id).\(device).json", isDirectory: false)
    }
    public func deviceRecordURL(_ device: DeviceID) -> URL { devicesDirectory.appendingPathComponent("\(device).json", isDirectory: false) }

    static func logFileName(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits + ".log"
    }

    private static let logSuffix = Array(".log".utf8)

    /// The sequence of a finished log's name (16 decimal digits, `.log`), or nil. Such a name is
    /// never a temporary, backup or conflict name, so readers need no other check.
    static func sequence(fromLogName name: String) -> UInt64? {
        var value: UInt64 = 0
        var count = 0
        for byte in name.utf8 {
            if count < 16 {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflowSum) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                guard !overflowTimes, !overflowSum else { return nil }
                value = sum
            } else if count >= 20 || byte != logSuffix[count - 16] {
                return nil
            }
            count += 1
        }
        return count == 20 && value > 0 && value <= ContainerBounds.maximumSequence ? value : nil
    }

    /// The sequence of a log's slot and the process that wrote it, from the temporary name a
    /// save writes the log by before it puts it there (`.tmp-<slot>.<process>.<number>`), or
    /// nil for any other name.
    static func unplacedLog(fromName name: String) -> (sequence: UInt64, maker: pid_t)? {
        guard name.utf8.first == UInt8(ascii: "."), name.hasPrefix(AtomicFile.temporaryPrefix) else { return nil }
        let slot = String(decoding: name.utf8.dropFirst(AtomicFile.temporaryPrefix.utf8.count).prefix(20), as: UTF8.self)
        guard let sequence = sequence(fromLogName: slot), let maker = AtomicFile.preparedMaker(name, of: slot) else { return nil }
        return (sequence, maker)
    }

    // MARK: Reading

    /// Names in a folder, without ignored names, sorted; a folder that does not exist has none.
    /// - Throws: ``SyncError/Kind/containerUnavailable`` naming the folder when it is there but
    ///   cannot be listed (no permission, a file where the folder belongs, a symbolic link on
    ///   its path): for readers that must not take such a folder for an empty one.
    func names(in url: URL) throws(SyncError) -> [String] {
        if let problem = symlinkProblem(url) { throw SyncError(.containerUnavailable, path: url.path, detail: problem) }
        do {
            return try DirectoryHandle.names(at: url.path).filter { !ContainerFiles.isIgnored($0) }.sorted()
        } catch {
            throw SyncError(.containerUnavailable, path: url.path, detail: error.detail ?? "cannot list it: \(error.description)")
        }
    }

    /// Names in a folder, without ignored names, sorted. Missing folder, or a folder reached
    /// through a symbolic link: empty. For readers that may miss a folder they cannot list
    /// (``names(in:)`` throws instead).
    func listNames(_ url: URL) -> [String] {
        guard symlinkProblem(url) == nil else { return [] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [])
            .filter { !ContainerFiles.isIgnored($0) }
            .sorted()
    }

    // MARK: Confinement and limits

    /// The largest identity, registry, info or tombstone file a reader accepts.
    public static let maximumRecordSize = 1024 * 1024
    /// The largest registry file a reader accepts, and the largest a device writes: about 100
    /// bytes a document, so a device with more than 10,000 documents outgrew the record limit
    /// and every peer ignored its registration (its logs were never pruned).
    public static let maximumRegistrySize = 64 * 1024 * 1024
    /// The largest baseline a reader accepts.
    public static let maximumBaselineSize = 128 * 1024 * 1024

    /// Why `url` must not be used, if one of its components below the container's root is a
    /// symbolic link (or the path is not inside the container at all). Nothing is ever read,
    /// written or removed through a link: a link to `/etc/passwd` or to another folder would
    /// let a hostile container reach outside itself.
    public func symlinkProblem(_ url: URL) -> String? {
        symlinkProblem(standardPath: Self.standardPath(of: url))
    }

    /// ``symlinkProblem(_:)`` of a path already without "." or ".." components.
    func symlinkProblem(standardPath path: String) -> String? {
        let base = standardRootPath
        guard path == base || path.hasPrefix(base.hasSuffix("/") ? base : base + "/") else {
            return "\(path) is outside the container"
        }
        var current = base
        for component in path.dropFirst(base.count).split(separator: "/") {
            current += (current.hasSuffix("/") ? "" : "/") + component
            var info = stat()
            guard lstat(current, &info) == 0 else { return nil }  // the rest does not exist yet
            if (info.st_mode & S_IFMT) == S_IFLNK {
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: current)) ?? "?"
                return "\(current) is a symbolic link (to \(target)); links in the container are never followed"
            }
        }
        return nil
    }

    /// Reads a file of the container: no symbolic links on the way, at most `limit` bytes.
    func readFile(_ url: URL, limit: Int) throws(FileIOError) -> Data {
        try readFile(path: url.path, limit: limit)
    }

    /// ``readFile(_:limit:)`` of a path (every log an import reads: no URL built for it).
    func readFile(path: String, limit: Int) throws(FileIOError) -> Data {
        Data(try readBytes(path: path, limit: limit))
    }

    /// ``readFile(path:limit:)``'s bytes as they were read (a log's and a baseline's reader
    /// decodes them with no copy into `Data` and back).
    func readBytes(path: String, limit: Int) throws(FileIOError) -> [UInt8] {
        if let problem = symlinkProblem(standardPath: Self.standardPath(ofPath: path)) {
            throw FileIOError(path: path, operation: "read", errno: ELOOP, detail: problem)
        }
        return try AtomicFile.readBytes(path: path, limit: limit, followSymlinks: false)
    }

    /// `url`'s path with "." and ".." resolved (`standardizedFileURL`), with no URL built when
    /// it has neither (nor a doubled slash): the usual path, which the container made.
    static func standardPath(of url: URL) -> String {
        standardPath(ofPath: url.path)
    }

    /// ``standardPath(of:)`` of a path.
    static func standardPath(ofPath path: String) -> String {
        // Bytes compared, not Foundation's `contains` (a string search through CFString, which
        // every log read and written paid).
        var previous: UInt8 = 0
        var plain = true
        for byte in path.utf8 {
            if previous == UInt8(ascii: "/"), byte == UInt8(ascii: ".") || byte == UInt8(ascii: "/") {
                plain = false
                break
            }
            previous = byte
        }
        if plain { return path }
        return URL(fileURLWithPath: path, isDirectory: false).standardizedFileURL.path
    }

    /// Whether `url` is a folder itself (not a link to one).
    static func isFolder(_ url: URL) -> Bool { isFolder(path: url.path) }

    /// ``isFolder(_:)`` of a path.
    static func isFolder(path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
