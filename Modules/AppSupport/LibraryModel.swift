import Engine
import Foundation
import Model
import Settings
import Sync
import Text

/// A line at the bottom of a live front end: what happened, or what went wrong.
public struct StatusMessage: Sendable {
    public var text: String
    public var isError: Bool
    public var shownAt: Date
}

/// The document open in a live front end's detail: its latest contents, and whether a peer
/// changed it while it was being edited.
public struct OpenDocument: Sendable {
    public var id: DocumentID
    public var name: String
    public var detail: DocumentDetail?
    public var peerChangedWhileEditing = false
}

/// What a front end that shows the library live (the TUI) knows and does apart from drawing:
/// the master list and its selection, the open document, the settings in force, the trash and
/// the latencies it shows, the status line, and the actions behind its keys. Engine calls never
/// throw out of it: failures become the status line.
@MainActor
public final class LibraryModel {
    public let setup: DeviceSetup
    public let library: DocumentLibrary
    /// The settings given as flags, and the environment: settings are resolved again from them
    /// after the file changes.
    let flags: [SettingKey: SettingValue]
    let environment: [String: String]

    public private(set) var documents: [DocumentSummary] = []
    /// The chosen row of ``documents``.
    public var selected = 0
    public private(set) var settings: ResolvedSettings
    public private(set) var cloudAvailable = true
    public var message: StatusMessage?
    public var open: OpenDocument?
    public private(set) var trashEntries: [TrashEntry] = []
    public private(set) var latencySamples: [LatencySample] = []
    /// When ``refreshList()`` last ran.
    public private(set) var listedAt = Date.distantPast
    private var recoveryShown: Set<DocumentID> = []
    private let inbox = EventInbox()
    private let passes = SyncPassCounter()
    private var live: (sync: Task<Void, Never>, forwarder: Task<Void, Never>)?

    /// The model of `library` on the device `setup` describes; `flags` and `environment` as the
    /// front end was started with.
    public init(setup: DeviceSetup, library: DocumentLibrary, flags: [SettingKey: SettingValue], environment: [String: String]) {
        self.setup = setup
        self.library = library
        self.flags = flags
        self.environment = environment
        self.settings = setup.settings
    }

    // MARK: Live sync

    /// Starts live sync in the background: its passes are counted (``passCount``) and its
    /// events wait for ``tick(editing:)``.
    public func startLive(rescanInterval: Duration) async {
        let events = await library.events()
        let inbox = inbox, passes = passes
        let forwarder = Task.detached {
            for await event in events { inbox.push(event) }
        }
        let live = LiveSync(library: library, configuration: .init(rescanInterval: rescanInterval)) { _ in
            passes.increment()
            return .goOn
        }
        self.live = (Task.detached { try? await live.run() }, forwarder)
        await refreshList()
    }

    /// How many live sync passes ran (a front end shows it, so a user sees sync is alive).
    public var passCount: Int { passes.value }

    /// What happened since the last tick: the engine's events handled, the list refreshed every
    /// two seconds, a message dropped after six. True when there is something new to draw.
    public func tick(editing: Bool) async -> Bool {
        var changed = false
        let pending = inbox.drain()
        if !pending.isEmpty {
            await handle(pending, editing: editing)
            changed = true
        }
        if Date().timeIntervalSince(listedAt) > 2 {
            await refreshList()
            changed = true
        }
        if let message, !message.isError, Date().timeIntervalSince(message.shownAt) > 6 {
            self.message = nil
            changed = true
        }
        return changed
    }

    /// Stops live sync and waits for it to end.
    public func stopLive() async {
        guard let live else { return }
        live.sync.cancel()
        live.forwarder.cancel()
        await live.sync.value
        self.live = nil
    }

    // MARK: The status line

    /// Says what happened (the status line drops it after a while).
    public func show(_ text: String) { message = StatusMessage(text: text, isError: false, shownAt: Date()) }

    /// Says what went wrong (the status line keeps it until something else is said).
    public func fail(_ text: String) { message = StatusMessage(text: text, isError: true, shownAt: Date()) }

