import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import Text

/// Replays a real editing trace (`EditingTrace`, josephg/editing-traces) through the whole
/// engine: one device per agent, each with its own root and its own container folder, saves
/// committed to SQLite stores and shipped as format 2 logs, and the log files carried between
/// the container folders the way a replication engine would, so that each transaction is
/// applied on its agent's device after exactly its parents. A sequential trace is the case of
/// one agent, with a second device importing at the end. Every device must end at the trace's
/// `endContent`. `multidoc-trace` prints the result; the tests run the small traces.
public enum TraceReplay {
    public struct Result: Sendable, Encodable {
        public var trace: String
        public var kind: String
        public var agents: Int
        public var devices: Int
        public var transactions: Int
        public var patches: Int
        /// Saves committed through the engine (consecutive transactions of one agent that no
        /// other agent saw in between are one save, at most `patchesPerSave` patches).
        public var saves: Int
        public var endLength: Int
        /// The same trace merged in memory only (`TextSequence`, one replica per agent).
        public var mergeSeconds: Double
        public var mergeEditsPerSecond: Double
        /// Through stores, logs and containers.
        public var endToEndSeconds: Double
        public var endToEndEditsPerSecond: Double
        /// What differed from `endContent` (empty: every device matched).
        public var mismatches: [String]
        public var matched: Bool { mismatches.isEmpty }
    }

    /// A transaction's save: which device wrote it, as which of its logs.
    struct Saved {
        var device: Int
        var sequence: UInt64
    }

