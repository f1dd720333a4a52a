import Foundation
#if canImport(Glibc)
import Glibc
import TestSupport
#endif


/// The kinds of fault the transport injects, for the figures.
enum FaultKind: String, CaseIterable, Sendable {
    /// A delivery held back 1–4 ticks.
    case delayed
    /// A delivery that landed before one scheduled earlier for the same folder.
    case reordered
    /// A file delivered a second time.
    case duplicated
    /// A truncated copy written in place under the final name, completed later.
    case partial
    /// A file held back 15–40 ticks (a replication engine that has not scanned yet).
    case hidden
    /// A deletion held back like any delivery.
    case delayedDelete
    /// A file that was deleted coming back for a while (a stale peer re-sharing it), then
    /// deleted again.
    case resurrected
    /// A replication engine's temporary file left behind (`.syncthing.*.tmp`).
    case tempLitter
}

/// Copies files between the devices' own container folders, the way a replication engine
/// (Syncthing, a cloud drive) would across hosts — with faults.
///
/// Like Syncthing, it keeps a global version per path: whatever a folder changed locally
/// (a new file, a replaced one, a deletion) becomes the newest version and travels to every
/// other folder; a delivery older than what a folder already holds is dropped. Files whose name
/// starts with `.` (writers' temporaries) never travel.
final class FaultyTransport {
    /// What the transport knows one path is in one folder.
    private struct Known {
        var version: Int
        var key: FileKey?
        var partial = false
    }

    private struct Version {
        var number: Int
        var content: Data?
        var origin: Int
    }

    private struct Delivery {
        enum Kind { case full, partial, delete, resurrect }
        var order: Int
        var folder: Int
        var path: String
        var version: Int
        var content: Data?
        var due: Int
        var kind: Kind
    }

    let folders: [URL]
    private(set) var tick = 0
    private(set) var faults: [FaultKind: Int] = [:]
    private(set) var deliveries = 0
    /// Folders that neither send nor receive (a device offline).
    var offline: Set<Int> = []
    /// Whether faults are injected (off at the end of a run, so everything arrives).
    var faultsEnabled = true

    private var random: SeededGenerator
    private var global: [String: Version] = [:]
    /// The newest version number that held content, per path (what a resurrection brings back).
    private var lastContent: [String: Version] = [:]
    private var known: [[String: Known]]
    private var pending: [Delivery] = []
    private var scheduled: [Int: [String: Int]] = [:]
    private var counter = 0
    private var orderCounter = 0
    private var lastDeliveredOrder: [Int: Int] = [:]

    init(folders: [URL], seed: UInt64) {
        self.folders = folders
        random = SeededGenerator(seed: seed ^ 0x7472_616E_7370_6F72)
        known = Array(repeating: [:], count: folders.count)
    }

    /// Whether nothing is waiting to be delivered.
    var isQuiet: Bool { pending.isEmpty }

    /// One tick: notice what every online folder changed, schedule deliveries, deliver what is due.
    func step() {
        tick += 1
        scan()
        schedule()
        deliverDue()
    }

    /// Delivers everything now (faults off): one call moves every change one hop.
    func flush() {
        scan()
        schedule()
        for index in pending.indices { pending[index].due = tick }
        deliverDue()
        scan()
    }

    private func count(_ kind: FaultKind) { faults[kind, default: 0] += 1 }

    /// New versions noticed so far (a quiet container stops changing this).
    private(set) var changesNoticed = 0

    // MARK: Noticing changes

    private func scan() {
        for folder in folders.indices where !offline.contains(folder) {
            var seen: Set<String> = []
            for (path, key) in listFiles(folders[folder]) {
                seen.insert(path)
                if let entry = known[folder][path], entry.key == key { continue }
                guard let data = try? Data(contentsOf: folders[folder].appendingPathComponent(path)) else { continue }
                if let entry = known[folder][path], let current = global[path], entry.version == current.number,
                   current.content == data {
                    known[folder][path]?.key = key
                    continue
                }
                counter += 1
                changesNoticed += 1
                global[path] = Version(number: counter, content: data, origin: folder)
                lastContent[path] = global[path]
                known[folder][path] = Known(version: counter, key: key)
            }
            for (path, entry) in known[folder] where entry.key != nil && !seen.contains(path) {
                counter += 1
                changesNoticed += 1
                global[path] = Version(number: counter, content: nil, origin: folder)
                known[folder][path] = Known(version: counter, key: nil)
            }
        }
    }

