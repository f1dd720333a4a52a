import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import TestSupport

/// One simulated device: its own root and its own container folder, the real engine on top.
final class SimDevice {
    /// `memory` is ``MarkerStores``: in memory, but moved and removed with the folder.
    enum Backend: String { case memory, json, sqlite }

    let index: Int
    let name: String
    let root: URL
    let container: URL
    let backend: Backend
    let fastSave: Bool
    /// How far this device's wall clock is off (milliseconds); the HLC must cope.
    let skew: TimeInterval
    let uuids: SequentialUUIDs
    var policy: ContainerChangeDecision = .adoptNew
    var library: DocumentLibrary
    private let volume: MarkerStores
    private let clock: TestClock

    init(index: Int, folder: URL, backend: Backend, fastSave: Bool, skew: TimeInterval, volume: MarkerStores, clock: TestClock) throws {
        self.index = index
        name = "D\(index)"
        root = folder.appendingPathComponent("device-\(index)")
        container = folder.appendingPathComponent("container-\(index)")
        self.backend = backend
        self.fastSave = fastSave
        self.skew = skew
        self.volume = volume
        self.clock = clock
        uuids = SequentialUUIDs(start: (index + 1) * 0x1000000)
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
        library = try Self.makeLibrary(
            root: root, container: container, name: name, backend: backend, fastSave: fastSave, skew: skew,
            uuids: uuids, volume: volume, clock: clock, policy: { .adoptNew })
    }

    /// Closes the library and builds a new one on the same root (a process restart).
    func restart() async throws {
        await library.closeAll()
        let policy = self.policy
        library = try Self.makeLibrary(
            root: root, container: container, name: name, backend: backend, fastSave: fastSave, skew: skew,
            uuids: uuids, volume: volume, clock: clock, policy: { policy })
    }

    /// The device's document records, read from its root (cheap; no store is opened).
    var records: [LocalDocumentRecord] { DeviceRoot(url: root).records().sorted { $0.id < $1.id } }

    private static func makeLibrary(
        root: URL, container: URL, name: String, backend: Backend, fastSave: Bool, skew: TimeInterval,
        uuids: SequentialUUIDs, volume: MarkerStores, clock: TestClock,
        policy: @escaping @Sendable () -> ContainerChangeDecision
    ) throws -> DocumentLibrary {
        var flags: [SettingKey: SettingValue] = [.deviceName: .text(name), .fastSave: .bool(fastSave)]
        if backend != .memory { flags[.store] = .text(backend.rawValue) }
        let setup = try DeviceSetup(
            rootPath: root.path, containerPath: container.path, flags: flags, environment: [:], createRoot: true,
            newUUID: { uuids() })
        var logger = Logger(label: "sim.\(name)")
        logger.logLevel = .critical
        let stores: StoreProvider = backend == .memory ? volume.provider : .standard()
        return DocumentLibrary(.init(
            root: setup.root, container: setup.container, settings: setup.settings, identity: setup.identity,
            stores: stores, now: { clock.now().addingTimeInterval(skew) }, newUUID: { uuids() }, logger: logger,
            onContainerChange: { _ in policy() }))
    }
}

/// What the test expects: every successful save, and the conflict rule of
/// Docs/CONTAINER-FORMAT.md (per-attribute last-writer-wins by stamp; a deleted document stays
/// deleted). It never reads a device to decide what a device should show, except to learn the
/// stamp the engine gave a save it just made.
struct Oracle {
    struct Value: Equatable {
        var stamp: Stamp
        var text: String
        var modified: Date?
    }

    struct Document {
        var id: DocumentID
        /// Nil: in the cloud, on every device. Otherwise the one device holding it locally.
        var localOn: Int?
        var text: Value
        var name: Value
        /// The saves of the text so far (device, sequence), for ``exact``.
        var saves: [(device: DeviceID, sequence: UInt64)] = []
        /// Whether every save of the text was made by a device that had every earlier one: then
        /// the text is exactly the last save's. Otherwise concurrent saves merged (format 2's
        /// text merge), and every device must show the same text, whatever it is.
        var exact = true
        /// Whether saves ever merged: a device may then hold a merged text no save wrote.
        var everMerged = false
    }

    private(set) var documents: [DocumentID: Document] = [:]
    /// Cloud documents deleted (or removed from the cloud): never to come back.
    private(set) var deleted: Set<DocumentID> = []
    /// Every text ever saved, by stamp: a value a device shows must be one of these.
    private var texts: [Stamp: String] = [:]

    mutating func add(_ document: Document) {
        documents[document.id] = document
        texts[document.text.stamp] = document.text.text
    }