    /// Replays `trace` in `folder` (created; left for the caller to remove).
    /// `progress` is told how many transactions are done.
    public static func run(
        _ trace: EditingTrace, name: String, in folder: URL, patchesPerSave: Int = 64,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) async throws -> Result {
        let patchCount = trace.transactions.reduce(0) { $0 + $1.patches.count }
        let agentCount = (trace.transactions.map(\.agent).max() ?? 0) + 1
        var result = Result(
            trace: name, kind: agentCount > 1 || trace.transactions.enumerated().contains { $1.parents != ($0 > 0 ? [$0 - 1] : []) } ? "concurrent" : "sequential",
            agents: agentCount, devices: max(agentCount, 2), transactions: trace.transactions.count, patches: patchCount, saves: 0,
            endLength: trace.endContent.unicodeScalars.count, mergeSeconds: 0, mergeEditsPerSecond: 0, endToEndSeconds: 0,
            endToEndEditsPerSecond: 0, mismatches: [])

        // The merge alone, in memory.
        let clock = ContinuousClock()
        var started = clock.now
        // Only the texts are kept: the operations of every transaction are gone before the
        // engine's replay starts (a long trace's are a hundred megabytes).
        let mergedTexts = try trace.replayConcurrently().texts
        result.mergeSeconds = seconds(clock.now - started)
        result.mergeEditsPerSecond = Double(patchCount) / max(result.mergeSeconds, 1e-9)
        for (index, text) in mergedTexts.enumerated() where text != trace.endContent {
            result.mismatches.append("in-memory merge: replica \(index) ends with \(text.unicodeScalars.count) scalars, not the trace's end")
        }

        started = clock.now
        let devices = try await makeDevices(result.devices, in: folder)
        let document = try await devices[0].library.create(name: try DocumentName("Trace")).id
        // A new document has a text of its own: the trace starts from its startContent.
        try await devices[0].library.setText(document, trace.startContent)
        var savedBy = [[UInt64]](repeating: [0], count: devices.count)  // per device, its sequence after each of its saves
        let created = try await ownSequence(devices[0], document)
        savedBy[0] = [created]
        for device in devices.dropFirst() {
            try devices[0].container.carry(document, device: devices[0].id, through: created, to: device.container)
            await device.library.sync()
        }

        var saved = [Saved?](repeating: nil, count: trace.transactions.count)
        var delivered = [[Bool]](repeating: [Bool](repeating: false, count: trace.transactions.count), count: devices.count)
        // Per source device and target device, the source's logs carried so far (each carry
        // copies only the logs after them).
        var carried = [[UInt64]](repeating: [UInt64](repeating: 0, count: devices.count), count: devices.count)
        carried[0] = [UInt64](repeating: created, count: devices.count)
        // A transaction another agent names as a parent ends its save: a save is carried whole,
        // so it must not hold a transaction that an ancestry stops before.
        var seenElsewhere = [Bool](repeating: false, count: trace.transactions.count)
        for transaction in trace.transactions {
            for parent in transaction.parents where trace.transactions[parent].agent != transaction.agent { seenElsewhere[parent] = true }
        }

        var index = 0
        while index < trace.transactions.count {
            let agent = trace.transactions[index].agent
            let device = devices[agent]
            try await deliver(ancestorsOf: trace.transactions[index].parents, to: agent, trace: trace, devices: devices,
                              document: document, saved: saved, delivered: &delivered, carried: &carried)
            // The save: this transaction and the next ones of the agent that need nothing more.
            var run = [index]
            var patches = trace.transactions[index].patches.count
            while let last = run.last, last + 1 < trace.transactions.count, !seenElsewhere[last] {
                let next = trace.transactions[last + 1]
                guard next.agent == agent, patches + next.patches.count <= max(patchesPerSave, 1),
                      next.parents.allSatisfy({ $0 == last || delivered[agent][$0] || run.contains($0) }) else { break }
                run.append(last + 1)
                patches += next.patches.count
            }
            // The patches as edits at their positions, as an editor saves them: no whole text.
            var edits: [TextEdit.Kind] = []
            for transactionIndex in run {
                for patch in trace.transactions[transactionIndex].patches {
                    let (end, overflow) = patch.position.addingReportingOverflow(patch.deleteCount)
                    if patch.deleteCount > 0, !overflow { edits.append(.delete(patch.position..<end)) }
                    if !patch.insert.isEmpty {
                        var inserted = String.UnicodeScalarView()
                        inserted.append(contentsOf: patch.insert)
                        edits.append(.insert(String(inserted), at: patch.position))
                    }
                }
            }
            do {
                try await device.library.editText(document, edits)
            } catch let error as EngineError {
                guard case .outOfRange(_, let detail) = error else { throw error }
                result.mismatches.append("transactions \(run.first ?? index)–\(run.last ?? index): a patch is outside device \(agent)'s text (\(detail))")
                result.endToEndSeconds = seconds(clock.now - started)
                return result
            }
            result.saves += 1
            let sequence = try await ownSequence(device, document)
            for transactionIndex in run {
                saved[transactionIndex] = Saved(device: agent, sequence: sequence)
                delivered[agent][transactionIndex] = true
            }
            index = (run.last ?? index) + 1
            progress?(index, trace.transactions.count)
        }

        // Everyone gets everything.
        for target in devices.indices {
            try await deliver(ancestorsOf: Array(trace.transactions.indices), to: target, trace: trace, devices: devices,
                              document: document, saved: saved, delivered: &delivered, carried: &carried)
        }
        for (number, device) in devices.enumerated() {
            let text = try await device.library.detail(document).text
            if text != trace.endContent {
                result.mismatches.append("device \(number) ends with \(text.unicodeScalars.count) scalars, not the trace's \(result.endLength)\(firstDifference(text, trace.endContent))")
            }
        }
        for device in devices { await device.library.closeAll() }
        result.endToEndSeconds = seconds(clock.now - started)
        result.endToEndEditsPerSecond = Double(patchCount) / max(result.endToEndSeconds, 1e-9)
        return result
    }

    struct Device {
        let id: DeviceID
        let library: DocumentLibrary
        let container: Container
    }

