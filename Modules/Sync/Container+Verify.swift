#if canImport(Glibc)
import Glibc
#endif
import FileIO
import Foundation
import Model

/// What ``Container/verify()`` found: how much it read, and every file that is not what the
/// container format says it should be.
public struct ContainerVerification: Sendable {
    /// Files read and checked (identity, registry, info, log, baseline and tombstone files).
    public var checkedFiles = 0
    /// Transaction logs among them.
    public var checkedLogs = 0
    /// Each bad file (or gap, link, stray name) with the reason, in path order.
    public var problems: [QuarantinedFile] = []
    /// Folders that are not finished yet but not wrong either: a document folder whose info
    /// file has not arrived (a create in progress, a process killed before it wrote the file,
    /// or a replication engine that delivered the folder's other files first). Sync passes
    /// wait for them; they are reported, not counted as problems.
    public var waiting: [QuarantinedFile] = []

    public init() {}
}

extension Container {
    /// Reads every file in the container and checks it against Docs/CONTAINER-FORMAT.md:
    /// identities, the registry, each document's info files, logs (decoded and checked
    /// against their path; no gaps), baselines and tombstones; names that belong nowhere;
    /// conflict copies; symbolic links and special files (reported, never followed). Reads
    /// nothing larger than the format's limits and changes nothing.
    public func verify() -> ContainerVerification {
        // Linear in the files apart from one sort: every problem is recorded once (a set), and
        // sorted by its path string computed once. Merging lists with `contains` made 100,000
        // files in one folder take 316 s.
        var result = ContainerVerification()
        var found: Set<QuarantinedFile> = []
        func problem(_ url: URL, _ reason: String) { found.insert(QuarantinedFile(url: url, reason: reason)) }

        // Links and special files anywhere (the walk does not follow links).
        walk(root, unlistable: problem) { url, kind in
            switch kind {
            case .link:
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) ?? "?"
                problem(url, "symbolic link to \(target); links in the container are never followed: replace it with what it points to, or remove it")
            case .special: problem(url, "a special file (FIFO, socket or device), not a regular file or folder; never opened: remove it")
            case .file, .folder: break
            }
        }

