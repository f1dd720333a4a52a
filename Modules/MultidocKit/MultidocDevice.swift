import Engine
import Foundation
import Logging
import Model
import Settings
import Storage

/// One device: a root folder of documents on this machine, synced with its peers through a
/// shared container folder. Open it with ``open(root:container:settings:)``, start
/// ``startSyncing()`` to keep it in step, and ``close()`` it when done.
///
/// Every method may be called from any task; the device serialises them. A save returns once
/// the device holds it; with the `FastSave` setting on (the default) its log is in the
/// container by then, and peers that sync see it.
public actor MultidocDevice {
    let library: DocumentLibrary
    private let ownsLibrary: Bool
    private var live: LiveSync?
    private var liveTask: Task<Void, Never>?
    private var forwarder: Task<Void, Never>?
    private var subscribers: [UUID: AsyncStream<DocumentChange>.Continuation] = [:]
    private var names: [DocumentID: String] = [:]
    private var knownStalls: Set<String> = []
    private var lastReport: SyncReport?

    /// Opens (and, when new, makes) the device at `root`.
    /// - Parameters:
    ///   - root: the device's folder; made with a new device identity when it does not exist.
    ///   - container: the shared folder to sync through (it must exist), or nil for the one the
    ///     root remembers (`multidoc init --container`); none at all keeps documents local.
    ///   - settings: settings by name (`FastSave`, `DeviceName`, `Store`, …, as `multidoc
    ///     settings` lists them), over the environment's `MULTIDOC_*` and the root's settings file.
    /// - Throws: ``MultidocError`` (`.invalid` for a bad setting, `.container` for a container
    ///   folder that does not exist, `.failed` for a root that cannot be made or read).
    public static func open(root: URL, container: URL? = nil, settings: [String: String] = [:]) async throws(MultidocError) -> MultidocDevice {
        do {
            var flags: [SettingKey: SettingValue] = [:]
            for (name, value) in settings {
                let key = try SettingKey.named(name)
                flags[key] = try key.parse(value)
            }
            let setup = try DeviceSetup(
                rootPath: root.path, containerPath: container?.path, flags: flags,
                environment: ProcessInfo.processInfo.environment, createRoot: true)
            if let missing = setup.missingContainer { throw missing }
            let library = setup.makeLibrary(stores: .standard(options: setup.storeOptions), logger: Logger(label: "multidoc.kit"))
            return await MultidocDevice(library: library, ownsLibrary: true)
        } catch {
            throw MultidocError(error)
        }
    }

    /// Wraps a library a front end built (the daemon's, with its own live sync and store setup).
    package init(library: DocumentLibrary, ownsLibrary: Bool = false) async {
        self.library = library
        self.ownsLibrary = ownsLibrary
        let events = await library.events()
        names = await library.recordNames()
        forwarder = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.translate(event)
            }
        }
    }

    // MARK: Changes

    /// Every change from now on, in order, until the device closes or the caller stops
    /// iterating. Each call gets a sequence of its own; a slow reader loses the oldest
    /// changes past 1,024 waiting.
    public func changes() -> AsyncStream<DocumentChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: DocumentChange.self, bufferingPolicy: .bufferingNewest(1024))
        let key = UUID()
        subscribers[key] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.unsubscribe(key) }
        }
        return stream
    }

    private func unsubscribe(_ key: UUID) { subscribers[key] = nil }

    private func send(_ change: DocumentChange) {
        for continuation in subscribers.values { continuation.yield(change) }
    }

    private func translate(_ event: LibraryEvent) async {
        switch event {
        case .documentAdded(let summary):
            names[summary.id] = summary.name
            let document = Document(summary)
            send(summary.origin == .created ? .created(document) : .discovered(document))
        case .documentRemoved(let id, let name):
            names[id] = nil
            send(.deleted(id.uuid, name: name))
        case .didImport(let id, _, let from):
            // A peer's rename travels in its saves: the import renamed the record.
            if let record = try? await library.resolveRecord(id), let known = names[id], known != record.name.rawValue {
                names[id] = record.name.rawValue
                send(.renamed(id.uuid, from: known, to: record.name.rawValue))
            }
            send(.imported(id.uuid, from: from))
        case .becameViewable(let id): send(.viewable(id.uuid))
        case .didSave(let id, _): send(.saved(id.uuid))
        default: break
        }
    }

    /// Takes in what a sync pass reported: stalls become ``DocumentChange/stalled(name:detail:)``
    /// once each. Called by ``startSyncing()``'s passes and by front ends that run their own.
    package func record(_ report: SyncReport) {
        lastReport = report
        for problem in report.problems {
            let name: String
            switch problem {
            case .stalled(let stalled, _), .waitingForPeer(let stalled, _): name = stalled
            default: continue
            }
            let line = problem.description
            if knownStalls.insert(line).inserted { send(.stalled(name: name, detail: line)) }
        }
    }

    // MARK: Syncing

    /// Keeps the device in step until ``close()``: a first full sync, then one whenever a peer's
    /// file lands in the container or another process of this device saves (inotify), and a
    /// rescan every ten minutes as a safety net. Calling it again does nothing.
    public func startSyncing() {
        guard live == nil else { return }
        let live = LiveSync(library: library) { [weak self] pass in
            await self?.record(pass.report)
            return .goOn
        }
        self.live = live
        liveTask = Task { try? await live.run() }
    }

    /// Syncs now, whether or not ``startSyncing()`` runs: ships this device's saves, imports
    /// peers', finds new and deleted documents.
    public func syncNow() async -> SyncSummary {
        let report = await library.sync()
        record(report)
        return SyncSummary(
            imported: report.importedLogs, exported: report.exportedLogs, discovered: report.discovered,
            problems: report.problems.map(\.description))
    }

    /// Stops syncing, ships what waits, and closes every document. The device is not usable after.
    public func close() async {
        live?.stop()
        await liveTask?.value
        live = nil
        liveTask = nil
        forwarder?.cancel()
        if ownsLibrary {
            await library.flushAll()
            await library.closeAll()
        }
        for continuation in subscribers.values { continuation.finish() }
        subscribers = [:]
    }

    // MARK: Documents

    /// Every document on this device, sorted by name (natural order: Doc2 before Doc10).
    public func documents() async -> [Document] {
        await library.list().map(Document.init)
    }

    /// Finds a document by name, UUID or a unique UUID prefix.
    /// - Throws: ``MultidocError`` `.notFound`, or `.ambiguous` when several share the name.
    public func document(_ query: String) async throws(MultidocError) -> Document {
        do {
            let record = try await library.resolve(query)
            return Document(try await library.summary(record.id))
        } catch {
            throw MultidocError(error)
        }
    }

    /// One document by its UUID.
    /// - Throws: ``MultidocError`` `.notFound`.
    public func document(id: UUID) async throws(MultidocError) -> Document {
        try await document(id.uuidString.lowercased())
    }

    /// Makes a new document, shared with peers through the container (with `UseCloud` on).
    /// - Parameter name: its name; nil for the next free `TestDoc<N>`.
    /// - Throws: ``MultidocError`` `.invalid` for a name that is taken or not allowed.
    public func create(named name: String? = nil) async throws(MultidocError) -> Document {
        do {
            let summary = try await library.create(name: try name.map { try DocumentName(typed: $0) })
            names[summary.id] = summary.name
            return Document(summary)
        } catch {
            throw MultidocError(error)
        }
    }

    /// Renames a document here and on every peer.
    /// - Throws: ``MultidocError`` `.notFound`, `.invalid` for a name that is taken or not allowed.
    public func rename(_ id: UUID, to name: String) async throws(MultidocError) {
        do {
            let before = try await library.resolveRecord(DocumentID(id)).name.rawValue
            try await library.rename(DocumentID(id), to: try DocumentName(typed: name))
            let after = try await library.resolveRecord(DocumentID(id)).name.rawValue
            names[DocumentID(id)] = after
            if before != after { send(.renamed(id, from: before, to: after)) }
        } catch {
            throw MultidocError(error)
        }
    }

    /// Deletes a document here and on every peer; a copy waits 30 days in the trash.
    /// - Throws: ``MultidocError`` `.notFound`, `.container` when the container cannot take the deletion.
    public func delete(_ id: UUID) async throws(MultidocError) {
        do { try await library.delete(DocumentID(id)) } catch { throw MultidocError(error) }
    }

    /// Brings a deleted document back from the trash, as a new document (a new UUID).
    /// - Parameter query: the deleted document's name or UUID.
    /// - Throws: ``MultidocError`` `.notFound` when the trash holds no such document.
    public func restore(_ query: String) async throws(MultidocError) -> Document {
        do { return Document(try await library.restore(query)) } catch { throw MultidocError(error) }
    }

    // MARK: Text

    /// The document's text.
    /// - Throws: ``MultidocError`` `.notFound`, `.failed` when it is not viewable yet.
    public func text(_ id: UUID) async throws(MultidocError) -> String {
        do { return try await library.detail(DocumentID(id)).text } catch { throw MultidocError(error) }
    }

    /// The saves that made the text, oldest first (the last 1,000 and any of the last 30 days).
    public func history(_ id: UUID) async throws(MultidocError) -> [HistoryEntry] {
        do {
            return try await library.history(DocumentID(id)).map {
                HistoryEntry(number: $0.id, device: $0.deviceName, committedAt: $0.committedAt, added: $0.added, removed: $0.removed)
            }
        } catch {
            throw MultidocError(error)
        }
    }

    /// Inserts `text` at `position`, counted in Unicode scalars, in the text as it is when the
    /// save runs (a peer's edit imported meanwhile is kept).
    /// - Throws: ``MultidocError`` `.invalid` for a position past the end.
    public func insert(_ text: String, at position: Int, in id: UUID) async throws(MultidocError) {
        do { try await library.insertText(DocumentID(id), text, at: position) } catch { throw MultidocError(error) }
    }

    /// Deletes the Unicode scalars in `range`.
    /// - Throws: ``MultidocError`` `.invalid` for a range past the end.
    public func delete(_ range: Range<Int>, in id: UUID) async throws(MultidocError) {
        do { try await library.deleteText(DocumentID(id), at: range.lowerBound, length: range.count) } catch { throw MultidocError(error) }
    }

    /// Replaces the Unicode scalars in `range` with `text`, in one save.
    /// - Throws: ``MultidocError`` `.invalid` for a range past the end.
    public func replace(_ range: Range<Int>, with text: String, in id: UUID) async throws(MultidocError) {
        let current = try await self.text(id)
        let scalars = Array(current.unicodeScalars)
        guard range.lowerBound >= 0, range.upperBound <= scalars.count else {
            throw MultidocError(.invalid, "cannot replace \(range.lowerBound)..<\(range.upperBound): the text has \(scalars.count) characters (Unicode scalars)")
        }
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars[..<range.lowerBound])
        view.append(contentsOf: text.unicodeScalars)
        view.append(contentsOf: scalars[range.upperBound...])
        try await replaceText(id, with: String(view), editedFrom: current)
    }

    /// Saves a text the user edited from `original` (an editor's whole buffer): the edits from
    /// `original` to `text` are applied to the text as it is now, so a peer's edit imported
    /// meanwhile is kept.
    public func replaceText(_ id: UUID, with text: String, editedFrom original: String) async throws(MultidocError) {
        do { try await library.saveEditedText(DocumentID(id), text, editedFrom: original) } catch { throw MultidocError(error) }
    }

    // MARK: Status and latencies

    /// The device, its container and what the last sync reported.
    public func status() async -> DeviceStatus {
        let configuration = await library.configuration
        return DeviceStatus(
            device: configuration.identity.name, deviceID: configuration.identity.id.uuid, root: configuration.root.url.path,
            container: configuration.container?.path, containerAvailable: await library.cloudAvailable,
            documents: await library.knownDocumentCount(), problems: lastReport?.problems.map(\.description) ?? [])
    }

    /// Records how fast peers' changes to `id` reach this device (nil: stop). The samples go to
    /// the root's `latencies.jsonl`, which ``latencies()`` reads.
    public func inspect(_ id: UUID?) async {
        await library.inspect(id.map(DocumentID.init))
    }

    /// The latencies recorded on this device, with statistics and an SVG plot.
    public func latencies() async -> Latencies {
        let samples = LatencyLog(url: await library.configuration.root.latenciesURL).read()
        let statistics = LatencyStatistics(milliseconds: samples.map(\.oneWayMs))
        return Latencies(
            samples: samples.map {
                Latencies.Sample(at: $0.at, document: $0.document.uuid, from: $0.fromName, oneWayMs: $0.oneWayMs, roundTripMs: $0.roundTripMs)
            },
            count: statistics?.count ?? 0, p50Ms: statistics?.p50Ms, p90Ms: statistics?.p90Ms, maxMs: statistics?.maxMs,
            svg: samples.isEmpty ? "" : LatencyReport.svg(samples))
    }
}

extension Document {
    init(_ summary: DocumentSummary) {
        self.init(
            id: summary.id.uuid, name: summary.name, state: summary.state.description,
            origin: summary.origin == .created ? .created : .discovered, viewable: summary.viewable,
            downloadPercent: summary.downloadPercent, modified: summary.modified, problem: summary.problem,
            life: summary.life)
    }
}

extension MultidocError {
    /// Sorts an engine, settings or name error into a kind, keeping it as the cause.
    init(_ error: any Error) {
        if let error = error as? MultidocError {
            self = error
            return
        }
        let cause: any Error = error
        switch error {
        case let error as EngineError:
            let kind: Kind = switch error {
            case .unknownDocument, .notInTrash: .notFound
            case .ambiguousName: .ambiguous
            case .invalidName, .outOfRange, .notInHistory, .badEnvironment, .badPath: .invalid
            case .containerUnavailable, .containerMissing, .containerFormat, .trust: .container
            default: .failed
            }
            self.init(kind, error.description, underlying: cause)
        case let error as SettingsError: self.init(.invalid, error.description, underlying: cause)
        case let error as DocumentNameError: self.init(.invalid, error.description, underlying: cause)
        default: self.init(.failed, "\(error)", underlying: cause)
        }
    }
}
