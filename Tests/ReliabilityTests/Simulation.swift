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

    // MARK: Operations (each one a user action on one device)

    func contents(_ device: SimDevice, _ id: DocumentID) async throws -> StoreContents {
        try await device.library.withDocument(id) { try $0.read() }
    }

    /// The stamped text value a device holds for a document.
    func textValue(_ contents: StoreContents) -> Oracle.Value? {
        guard let entry = contents.graph.textEntry,
              let stamp = contents.sync.stamps[entry.id]?[Entity.TextEntry.text] else { return nil }
        return Oracle.Value(stamp: stamp, text: entry.text, modified: entry.modified)
    }

    func nameValue(_ contents: StoreContents) -> Oracle.Value? {
        guard let name = contents.graph.carriedName,
              let stamp = contents.sync.stamps[ObjectID.seed("document-info")]?[Entity.DocumentInfo.name] else { return nil }
        return Oracle.Value(stamp: stamp, text: name, modified: nil)
    }

    @discardableResult
    func create(_ device: SimDevice, name: String? = nil) async -> DocumentID? {
        figures.count("create")
        do {
            let summary = try await device.library.create(name: try name.map { try DocumentName($0) })
            let contents = try await contents(device, summary.id)
            guard let text = textValue(contents), let name = nameValue(contents) else {
                fail("\(device.name): created \(summary.id) without text or name")
                return nil
            }
            oracle.add(.init(id: summary.id, localOn: summary.location == .cloud ? nil : device.index, text: text, name: name))
            note(device, "create \(summary.id) \(name.text.debugDescription) \(summary.location) text@\(text.stamp)")
            return summary.id
        } catch {
            note(device, "create failed: \(error)")
            figures.failedOperations += 1
            return nil
        }
    }

    func edit(_ device: SimDevice, _ id: DocumentID, text: String) async {
        figures.count("edit")
        // What the device had applied before the save (read only from a document it can show:
        // opening one that is not viewable yet would change what the run does).
        let viewable = await device.library.list().first { $0.id == id }?.viewable ?? false
        let before = viewable ? try? await contents(device, id) : nil
        do {
            try await device.library.setText(id, text)
        } catch {
            // Not viewable yet, or deleted meanwhile: the save did not return success.
            note(device, "edit \(id) failed: \(error)")
            figures.failedOperations += 1
            return
        }
        do {
            let contents = try await contents(device, id)
            guard let value = textValue(contents), value.text == text else {
                fail("\(device.name): a save to \(id) returned success but the store shows \(textValue(contents)?.text ?? "nothing")")
                figures.lost += 1
                return
            }
            let identity = device.library.identity.id
            oracle.saved(
                text: value, in: id, save: (identity, contents.sync.applied[identity] ?? 0),
                applied: before?.sync.applied ?? [:])
            note(device, "edit \(id) \(text.debugDescription) @\(value.stamp)")
        } catch {
            fail("\(device.name): cannot read \(id) right after saving it: \(error)")
        }
    }

    func rename(_ device: SimDevice, _ id: DocumentID, to name: String) async {
        figures.count("rename")
        do {
            try await device.library.rename(id, to: try DocumentName(name))
        } catch {
            note(device, "rename \(id) failed: \(error)")
            figures.failedOperations += 1
            return
        }
        do {
            let contents = try await contents(device, id)
            guard let value = nameValue(contents), value.text == name else {
                fail("\(device.name): a rename of \(id) to \(name) returned success but the store shows \(nameValue(contents)?.text ?? "nothing")")
                figures.lost += 1
                return
            }
            oracle.renamed(id, to: value)
            note(device, "rename \(id) \(name.debugDescription) @\(value.stamp)")
        } catch {
            fail("\(device.name): cannot read \(id) right after renaming it: \(error)")
        }
    }

    func delete(_ device: SimDevice, _ id: DocumentID) async {
        figures.count("delete")
        let location = device.records.first { $0.id == id }?.location
        do {
            try await device.library.delete(id)
        } catch {
            note(device, "delete \(id) failed: \(error)")
            figures.failedOperations += 1
            return
        }
        note(device, "delete \(id) (\(location.map { "\($0)" } ?? "?"))")
        if location == .cloud { oracle.deleteFromCloud(id) } else { oracle.removeLocal(id) }
    }

    func moveToLocal(_ device: SimDevice, _ id: DocumentID, choice: MoveToLocalChoice) async {
        figures.count("moveToLocal.\(choice.rawValue)")
        let before: StoreContents
        do {
            before = try await contents(device, id)
        } catch {
            figures.failedOperations += 1
            return
        }
        // A document not downloaded yet has nothing to keep locally; the user waits.
        guard textValue(before) != nil, nameValue(before) != nil else { return }
        let merged = oracle.documents[id]?.everMerged ?? false
        let newID: DocumentID
        do {
            newID = try await device.library.moveToLocal(id, choice: choice)
        } catch {
            note(device, "moveToLocal \(id) \(choice.rawValue) failed: \(error)")
            figures.failedOperations += 1
            return
        }
        note(device, "moveToLocal \(id) \(choice.rawValue) -> \(newID) text@\(textValue(before)?.stamp.description ?? "-")")
        if choice == .removeCloud { oracle.deleteFromCloud(id) }
        guard newID != id else { return }
        // The local copy holds what this device had: every value must be one really saved.
        guard let text = textValue(before), let name = nameValue(before) else {
            fail("\(device.name): moved \(id) to local before it was viewable")
            return
        }
        if !merged, !oracle.isKnownText(text.text, stamp: text.stamp) {
            fail("\(device.name): \(id) held text \(text.text.debugDescription) that no save wrote\n" + history(id))
        }
        oracle.add(.init(id: newID, localOn: device.index, text: text, name: name))
    }

    func moveToCloud(_ device: SimDevice, _ id: DocumentID) async {
        figures.count("moveToCloud")
        do {
            let newID = try await device.library.moveToCloud(id)
            oracle.moveToCloud(id, as: newID)
            note(device, "moveToCloud \(id) -> \(newID)")
        } catch {
            note(device, "moveToCloud \(id) failed: \(error)")
            figures.failedOperations += 1
        }
    }

    func sync(_ device: SimDevice) async -> SyncReport {
        let report = await device.library.sync()
        figures.quarantinedReports += report.quarantined.count
        if !report.discovered.isEmpty || !report.removed.isEmpty || !report.problems.isEmpty {
            note(device, "sync discovered \(report.discovered) removed \(report.removed) problems \(report.problems)")
        }
        return report
    }

    // MARK: The random run

    func randomText() -> String {
        let words = ["alpha", "beta", "gamma", "delta", "ε", "日本", "🙂", "x"]
        return (0..<Int.random(in: 1...4, using: &random)).map { _ in words.randomElement(using: &random) ?? "x" }
            .joined(separator: " ") + " #\(figures.steps)"
    }

    /// One random step: a user action (or a sync, a restart) on a random device, then one
    /// transport tick and a little time.
    func randomStep() async throws {
        figures.steps += 1
        clock.advance(Double(Int.random(in: 1...400, using: &random)) / 1000)
        try await randomOperation(on: devices[Int.random(in: 0..<devices.count, using: &random)])
        transport.step()
    }

    private func randomOperation(on device: SimDevice) async throws {
        let records = device.records
        let cloud = records.filter { $0.location == .cloud }
        let local = records.filter { $0.location == .local }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<8 where records.count < 14:
            await create(device, name: random.chance(0.3) ? "Shared \(Int.random(in: 1...3, using: &random))" : nil)
        case 0..<40:
            // Edits favour the first few documents, so several devices write the same one.
            if let record = pick(records, hot: true) {
                await edit(device, record.id, text: randomText())
            } else {
                await create(device)
            }
        case 40..<46:
            // Concurrent edits: several devices save the same document before any sync.
            guard let record = pick(cloud, hot: true) else { return }
            figures.count("concurrentEdits")
            for other in devices where random.chance(0.7) && other.records.contains(where: { $0.id == record.id }) {
                await edit(other, record.id, text: randomText())
            }
        case 46..<70:
            figures.count("sync")
            _ = await sync(device)
        case 70..<75:
            guard let record = pick(records, hot: false) else { return }
            let name = random.chance(0.5) ? "Renamed \(figures.steps)" : "Shared \(Int.random(in: 1...3, using: &random))"
            await rename(device, record.id, to: name)
        case 75..<78:
            guard let record = pick(records, hot: false) else { return }
            await delete(device, record.id)
        case 78..<82:
            guard let record = pick(cloud, hot: false) else { return }
            await moveToLocal(device, record.id, choice: random.chance(0.5) ? .keepCloud : .removeCloud)
        case 82..<87:
            guard let record = pick(local, hot: false) else { return }
            await moveToCloud(device, record.id)
        case 87..<91:
            figures.count("restart")
            try await device.restart()
            note(device, "restart")
        case 91..<94:
            figures.count("flushAll")
            await device.library.flushAll()
        default:
            figures.count("idle")
        }
    }

    private func pick(_ records: [LocalDocumentRecord], hot: Bool) -> LocalDocumentRecord? {
        guard !records.isEmpty else { return nil }
        if hot, random.chance(0.6) { return records[Int.random(in: 0..<min(2, records.count), using: &random)] }
        return records[Int.random(in: 0..<records.count, using: &random)]
    }

    // MARK: Convergence and checks

    /// Stops the faults, delivers everything, and lets every device sync until nothing changes.
    func converge(maxRounds: Int = 60) async {
        transport.faultsEnabled = false
        transport.offline = []
        for round in 1...maxRounds {
            let before = transport.changesNoticed
            transport.flush()
            var busy = false
            for device in devices {
                let report = await sync(device)
                if report.importedLogs > 0 || report.exportedLogs > 0 || !report.discovered.isEmpty || !report.removed.isEmpty {
                    busy = true
                }
            }
            transport.flush()
            if !busy, transport.isQuiet, transport.changesNoticed == before {
                figures.convergenceRounds = round
                return
            }
        }
        fail("no quiet state after \(maxRounds) rounds of delivery and sync")
    }

    /// Every device against the oracle and against each other.
    func check() async {
        await checkAgreement()
        await checkOracle()
    }

    /// The devices against each other, whatever happened: the same cloud documents (UUIDs and
    /// names) with the same graphs, nothing in an error state, and nothing left quarantined.
    func checkAgreement() async {
        var reference: (device: String, rows: [DocumentID: String])?
        var graphs: [DocumentID: ObjectGraph] = [:]
        for device in devices {
            let rows = await device.library.list()
            for row in rows where row.problem != nil || row.state.contains(.savingError) {
                fail("\(device.name): \(row.name) (\(row.id)) is in error: \(row.problem ?? "saving error")")
            }
            let cloud = Dictionary(rows.filter { $0.location == .cloud }.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
            if let reference {
                if reference.rows != cloud {
                    fail("\(device.name) lists cloud documents \(cloud.sorted { $0.key < $1.key }.map { "\($0.value)=\($0.key)" }), "
                        + "\(reference.device) lists \(reference.rows.sorted { $0.key < $1.key }.map { "\($0.value)=\($0.key)" })")
                }
            } else {
                reference = (device.name, cloud)
            }
            for id in cloud.keys.sorted() {
                do {
                    let graph = try await device.library.detail(id).graph
                    if let other = graphs[id] {
                        if other != graph { fail("\(device.name): \(id)'s graph differs from another device's") }
                    } else {
                        graphs[id] = graph
                    }
                } catch {
                    fail("\(device.name): cannot open \(id): \(error)")
                }
            }
            let report = await device.library.sync()
            for file in report.quarantined { fail("\(device.name): still quarantined after convergence: \(file)") }
            for problem in report.problems { fail("\(device.name): problem after convergence: \(problem)") }
        }
    }

    /// Every device against the oracle: each successful save is there unless a later write (by
    /// stamp) replaced it or its document was deleted; deleted documents stay deleted.
    func checkOracle() async {
        let expectedCloud = oracle.cloudDocuments
        /// The text the first device showed for each merged document: every device must agree.
        var mergedTexts: [DocumentID: (device: String, text: String)] = [:]
        for device in devices {
            let rows = await device.library.list()
            let cloudIDs = Set(rows.filter { $0.location == .cloud }.map(\.id))
            for document in expectedCloud where !cloudIDs.contains(document.id) {
                fail("\(device.name) lacks cloud document \(document.id) (\(document.name.text))")
                figures.lost += 1
            }
            for id in cloudIDs where !expectedCloud.contains(where: { $0.id == id }) {
                let why = oracle.deleted.contains(id) ? "deleted, but back (zombie)" : "unknown to the oracle"
                fail("\(device.name) lists cloud document \(id): \(why)")
            }
            let localIDs = Set(rows.filter { $0.location == .local }.map(\.id))
            let expectedLocal = oracle.localDocuments(on: device.index)
            if localIDs != Set(expectedLocal.map(\.id)) {
                fail("\(device.name) local documents \(localIDs.sorted()) != expected \(expectedLocal.map(\.id))")
            }
            for document in expectedCloud + expectedLocal {
                guard let row = rows.first(where: { $0.id == document.id }) else { continue }
                do {
                    let detail = try await device.library.detail(document.id)
                    if row.name != document.name.text {
                        fail("\(device.name): \(document.id) is named \(row.name.debugDescription), expected \(document.name.text.debugDescription)")
                        figures.lost += 1
                    }
                    if !document.exact {
                        if let first = mergedTexts[document.id], first.text != detail.text {
                            fail("\(device.name): \(document.id) shows \(detail.text.debugDescription), \(first.device) \(first.text.debugDescription): merged texts differ\n" + history(document.id))
                            figures.lost += 1
                        }
                        mergedTexts[document.id] = mergedTexts[document.id] ?? (device.name, detail.text)
                    }
                    if (document.exact && detail.text != document.text.text) || detail.modified != document.text.modified {
                        let shown = detail.modified.map { "\($0.timeIntervalSince1970)" } ?? "nil"
                        let expected = document.text.modified.map { "\($0.timeIntervalSince1970)" } ?? "nil"
                        fail("\(device.name): \(document.id) shows \(detail.text.debugDescription) modified \(shown), expected \(document.text.text.debugDescription) modified \(expected) (\(document.text.stamp))\n" + history(document.id))
                        figures.lost += 1
                    }
                } catch {
                    fail("\(device.name): cannot open \(document.id): \(error)")
                }
            }
        }
        for id in oracle.deleted {
            for device in devices {
                if device.records.contains(where: { $0.id == id }) { fail("\(device.name) still holds deleted \(id)") }
                let leftover = Container(root: device.container).documentDirectory(id)
                if FileManager.default.fileExists(atPath: leftover.path) {
                    fail("\(device.name)'s container still has documents/\(id) after it was deleted")
                }
            }
        }
    }

    /// The one-line summary printed per seed (what Docs/RELIABILITY.md says the simulation checks).
    func summary(seconds: Double) -> String {
        let operations = figures.operations.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let faults = FaultKind.allCases.map { "\($0.rawValue)=\(transport.faults[$0] ?? 0)" }.joined(separator: " ")
        let backends = devices.map { "\($0.backend.rawValue)\($0.fastSave ? "" : "/slow")" }.joined(separator: ",")
        return "simulation seed=\(seed) devices=\(devices.count) [\(backends)] steps=\(figures.steps) "
            + "deliveries=\(transport.deliveries) faults{\(faults)} ops{\(operations)} failedOps=\(figures.failedOperations) "
            + "quarantineReports=\(figures.quarantinedReports) rounds=\(figures.convergenceRounds) "
            + "documents=\(oracle.documents.count) deleted=\(oracle.deleted.count) lost=\(figures.lost) "
            + "failures=\(failures.count) time=\(String(format: "%.1f", seconds))s"
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