    /// Says what went wrong, in the words of AppSupport's ``AppError``.
    public func fail(_ error: any Error) { fail(AppError(error).message) }

    // MARK: The list

    /// Lists the documents again, keeping the chosen one chosen; shows each recovery report once.
    public func refreshList() async {
        listedAt = Date()
        let selectedID = documents.indices.contains(selected) ? documents[selected].id : nil
        documents = await library.list()
        cloudAvailable = await library.cloudAvailable
        if let selectedID, let index = documents.firstIndex(where: { $0.id == selectedID }) {
            selected = index
        }
        selected = max(0, min(selected, documents.count - 1))
        let reports = await library.recoveryReports
        for (id, report) in reports.sorted(by: { $0.key < $1.key }) where !recoveryShown.contains(id) {
            recoveryShown.insert(id)
            fail("recovered: \(report)")
        }
    }

    /// What the engine reported meanwhile: the open document is read again when a peer changed
    /// it (unless it is being edited: then the user is told, and leaving edit mode saves on top)
    /// and closed when it was deleted; the list is refreshed.
    public func handle(_ events: [LibraryEvent], editing: Bool) async {
        var refreshDetail = false
        for event in events {
            switch event {
            case .didImport(let id, _, let from):
                if id == open?.id {
                    if editing {
                        open?.peerChangedWhileEditing = true
                        show("\(from.joined(separator: ", ")) changed this document; leaving edit mode saves yours on top")
                    } else {
                        refreshDetail = true
                    }
                }
            case .becameViewable(let id):
                if id == open?.id { refreshDetail = true }
            case .documentRemoved(let id, let name):
                if id == open?.id {
                    open = nil
                    fail("\(name) was deleted")
                }
            case .cloudAvailability(let available, let detail):
                cloudAvailable = available
                if available { show(detail) } else { fail(detail) }
            case .containerChanged(let text), .failure(let text):
                fail(text)
            case .quarantined(let file):
                fail("quarantined \(file)")
            case .recovered(let id, let report):
                recoveryShown.insert(id)
                fail("recovered: \(report)")
            case .documentAdded, .objectsDidChange, .didSave, .downloadProgress:
                break
            }
        }
        await refreshList()
        if refreshDetail { await reloadDetail() }
    }

    /// A sync pass now (the `r` key); the open document is read again unless it is being edited.
    public func syncNow(editing: Bool) async {
        let report = await library.sync()
        await refreshList()
        if open != nil, !editing { await reloadDetail() }
        if let problem = report.problems.first {
            fail(problem.description)
        } else {
            show("synced: \(report.importedLogs) logs imported, \(report.exportedLogs) exported"
                + (report.discovered.isEmpty ? "" : ", found \(report.discovered.joined(separator: ", "))"))
        }
    }

    /// Adds a document (`TestDoc<N>`) and chooses it.
    public func create() async {
        do {
            let summary = try await library.create()
            await refreshList()
            if let index = documents.firstIndex(where: { $0.id == summary.id }) { selected = index }
            show("added \(summary.name)")
        } catch {
            fail(error)
        }
    }

    /// Deletes a document (into the trash; on every device for a cloud document).
    public func delete(_ document: DocumentSummary) async {
        do {
            try await library.delete(document.id)
            show("deleted \(document.name)")
        } catch {
            fail(error)
        }
        await refreshList()
    }

    // MARK: The detail

    /// Opens the detail (the seed's segue): copies the container first with
    /// CopyContainerOnSegue (the engine does it), and inspects the document so imported changes
    /// record latencies and, with EnablePing, are answered. False when it cannot be opened.
    public func openDetail(_ document: DocumentSummary) async -> Bool {
        guard document.viewable else {
            fail("\(document.name) is not viewable yet: waiting for its first import")
            return false
        }
        do {
            let detail = try await library.detail(document.id, segue: true)
            open = OpenDocument(id: document.id, name: detail.summary.name, detail: detail)
            await library.inspect(document.id)
            if let problem = detail.containerCopyProblem {
                fail(problem)
            } else if settings.copyContainerOnSegue {
                show("container copied to Documents/copyOfCloudContainer")
            }
            return true
        } catch {
            fail(error)
            return false
        }
    }

