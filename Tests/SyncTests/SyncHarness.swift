import Foundation
import Model
import Storage
import Sync
import TestSupport

/// Devices as the Sync module sees them: an identity, a store per document, a replicator.
struct SyncDevice {
    let identity: DeviceIdentity
    var replicator: Replicator
    let provider: StoreProvider
    let folder: URL
    let kind: StoreKind
    let clock: TestClock

    init(
        _ n: Int, name: String, container: URL, provider: StoreProvider, kind: StoreKind, folder: URL, clock: TestClock, baselineThreshold: Int = 100,
        format: LogFormat = .version1, keys: ContainerKeys? = nil
    ) {
        identity = DeviceIdentity(id: Fixed.device(n), name: name, model: "Test")
        replicator = Replicator(container: Container(root: container, keys: keys), device: identity, baselineThreshold: baselineThreshold, now: { clock.now() })
        replicator.format = format
        self.provider = provider
        self.folder = folder.appendingPathComponent(name)
        self.kind = kind
        self.clock = clock
    }

    func store(_ document: DocumentID) throws -> any DocumentStore {
        try provider.open(kind, at: folder.appendingPathComponent("\(document).\(kind.fileName)"), create: true)
    }

    /// Creates a document the way the engine does: commit, flush, publish.
    func create(_ document: DocumentID, name: String, text: String, now: Date) throws {
        let store = try store(document)
        defer { store.close() }
        try replicator.commit([
            .insert(ObjectID("text-\(document)"), entity: Entity.textEntry, attributes: ["text": .string(text)]),
        ], document: document, to: store, ship: true)
        try replicator.flush(document, in: store)
        try replicator.publish(DocumentInfo(document: document, name: try DocumentName(name), createdBy: identity.id, createdByName: identity.name, createdAt: now, store: kind), store: store, baseline: false)
    }

    /// Commits the changes `makeChanges` makes from the graph as one save and ships it. Nothing
    /// is imported first: peers' saves this device has not imported stay unseen (a concurrent edit).
    /// `durable: false` commits without a sync, the log being the save's durable step (the
    /// engine's save with FastSave on and the container there).
    func save(_ document: DocumentID, durable: Bool = true, ship: Bool = true, _ makeChanges: (ObjectGraph) throws -> [Change]) throws {
        let store = try store(document)
        defer { store.close() }
        _ = try replicator.commit(document: document, to: store, ship: true, durable: durable, makeChanges)
        if ship { try replicator.flush(document, in: store) }
    }

    func save(_ document: DocumentID, _ changes: [Change]) throws { try save(document) { _ in changes } }

    /// Saves a text change and ships it (`ship: false`: it waits in the outbox, as it does while
    /// the container is away).
    func edit(_ document: DocumentID, text: String, durable: Bool = true, ship: Bool = true) throws {
        try save(document, durable: durable, ship: ship) { _ in [.update(ObjectID("text-\(document)"), attributes: ["text": .string(text)])] }
    }

    /// Saves a text change as the engine's save does with FastSave on: the commit not synced,
    /// the log written and synced beside its slot while the store commits, then renamed into
    /// its slot (``Replicator/flush(_:in:after:)``).
    func editWritingAhead(_ document: DocumentID, text: String) throws {
        let store = try store(document)
        defer { store.close() }
        let clock = clock
        let commit = try Replicator.commit(
            document: document, device: identity, format: replicator.format, keys: replicator.container.keys, now: { clock.now() }, to: store,
            ship: true, durable: false, writingLogAheadTo: replicator.container
        ) { _ in ([.update(ObjectID("text-\(document)"), attributes: ["text": .string(text)])], []) }
        try replicator.flush(document, in: store, after: commit)
    }

    /// Ships what waits in the outbox.
    @discardableResult
    func flush(_ document: DocumentID) throws -> [URL] {
        let store = try store(document)
        defer { store.close() }
        return try replicator.flush(document, in: store)
    }

    @discardableResult
    func importPending(_ document: DocumentID) throws -> ImportReport {
        let store = try store(document)
        defer { store.close() }
        return try replicator.importPending(document, into: store)
    }

    func graph(_ document: DocumentID) throws -> ObjectGraph {
        let store = try store(document)
        defer { store.close() }
        return try store.read().graph
    }

    func text(_ document: DocumentID) throws -> String? { try graph(document).textEntry?.text }
}

enum SyncBackend: String, CaseIterable, CustomStringConvertible, Sendable {
    case memory, sqlite, json
    var description: String { rawValue }
    var kind: StoreKind { self == .json ? .json : .sqlite }
}

struct SyncHarness {
    let folder: TemporaryDirectory
    let container: URL
    let clock = TestClock()
    let volume = MemoryVolume()
    let backend: SyncBackend

    init(_ backend: SyncBackend = .memory) throws {
        self.backend = backend
        folder = try TemporaryDirectory("sync")
        container = folder.appending("container")
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
    }

    /// `format`: what the device writes (format 1 JSON logs unless a test says otherwise).
    func device(
        _ n: Int, _ name: String, container: URL? = nil, baselineThreshold: Int = 100, format: LogFormat = .version1, keys: ContainerKeys? = nil
    ) -> SyncDevice {
        SyncDevice(n, name: name, container: container ?? self.container,
                   provider: backend == .memory ? volume.provider : .standard(), kind: backend.kind,
                   folder: folder.url, clock: clock, baselineThreshold: baselineThreshold, format: format, keys: keys)
    }
}
