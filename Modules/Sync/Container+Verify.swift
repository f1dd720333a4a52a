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
        var result = ContainerVerification()
        func problem(_ url: URL, _ reason: String) { result.problems.append(QuarantinedFile(url: url, reason: reason)) }

        // Links and special files anywhere (the walk does not follow links).
        walk(root) { url, kind in
            switch kind {
            case .link:
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: url.path)) ?? "?"
                problem(url, "symbolic link to \(target); links in the container are never followed")
            case .special: problem(url, "not a regular file or folder")
            case .file, .folder: break
            }
        }

        for name in listNames(identityDirectory) {
            let url = identityDirectory.appendingPathComponent(name, isDirectory: false)
            guard regular(url) else { continue }
            result.checkedFiles += 1
            do {
                let identity: ContainerIdentity = try readJSON(url, limit: Self.maximumRecordSize)
                if identity.format > Self.formatVersion {
                    problem(url, "format version \(identity.format) is newer than this build's \(Self.formatVersion)")
                } else if name != "\(identity.seededBy).json" {
                    problem(url, "seeded by \(identity.seededBy), not the device its name says")
                }
            } catch {
                problem(url, "not a container identity (\(Self.summarize(error)))")
            }
        }

        for name in listNames(devicesDirectory) {
            let url = devicesDirectory.appendingPathComponent(name, isDirectory: false)
            guard regular(url) else { continue }
            result.checkedFiles += 1
            do {
                let record: DeviceRecord = try readJSON(url, limit: Self.maximumRegistrySize)
                if name != "\(record.device).json" { problem(url, "registry entry of \(record.device), not the device its name says") }
            } catch {
                problem(url, "not a device registry entry (\(Self.summarize(error)))")
            }
        }

        let (tombstones, tombstoneProblems) = scanTombstones()
        result.checkedFiles += listNames(tombstonesDirectory).count
        result.problems += tombstoneProblems

        for name in listNames(documentsDirectory) {
            let folder = documentsDirectory.appendingPathComponent(name, isDirectory: false)
            guard let id = DocumentID(name), name == id.description else {
                if !isLink(folder) { problem(folder, "not a document folder (its name is not a lower-case UUID)") }
                continue
            }
            guard !isLink(folder) else { continue }
            verifyDocument(id, tombstoned: tombstones[id] != nil, into: &result)
        }
        result.problems.sort { $0.url.path < $1.url.path }
        return result
    }

    private func verifyDocument(_ id: DocumentID, tombstoned: Bool, into result: inout ContainerVerification) {
        func problem(_ url: URL, _ reason: String) { result.problems.append(QuarantinedFile(url: url, reason: reason)) }
        let folder = documentDirectory(id)
        var infos = 0, infoNames = 0
        for name in listNames(folder) {
            let url = folder.appendingPathComponent(name, isDirectory: false)
            if name == "logs" || name == "baselines" { continue }
            guard name.hasPrefix("info-"), name.hasSuffix(".json") else {
                if !isLink(url) { problem(url, "unexpected name in a document folder") }
                continue
            }
            guard regular(url) else { continue }
            result.checkedFiles += 1
            infoNames += 1
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
        for deviceName in listNames(logs) {
            let deviceFolder = logs.appendingPathComponent(deviceName, isDirectory: false)
            guard let device = DeviceID(deviceName), deviceName == device.description else {
                if !isLink(deviceFolder) { problem(deviceFolder, "not a device's log folder (its name is not a lower-case UUID)") }
                continue
            }
            guard !isLink(deviceFolder) else { continue }
            var expected: UInt64?
            for name in listNames(deviceFolder) {
                let url = deviceFolder.appendingPathComponent(name, isDirectory: false)
                guard Self.sequence(fromLogName: name) != nil else {
                    if !isLink(url) { problem(url, "not a log name (16 decimal digits, 1 to \(ContainerBounds.maximumSequence), then .log)") }
                    continue
                }
            }
            for sequence in logSequences(id, device: device) {
                let url = logURL(id, device: device, sequence: sequence)
                if let expected, sequence != expected {
                    problem(url, "logs \(expected)…\(sequence - 1) of this device are missing")
                }
                expected = sequence &+ 1
                guard regular(url) else {
                    if kind(url) == .folder { problem(url, "a folder where a log belongs") }
                    continue
                }
                result.checkedFiles += 1
                result.checkedLogs += 1
                do { _ = try readLog(id, device: device, sequence: sequence) } catch { problem(url, error.reason) }
            }
        }

        let baselines = baselinesDirectory(id)
        for name in listNames(baselines) {
            let url = baselines.appendingPathComponent(name, isDirectory: false)
            guard regular(url) else { continue }
            result.checkedFiles += 1
            do {
                let baseline: Baseline = try readJSON(url, limit: Self.maximumBaselineSize)
                if baseline.document != id { problem(url, "a baseline of document \(baseline.document), not this folder's") }
                else if baseline.format > Self.formatVersion { problem(url, "format version \(baseline.format) is newer than this build's \(Self.formatVersion)") }
                else if name != "\(baseline.writtenBy)-\(baseline.coverage).json" { problem(url, "its name does not match its writer and coverage") }
            } catch {
                problem(url, "not a baseline (\(Self.summarize(error)))")
            }
        }
        for copy in conflictCopies(id) { problem(copy, "conflict copy made by the replication engine, not imported") }
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
    private func regular(_ url: URL) -> Bool { kind(url) == .file }

    /// Visits everything under `url` without following links (ignored names included: a link
    /// is reported whatever it is called).
    private func walk(_ url: URL, _ visit: (URL, EntryKind) -> Void) {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
        for name in names {
            let child = url.appendingPathComponent(name, isDirectory: false)
            guard let kind = kind(child) else { continue }
            visit(child, kind)
            if kind == .folder { walk(child, visit) }
        }
    }
}