    /// Closes the detail; stops inspecting.
    public func leaveDetail() async {
        guard open != nil else { return }
        await library.inspect(nil)
        open = nil
        await refreshList()
    }

    /// Reads the open document again.
    public func reloadDetail() async {
        guard let id = open?.id else { return }
        do {
            let detail = try await library.detail(id)
            open?.detail = detail
            open?.name = detail.summary.name
        } catch {
            fail(error)
        }
    }

    /// Saves an edit of the open document made from `original` (a peer's save meanwhile is
    /// merged, not overwritten) and reads it again. `edits`: what the editor did at its
    /// places, saved as they are while no peer changed the text (nil: `text` is diffed).
    public func saveEdit(_ text: String, editedFrom original: String, edits: [TextEdit.Kind]? = nil) async {
        guard let id = open?.id else { return }
        if text != original {
            do {
                switch try await save(id, text, editedFrom: original, edits: edits) {
                case .mine: show("saved")
                case .mergedWithPeer: show("saved, with what a peer added meanwhile")
                case .keptBoth: show("saved; a peer changed the same part meanwhile: both versions kept, theirs first")
                }
            } catch {
                fail(error)
            }
        }
        await reloadDetail()
    }

    /// Sends a ping about the open document (EnablePing on).
    public func ping() async {
        guard settings.enablePing else {
            fail("EnablePing is off (s for settings)")
            return
        }
        do {
            try await library.startPing()
            show("ping sent")
            await reloadDetail()
        } catch {
            fail(error)
        }
    }

    // MARK: Trash, latencies, settings

    /// Reads the trash again.
    public func loadTrash() async { trashEntries = await library.trash() }

    /// Restores a trashed document as a new one and chooses it; false when it failed.
    public func restore(_ entry: TrashEntry) async -> Bool {
        var restoredOne = false
        do {
            let restored = try await library.restore(entry.id.description)
            show("restored \(entry.name) as \(restored.name)")
            await refreshList()
            if let index = documents.firstIndex(where: { $0.id == restored.id }) { selected = index }
            restoredOne = true
        } catch {
            fail(error)
        }
        trashEntries = await library.trash()
        return restoredOne
    }

    /// Reads the recorded latencies again.
    public func loadLatencies() { latencySamples = LatencyLog(url: setup.root.latenciesURL).read() }

    /// Turns a switch over in the settings file, resolves the settings again (flag >
    /// environment > file > default) and hands them to the library; says when a flag or the
    /// environment still wins.
    public func toggle(_ key: SettingKey) async {
        let wanted = !settings.bool(key)
        do {
            try setup.settingsFile.set(key, to: .bool(wanted))
            let resolved = try ResolvedSettings(
                flags: flags, environment: environment, file: try setup.settingsFile.read(), hostName: DeviceIdentity.hostName)
            settings = resolved
            await library.reload(settings: resolved)
            if resolved.bool(key) != wanted, let source = resolved.entries[key]?.source {
                fail("\(key.rawValue) saved as \(wanted ? "on" : "off") in the file, but the \(source.rawValue) value wins")
            } else {
                show("\(key.rawValue) \(wanted ? "on" : "off")")
            }
        } catch {
            fail(error)
        }
    }

    /// `text` saved as the editor's `edits` at their places, or diffed whole without them.
    private func save(_ id: DocumentID, _ text: String, editedFrom original: String, edits: [TextEdit.Kind]?) async throws -> TextMerge.Outcome {
        if let edits { return try await library.saveEditedText(id, text, editedFrom: original, edits: edits) }
        return try await library.saveEditedText(id, text, editedFrom: original)
    }

    /// Leaves cleanly: an edit still open is saved, the inspected document is released,
    /// outboxes are shipped and stores closed.
    public func finish(editedText: String?, editedFrom original: String?, edits: [TextEdit.Kind]? = nil) async {
        if let editedText, let original, editedText != original, let id = open?.id {
            _ = try? await save(id, editedText, editedFrom: original, edits: edits)
        }
        await library.inspect(nil)
        await library.flushAll()
        await library.closeAll()
    }
}