    /// Every file below `root` (relative path and key), skipping dot names; plain POSIX calls,
    /// because this runs every tick over every folder.
    private func listFiles(_ root: URL) -> [(String, FileKey)] {
        var result: [(String, FileKey)] = []
        func walk(_ directory: String, _ prefix: String) {
            guard let handle = opendir(directory) else { return }
            defer { closedir(handle) }
            while let entry = readdir(handle) {
                let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                    pointer.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
                }
                if name.hasPrefix(".") { continue }
                let path = directory + "/" + name
                let relative = prefix.isEmpty ? name : prefix + "/" + name
                guard let key = FileKey(path) else { continue }
                if key.isDirectory {
                    walk(path, relative)
                } else if key.isFile {
                    result.append((relative, key))
                }
            }
        }
        walk(root.path, "")
        return result.sorted { $0.0 < $1.0 }
    }

    // MARK: Scheduling

    private func schedule() {
        for (path, version) in global.sorted(by: { $0.key < $1.key }) where !offline.contains(version.origin) {
            for folder in folders.indices where folder != version.origin && !offline.contains(folder) {
                let have = known[folder][path]?.version ?? 0
                if have >= version.number { continue }
                if (scheduled[folder]?[path] ?? 0) >= version.number { continue }
                if have == 0, version.content == nil { continue }
                scheduled[folder, default: [:]][path] = version.number
                plan(folder: folder, path: path, version: version)
            }
        }
    }

    private func plan(folder: Int, path: String, version: Version) {
        var due = tick
        if faultsEnabled {
            if random.chance(0.06) {
                due += Int.random(in: 15...40, using: &random)
                count(.hidden)
            } else if random.chance(0.5) {
                due += Int.random(in: 1...4, using: &random)
                count(version.content == nil ? .delayedDelete : .delayed)
            }
        }
        guard let content = version.content else {
            add(Delivery(order: 0, folder: folder, path: path, version: version.number, content: nil, due: due, kind: .delete))
            if faultsEnabled, path.hasPrefix("documents/"), lastContent[path] != nil, random.chance(0.03) {
                let stale = lastContent[path]
                add(Delivery(order: 0, folder: folder, path: path, version: stale?.number ?? 0, content: stale?.content,
                             due: due + Int.random(in: 1...6, using: &random), kind: .resurrect))
            }
            return
        }
        if faultsEnabled, content.count > 1, known[folder][path] == nil, random.chance(0.12) {
            add(Delivery(order: 0, folder: folder, path: path, version: version.number, content: content, due: due, kind: .partial))
            due += Int.random(in: 1...8, using: &random)
        }
        add(Delivery(order: 0, folder: folder, path: path, version: version.number, content: content, due: due, kind: .full))
        if faultsEnabled, random.chance(0.08) {
            add(Delivery(order: 0, folder: folder, path: path, version: version.number, content: content,
                         due: due + Int.random(in: 1...10, using: &random), kind: .full))
            count(.duplicated)
        }
    }

    private func add(_ delivery: Delivery) {
        var delivery = delivery
        orderCounter += 1
        delivery.order = orderCounter
        pending.append(delivery)
    }

    // MARK: Delivering

    private func deliverDue() {
        var due = pending.filter { $0.due <= tick }
        guard !due.isEmpty else { return }
        pending.removeAll { $0.due <= tick }
        if faultsEnabled {
            due.shuffle(using: &random)
        } else {
            due.sort { $0.order < $1.order }
        }
        for delivery in due {
            if offline.contains(delivery.folder) {
                // Comes back to the queue: a disconnected folder receives nothing meanwhile.
                var again = delivery
                again.due = tick + 1
                pending.append(again)
                continue
            }
            if let last = lastDeliveredOrder[delivery.folder], delivery.order < last { count(.reordered) }
            lastDeliveredOrder[delivery.folder] = max(lastDeliveredOrder[delivery.folder] ?? 0, delivery.order)
            deliver(delivery)
        }
    }

    private func deliver(_ delivery: Delivery) {
        let url = folders[delivery.folder].appendingPathComponent(delivery.path)
        let have = known[delivery.folder][delivery.path]
        switch delivery.kind {
        case .delete:
            guard (have?.version ?? 0) < delivery.version else { return }
            try? FileManager.default.removeItem(at: url)
            removeEmptyParents(of: url, in: folders[delivery.folder])
            known[delivery.folder][delivery.path] = Known(version: delivery.version, key: nil)
            deliveries += 1
        case .full, .partial:
            guard let content = delivery.content else { return }
            // Like Syncthing, a folder pulls the newest version: an older one still queued is dropped.
            if let current = global[delivery.path], current.number > delivery.version { return }
            if let have, have.version > delivery.version || (have.version == delivery.version && !have.partial && delivery.kind == .partial) {
                return
            }
            if let have, have.version == delivery.version, !have.partial, delivery.kind == .full,
               FileManager.default.fileExists(atPath: url.path) {
                // A duplicate: the same bytes land again (a replication engine re-pulling the file).
                write(content, to: url, folder: delivery.folder)
                known[delivery.folder][delivery.path] = Known(version: delivery.version, key: FileKey(url.path))
                return
            }
            if delivery.kind == .partial {
                let cut = max(1, Int.random(in: 1..<content.count, using: &random))
                do {
                    try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try content.prefix(cut).write(to: url)
                } catch { return }
                known[delivery.folder][delivery.path] = Known(version: delivery.version, key: FileKey(url.path), partial: true)
                count(.partial)
            } else {
                write(content, to: url, folder: delivery.folder)
                known[delivery.folder][delivery.path] = Known(version: delivery.version, key: FileKey(url.path))
            }
            deliveries += 1
        case .resurrect:
            guard let content = delivery.content, have?.key == nil else { return }
            write(content, to: url, folder: delivery.folder)
            // Known as the stale version, so the newer deletion is scheduled again.
            known[delivery.folder][delivery.path] = Known(version: delivery.version, key: FileKey(url.path))
            scheduled[delivery.folder]?[delivery.path] = nil
            count(.resurrected)
            deliveries += 1
        }
    }

    private func write(_ content: Data, to url: URL, folder: Int) {
        let directory = url.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".syncthing.\(url.lastPathComponent).tmp")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try content.write(to: temporary)
            if faultsEnabled, random.chance(0.03) {
                // A crashed replication engine leaves its temporary behind.
                let litter = directory.appendingPathComponent(".syncthing.\(url.lastPathComponent).\(tick).tmp")
                try content.prefix(content.count / 2).write(to: litter)
                count(.tempLitter)
            }
            _ = try? FileManager.default.removeItem(at: url)
            try FileManager.default.moveItem(at: temporary, to: url)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
        }
    }

    /// Removes folders a deletion emptied, below `documents/` (Syncthing removes a folder once
    /// its deletion has been seen; the top-level layout stays).
    private func removeEmptyParents(of url: URL, in root: URL) {
        let documents = root.appendingPathComponent("documents").standardizedFileURL.path
        var directory = url.deletingLastPathComponent().standardizedFileURL
        while directory.path.hasPrefix(documents + "/") {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? ["?"]
            guard names.allSatisfy({ $0.hasPrefix(".syncthing.") }) else { return }
            try? FileManager.default.removeItem(at: directory)
            directory = directory.deletingLastPathComponent()
        }
    }
}

/// What identifies one version of a file on disk: inode, size and modification time.
struct FileKey: Equatable {
    var inode: UInt64
    var size: Int64
    var seconds: Int
    var nanoseconds: Int
    var isFile: Bool
    var isDirectory: Bool

    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
        isFile = (info.st_mode & S_IFMT) == S_IFREG
        isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
    }
}