    static func makeDevices(_ count: Int, in folder: URL) async throws -> [Device] {
        var devices: [Device] = []
        for number in 0..<count {
            let root = folder.appendingPathComponent("device-\(number)", isDirectory: true)
            let containerURL = folder.appendingPathComponent("container-\(number)", isDirectory: true)
            try FileManager.default.createDirectory(at: containerURL, withIntermediateDirectories: true)
            let uuids = Counter(prefix: UInt32(number + 1))
            let setup = try DeviceSetup(
                rootPath: root.path, containerPath: containerURL.path,
                flags: [.deviceName: .text("agent \(number)"), .store: .text("sqlite"), .fastSave: .bool(true)],
                environment: [:], createRoot: true, newUUID: { uuids.next() })
            var logger = Logger(label: "multidoc.trace")
            logger.logLevel = .critical
            let library = DocumentLibrary(.init(
                root: setup.root, container: setup.container, settings: setup.settings, identity: setup.identity,
                stores: .standard(), newUUID: { uuids.next() }, logger: logger))
            let device = Device(id: setup.identity.id, library: library, container: Container(root: containerURL))
            if number == 0 {
                await library.sync()  // seeds the identity every container then shares
            } else {
                try devices[0].container.carryIdentity(to: device.container)
                await library.sync()
            }
            devices.append(device)
        }
        return devices
    }

    /// Carries the saves of every not yet delivered ancestor of `parents` into `target`'s
    /// container and imports them there.
    static func deliver(
        ancestorsOf parents: [Int], to target: Int, trace: EditingTrace, devices: [Device], document: DocumentID,
        saved: [Saved?], delivered: inout [[Bool]], carried: inout [[UInt64]]
    ) async throws {
        var through: [Int: UInt64] = [:]
        var stack = parents
        while let next = stack.popLast() {
            guard !delivered[target][next] else { continue }
            delivered[target][next] = true
            if let save = saved[next], save.device != target { through[save.device] = max(through[save.device] ?? 0, save.sequence) }
            stack += trace.transactions[next].parents
        }
        guard !through.isEmpty else { return }
        // What arrived, as the target's watcher would tell it: the pass imports just those logs
        // when they continue what the target applied, without listing the document's folders.
        var arrived: [DeviceID: Set<UInt64>] = [:]
        for (source, sequence) in through {
            let after = carried[source][target]
            try devices[source].container.carry(document, device: devices[source].id, after: after, through: sequence, to: devices[target].container)
            if sequence > after { arrived[devices[source].id] = Set((after + 1)...sequence) }
            carried[source][target] = max(after, sequence)
        }
        await devices[target].library.sync(documents: [document], arrivals: arrived.isEmpty ? [:] : [document: arrived])
    }

    static func ownSequence(_ device: Device, _ document: DocumentID) async throws -> UInt64 {
        let id = device.id
        return try await device.library.withDocument(document) { try $0.read().sync.applied[id] ?? 0 }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func firstDifference(_ a: String, _ b: String) -> String {
        let x = Array(a.unicodeScalars), y = Array(b.unicodeScalars)
        guard let at = zip(x, y).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset ?? (x.count == y.count ? nil : min(x.count, y.count)) else { return "" }
        return "; first difference at scalar \(at)"
    }

    /// Deterministic UUIDs for one device: its number in the first field, then a counter.
    final class Counter: @unchecked Sendable {
        private let prefix: UInt32
        private var value: UInt64 = 0
        private let lock = NSLock()

        init(prefix: UInt32) { self.prefix = prefix }

        func next() -> UUID {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            let bytes = (0..<4).map { UInt8(truncatingIfNeeded: prefix >> (24 - 8 * $0)) } + [0, 0, 0x40, 0, 0x80, 0]
                + (0..<6).map { UInt8(truncatingIfNeeded: value >> (40 - 8 * $0)) }
            return UUIDText.uuid(bytes: bytes) ?? UUID()
        }
    }
}