    /// A save of the text: `save` is its (device, sequence); `applied` what the saving device
    /// had applied before it.
    mutating func saved(text: Value, in id: DocumentID, save: (device: DeviceID, sequence: UInt64), applied: [DeviceID: UInt64]) {
        texts[text.stamp] = text.text
        guard var document = documents[id] else { return }
        // A save made with every earlier one in view decides the whole text; one made without
        // some of them merges with them.
        document.exact = document.saves.allSatisfy { (applied[$0.device] ?? 0) >= $0.sequence }
        if !document.exact { document.everMerged = true }
        document.saves.append(save)
        if text.stamp > document.text.stamp { document.text = text }
        documents[id] = document
    }

    mutating func renamed(_ id: DocumentID, to name: Value) {
        guard var document = documents[id] else { return }
        if name.stamp > document.name.stamp { document.name = name }
        documents[id] = document
    }

    /// A cloud document deleted for everyone (delete wins over any concurrent edit).
    mutating func deleteFromCloud(_ id: DocumentID) {
        deleted.insert(id)
        documents[id] = nil
    }

    /// A local document removed from its device (deleted there, or moved under a new UUID).
    mutating func removeLocal(_ id: DocumentID) { documents[id] = nil }

    mutating func moveToCloud(_ id: DocumentID, as newID: DocumentID) {
        guard var document = documents.removeValue(forKey: id) else { return }
        document.id = newID
        document.localOn = nil
        documents[newID] = document
    }

    func isKnownText(_ text: String, stamp: Stamp) -> Bool { texts[stamp] == text }

    var cloudDocuments: [Document] { documents.values.filter { $0.localOn == nil }.sorted { $0.id < $1.id } }
    func localDocuments(on device: Int) -> [Document] {
        documents.values.filter { $0.localOn == device }.sorted { $0.id < $1.id }
    }
}

/// Counts for the summary line.
struct SimulationFigures {
    var steps = 0
    var operations: [String: Int] = [:]
    var failedOperations = 0
    var quarantinedReports = 0
    var convergenceRounds = 0
    var lost = 0

    mutating func count(_ operation: String) { operations[operation, default: 0] += 1 }
}

/// A seeded run of several devices over a ``FaultyTransport``; see SimulationTests.
final class Simulation {
    let seed: UInt64
    let folder: SimulationFolder
    let clock = TestClock()
    let volume = MarkerStores()
    var devices: [SimDevice] = []
    let transport: FaultyTransport
    var random: SeededGenerator
    var oracle = Oracle()
    var figures = SimulationFigures()
    /// What went wrong, in words; empty when the run passed.
    var failures: [String] = []
    /// Every operation, for the story of a failing document.
    var trace: [String] = []

    func note(_ device: SimDevice, _ text: String) {
        trace.append("step \(figures.steps) \(device.name) \(text)")
    }

    /// The operations that touched a document (its UUID's prefix appears in the line).
    func history(_ id: DocumentID) -> String {
        let key = String(id.description.prefix(8))
        return trace.filter { $0.contains(key) }.suffix(12).map { "    " + $0 }.joined(separator: "\n")
    }

    init(seed: UInt64, deviceCount: Int? = nil, backends: [SimDevice.Backend]? = nil) throws {
        self.seed = seed
        random = SeededGenerator(seed: seed)
        folder = try SimulationFolder()
        let count = deviceCount ?? Int.random(in: 3...5, using: &random)
        let kinds: [SimDevice.Backend] = backends ?? [.memory, .json, .sqlite, .memory, .memory]
        for index in 0..<count {
            let backend = kinds[index % kinds.count]
            let fastSave = index == 0 ? true : random.chance(0.7)
            let skew = Double(Int.random(in: -3000...3000, using: &random)) / 1000
            devices.append(try SimDevice(
                index: index, folder: folder.url, backend: backend, fastSave: fastSave, skew: skew, volume: volume, clock: clock))
        }
        transport = FaultyTransport(folders: devices.map(\.container), seed: seed)
    }

    deinit { folder.remove() }

    func fail(_ message: String) {
        failures.append("step \(figures.steps): \(message)")
    }
}

/// Where a run's devices and containers live: in `/dev/shm` when there is one (the simulation
/// creates and deletes tens of thousands of small files; a disk file system spends most of the
/// run allocating inodes), else in the temporary directory. Removed with the simulation.
struct SimulationFolder {
    let url: URL

    init() throws {
        let shm = URL(fileURLWithPath: "/dev/shm")
        let base = FileManager.default.isWritableFile(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
        url = base.appendingPathComponent("multidoc-sim-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}