        // What lies beside the format's four folders: no device reads it (dot names are
        // temporary files and the replication engine's own, such as Syncthing's `.stfolder`).
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).sorted()
        where !name.hasPrefix(".") && !Self.topLevelNames.contains(name) {
            problem(root.appendingPathComponent(name, isDirectory: false), Self.strayReason(name))
        }

        var replaced: Set<UUID> = []
        // Trust records (signing, admissions, encryption): checked by reading the trust.
        if let root = keys?.policy.root {
            for file in loadTrust(container: root.container, remembered: root).problems { problem(file.url, file.reason) }
        }
        let requests = Set(joinRequests().map(\.device))
        for name in list(identityDirectory, into: problem) {
            let url = identityDirectory.appendingPathComponent(name, isDirectory: false)
            guard fileOrNamed(url, "an identity file", into: problem) else { continue }
            result.checkedFiles += 1
            if Self.isTrustRecord(name) { continue }
            do {
                let identity: ContainerIdentity = try readJSON(url, limit: Self.maximumRecordSize)
                replaced.formUnion(identity.replaces ?? [])
                if identity.format > Self.formatVersion {
                    problem(url, "format version \(identity.format) is newer than this build's \(Self.formatVersion)")
                } else if name != "\(identity.seededBy).json", name != Self.upgradeFileName(format: identity.format, device: identity.seededBy) {
                    problem(url, "seeded by \(identity.seededBy), not the device its name says")
                }
            } catch {
                problem(url, Self.passedOverReason(name: name, problem: Self.summarize(error)))
            }
        }

        for name in list(devicesDirectory, into: problem) {
            let url = devicesDirectory.appendingPathComponent(name, isDirectory: false)
            guard fileOrNamed(url, "a device's registry entry", into: problem) else { continue }
            result.checkedFiles += 1
            if let device = DeviceID(String(name.dropLast(5))), requests.contains(device) {
                result.waiting.append(QuarantinedFile(url: url, reason: "a device asking to join ('multidoc device list', 'multidoc device admit')"))
                continue
            }
            do {
                let record: DeviceRecord = try readJSON(url, limit: Self.maximumRegistrySize)
                if name != "\(record.device).json" { problem(url, "registry entry of \(record.device), not the device its name says") }
            } catch {
                problem(url, "not a device registry entry (\(Self.summarize(error)))")
            }
        }

        // Registry entries as a device reads them, for the claims each document's files make.
        let records = deviceRecords()

        let tombstoneNames = list(tombstonesDirectory, into: problem)
        let (tombstones, tombstoneProblems) = scanTombstones()
        result.checkedFiles += tombstoneNames.count
        for file in tombstoneProblems { problem(file.url, file.reason) }

        for name in list(documentsDirectory, into: problem) {
            let folder = documentsDirectory.appendingPathComponent(name, isDirectory: false)
            guard let id = DocumentID(name), name == id.description else {
                if !isLink(folder) { problem(folder, "not a document folder (its name is not a lower-case UUID); never read: remove it or move it out of the container") }
                continue
            }
            guard !isLink(folder) else { continue }
            guard kind(folder) == .folder else {
                problem(folder, "a file where a document's folder belongs; never read: remove it or move it out of the container")
                continue
            }
            verifyDocument(id, tombstoned: tombstones[id] != nil, refusing: replaced, records: records, into: &result, problem)
        }
        for copy in sharedConflictCopies() { problem(copy, "conflict copy made by the replication engine, not imported") }
        result.problems = found.map { (path: $0.url.path, file: $0) }
            .sorted { ($0.path, $0.file.reason) < ($1.path, $1.file.reason) }
            .map(\.file)
        return result
    }

    /// The names the container format has at its top.
    static let topLevelNames: Set<String> = ["identity", "devices", "documents", "tombstones"]

    /// Why a name at the container's top is reported: a device root's private files are worse
    /// than stray ones, as everyone who can read the container can read them.
    static func strayReason(_ name: String) -> String {
        switch name {
        case "device.key", "api-token", "container.key", "trust.json":
            "a device root's private file in the shared folder, where everyone who can read the container reads it: move it out now (for a device key, then run `multidoc device new-identity --yes` on its device)"
        default:
            "not part of the container format; no device reads it: move it out of the container"
        }
    }

    private func verifyDocument(
        _ id: DocumentID, tombstoned: Bool, refusing replaced: Set<UUID>, records: [DeviceRecord], into result: inout ContainerVerification,
        _ problem: (URL, String) -> Void
    ) {
        let folder = documentDirectory(id)
        var infos = 0, infoNames = 0
        var claims: [(URL, DeviceID, UInt64)] = []
        // Missing logs between two that are there; named below unless a baseline covers them.
        var gaps: [(url: URL, device: DeviceID, after: UInt64, next: UInt64, follows: UInt64?)] = []
        var newest: [DeviceID: UInt64] = [:]
        var listing = DocumentListing()
        for name in list(folder, into: problem) {
            let url = folder.appendingPathComponent(name, isDirectory: false)
            if name == "logs" || name == "baselines" { continue }
            guard name.hasPrefix("info-"), name.hasSuffix(".json") else {
                if !isLink(url) { problem(url, "unexpected name in a document folder; never read: remove it or move it out of the container") }
                continue
            }
            infoNames += 1
            guard fileOrNamed(url, "an info file", into: problem) else { continue }
            result.checkedFiles += 1
            do {
                let info: DocumentInfo = try readJSON(url, limit: Self.maximumRecordSize)
                if info.document != id { problem(url, "describes document \(info.document), not this folder's") }
                else if info.format > Self.formatVersion { problem(url, "format version \(info.format) is newer than this build's \(Self.formatVersion)") }
                else { infos += 1 }
            } catch {
                problem(url, "not document metadata (\(Self.summarize(error)))")
            }
        }
        if infos == 0, !tombstoned {
            if infoNames == 0 {
                result.waiting.append(QuarantinedFile(url: folder, reason: "no info file yet; its documents wait for it"))
            } else {
                problem(folder, "no readable info file")
            }
        }

        let logs = folder.appendingPathComponent("logs", isDirectory: false)
        for deviceName in list(logs, into: problem) {
            let deviceFolder = logs.appendingPathComponent(deviceName, isDirectory: false)
            guard let device = DeviceID(deviceName), deviceName == device.description else {
                if !isLink(deviceFolder) { problem(deviceFolder, "not a device's log folder (its name is not a lower-case UUID); never read: remove it or move it out of the container") }
                continue
            }
            var sequences: [UInt64] = []
            for name in list(deviceFolder, into: problem) {
                let url = deviceFolder.appendingPathComponent(name, isDirectory: false)
                if let sequence = Self.sequence(fromLogName: name) {
                    sequences.append(sequence)
                } else if !isLink(url) {
                    problem(url, Self.logNameProblem(name))
                }
            }
            sequences.sort()
            var previous: UInt64?
            for sequence in sequences {
                defer { previous = sequence }
                let url = deviceFolder.appendingPathComponent(Self.logFileName(sequence), isDirectory: false)
                let gap = previous.flatMap { $0 &+ 1 < sequence ? (url: url, device: device, after: $0, next: sequence, follows: UInt64?.none) : nil }
                guard fileOrNamed(url, "a log", into: problem) else {
                    if let gap { gaps.append(gap) }
                    continue
                }
                result.checkedFiles += 1
                result.checkedLogs += 1
                do {
                    let log = try readLog(id, device: device, sequence: sequence, refusing: replaced)
                    for (other, needed) in log.dependencies ?? [:] { claims.append((url, other, needed)) }
                    if var found = gap {
                        found.follows = log.follows
                        gaps.append(found)
                    }
                } catch {
                    if let gap { gaps.append(gap) }
                    problem(url, error.reason)
                }
            }
            newest[device] = sequences.last
            listing.logs[device] = sequences
        }

        var covered: [DeviceID: UInt64] = [:]
        defer {
            // A device reading the document takes a baseline for the logs it covers, as imports
            // do (`Replicator.makePlan`): only a gap past every baseline keeps later logs waiting.
            for gap in gaps {
                let reached = max(gap.after, covered[gap.device] ?? 0)
                // A log that says it follows the last one reached steps over the numbers between.
                guard reached < gap.next - 1, gap.follows != reached else { continue }
                problem(gap.url, "logs \(reached + 1)…\(gap.next - 1) of this device are missing; later ones wait for them")
            }
            // A log made after another device's log that no log or baseline here reaches waits
            // for it: on its way, lost, or a lie. Not a problem of this file yet; said once.
            for (url, other, needed) in claims where needed > max(newest[other] ?? 0, covered[other] ?? 0) {
                result.waiting.append(QuarantinedFile(url: url, reason: "made after log \(needed) of device \(other), which is not in the container; it waits for it"))
            }
        }
        let baselines = baselinesDirectory(id)
        var readable: [(url: URL, baseline: Baseline)] = []
        for name in list(baselines, into: problem) {
            let url = baselines.appendingPathComponent(name, isDirectory: false)
            guard fileOrNamed(url, "a baseline", into: problem) else { continue }
            result.checkedFiles += 1
            let named: BaselineFileName
            do throws(BaselineNameError) {
                named = try BaselineFileName(parsing: name)
            } catch {
                problem(url, error.description)
                continue
            }
            do {
                let baseline = try readBaseline(url)
                if baseline.document != id { problem(url, "a baseline of document \(baseline.document), not this folder's") }
                else if baseline.format > Self.formatVersion { problem(url, "format version \(baseline.format) is newer than this build's \(Self.formatVersion)") }
                else if named.writer != baseline.writtenBy || named.coverage != baseline.coverage { problem(url, "its name does not match its writer and coverage") }
                else if let bounds = baseline.problem() { problem(url, "baseline not used: \(bounds)") }
                else { readable.append((url, baseline)) }
            } catch {
                problem(url, "not a baseline (\(Self.summarize(error)))")
            }
        }
        // Claims about a device's logs that nothing else shows (ClaimEvidence): devices do not
        // use them.
        let evidence = ClaimEvidence(self, document: id, listing: listing, applied: nil, reader: nil, baselines: readable.map(\.baseline), records: records)
        for (url, baseline) in readable {
            if let claim = evidence.problem(claims: baseline.applied, by: baseline.writtenBy) ?? reflectionProblem(baseline, refusing: replaced) {
                problem(url, "baseline not used: \(claim)")
            } else {
                covered.merge(baseline.applied) { max($0, $1) }
            }
        }
        for record in records {
            guard let applied = record.applied[id], let claim = evidence.problem(claims: applied, by: record.device) else { continue }
            problem(deviceRecordURL(record.device), "registry entry, for document \(id): \(claim)")
        }
        for copy in conflictCopies(id) { problem(copy, "conflict copy made by the replication engine, not imported") }
    }

    /// Why a name in a device's log folder is not a log, and what to do about it.
    static func logNameProblem(_ name: String) -> String {
        let digits = name.utf8.prefix(16)
        if name.utf8.count == 20, name.hasSuffix(".log"), digits.count == 16, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return "sequence \(name.prefix(16)) is outside 1…\(ContainerBounds.maximumSequence), the sequences a device can write: "
                + "not a log, never imported; remove it"
        }
        return "not a log name (16 decimal digits, 1 to \(ContainerBounds.maximumSequence), then .log); never imported: remove it or move it out of the container"
    }

    /// A layout folder's names; a folder that is there but cannot be listed is a problem (it is
    /// not empty: nothing in it was checked). A link is left to the walk, which names it.
    private func list(_ url: URL, into problem: (URL, String) -> Void) -> [String] {
        guard !isLink(url) else { return [] }
        do {
            return try names(in: url)
        } catch {
            problem(url, Self.unlistable(error.detail))
            return []
        }
    }

    private static func unlistable(_ detail: String) -> String {
        "cannot be listed, so nothing in it was checked: \(detail)"
    }

    /// True for a regular file. A folder where a file of the layout belongs is named (nothing
    /// reads it, and nothing else would say so); links and special files are named by the walk.
    private func fileOrNamed(_ url: URL, _ what: String, into problem: (URL, String) -> Void) -> Bool {
        switch kind(url) {
        case .file: return true
        case .folder:
            problem(url, "a folder where \(what) belongs; never read: remove it or move it out of the container")
            return false
        case .link, .special, nil: return false
        }
    }

    private enum EntryKind { case file, folder, link, special }

    private func kind(_ url: URL) -> EntryKind? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .folder
        case S_IFLNK: return .link
        default: return .special
        }
    }

    private func isLink(_ url: URL) -> Bool { kind(url) == .link }

    /// Visits everything under `url` without following links (ignored names included: a link
    /// is reported whatever it is called).
    private func walk(_ url: URL, unlistable: (URL, String) -> Void, _ visit: (URL, EntryKind) -> Void) {
        let names: [String]
        do {
            names = try DirectoryHandle.names(at: url.path)
        } catch {
            unlistable(url, Self.unlistable(error.detail ?? "\(error)"))
            return
        }
        for name in names {
            let child = url.appendingPathComponent(name, isDirectory: false)
            guard let kind = kind(child) else { continue }
            visit(child, kind)
            if kind == .folder { walk(child, unlistable: unlistable, visit) }
        }
    }
}
