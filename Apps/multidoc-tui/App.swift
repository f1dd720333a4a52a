import AppSupport
import Engine
import Foundation
import Model
import Settings
import Synchronization
import TerminalUI

/// The screens, as the seed app had them, plus keys help.
enum Screen: Equatable {
    case master
    case detail
    case settings
    case latencies
    case trash
    case help
}

/// A line at the bottom: what happened, or what went wrong.
struct StatusMessage {
    var text: String
    var isError: Bool
    var shownAt: Date
}

/// The open detail: the document, its latest contents and the editor while editing.
struct DetailState {
    var id: DocumentID
    var name: String
    var detail: DocumentDetail?
    var editor: TextEditor?
    var scroll = 0
    /// A peer changed the document while it was being edited.
    var peerChangedWhileEditing = false
}

/// The UI: one loop on the main actor that draws, reads a key (waiting at most 100 ms) and
/// handles what the engine reported meanwhile. Engine calls never throw out of it: failures
/// become the message line.
@MainActor
final class TUIApp {
    let device: Device
    let terminal: Terminal
    let inbox = EventInbox()
    let passes = SyncPassCounter()
    let syncInterval: Duration

    var library: DocumentLibrary { device.library }
    var screen: Screen = .master
    var screenBeforeHelp: Screen = .master
    var documents: [DocumentSummary] = []
    var selected = 0
    var listScroll = 0
    var pendingDelete: DocumentSummary?
    var detailState: DetailState?
    var settingsCursor = 0
    var settings: ResolvedSettings
    var latencySamples: [LatencySample] = []
    /// The trash screen: what it lists and which row is chosen.
    var trashEntries: [TrashEntry] = []
    var trashCursor = 0
    var message: StatusMessage?
    var cloudAvailable = true
    var recoveryShown: Set<DocumentID> = []
    var quitRequested = false
    var needsDraw = true
    private var lastListRefresh = Date.distantPast

    init(device: Device, terminal: Terminal, syncInterval: Duration) {
        self.device = device
        self.terminal = terminal
        self.syncInterval = syncInterval
        self.settings = device.setup.settings
    }

    /// Runs until `q` or a termination signal; returns the exit status.
    func run() async -> Int32 {
        let events = await library.events()
        let inbox = inbox
        let forwarder = Task.detached {
            for await event in events { inbox.push(event) }
        }
        let library = library
        let interval = syncInterval
        let passes = passes
        let live = LiveSync(library: library, configuration: .init(rescanInterval: interval)) { _ in
            passes.increment()
            return .goOn
        }
        let sync = Task.detached { try? await live.run() }
        await refreshList()
        if device.setup.container == nil {
            show("no container (--container or MULTIDOC_CONTAINER): documents stay on this device")
        }
        while !quitRequested, !terminationRequested.load(ordering: .relaxed) {
            if needsDraw {
                draw()
                needsDraw = false
            }
            if let key = terminal.readKey() {
                needsDraw = true
                await handle(key)
            }
            let pending = inbox.drain()
            if !pending.isEmpty {
                await handle(pending)
                needsDraw = true
            }
            if Date().timeIntervalSince(lastListRefresh) > 2 {
                await refreshList()
                needsDraw = true
            }
            if let message, !message.isError, Date().timeIntervalSince(message.shownAt) > 6 {
                self.message = nil
                needsDraw = true
            }
        }
        await finish()
        sync.cancel()
        forwarder.cancel()
        await sync.value
        return 0
    }

    /// Leaves cleanly: a signal while editing still saves the edit, the inspected document is
    /// released, outboxes are shipped and stores closed.
    private func finish() async {
        if let editor = detailState?.editor, editor.isChanged, let id = detailState?.id {
            _ = try? await library.saveEditedText(id, editor.text, editedFrom: editor.original)
        }
        await library.inspect(nil)
        await library.flushAll()
        await library.closeAll()
    }

    // MARK: Messages

    func show(_ text: String) {
        message = StatusMessage(text: text, isError: false, shownAt: Date())
        needsDraw = true
    }

    func fail(_ text: String) {
        message = StatusMessage(text: text, isError: true, shownAt: Date())
        needsDraw = true
    }

    func fail(_ error: any Error) { fail(AppError(error).message) }

    // MARK: Engine

    func refreshList() async {
        lastListRefresh = Date()
        let selectedID = documents.indices.contains(selected) ? documents[selected].id : nil
        documents = await library.list()
        cloudAvailable = await library.cloudAvailable
        if let selectedID, let index = documents.firstIndex(where: { $0.id == selectedID }) {
            selected = index
        }
        selected = max(0, min(selected, documents.count - 1))
        await showRecoveryReports()
    }

    /// Error recovery's reports, shown once each.
    private func showRecoveryReports() async {
        let reports = await library.recoveryReports
        for (id, report) in reports.sorted(by: { $0.key < $1.key }) where !recoveryShown.contains(id) {
            recoveryShown.insert(id)
            fail("recovered: \(report)")
        }
    }

    private func handle(_ events: [LibraryEvent]) async {
        var refreshDetail = false
        for event in events {
            switch event {
            case .didImport(let id, _, let from):
                if id == detailState?.id {
                    if detailState?.editor != nil {
                        detailState?.peerChangedWhileEditing = true
                        show("\(from.joined(separator: ", ")) changed this document; leaving edit mode saves yours on top")
                    } else {
                        refreshDetail = true
                    }
                }
            case .becameViewable(let id):
                if id == detailState?.id { refreshDetail = true }
            case .documentRemoved(let id, let name):
                if id == detailState?.id {
                    detailState = nil
                    if screen == .detail { screen = .master }
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

    func reloadDetail() async {
        guard let id = detailState?.id else { return }
        do {
            let detail = try await library.detail(id)
            detailState?.detail = detail
            detailState?.name = detail.summary.name
        } catch {
            fail(error)
        }
    }

    // MARK: Keys

    private func handle(_ key: Key) async {
        if key == .resize { return }
        if let document = pendingDelete {
            pendingDelete = nil
            if key == .character("y") || key == .character("Y") {
                await delete(document)
            } else {
                show("kept \(document.name)")
            }
            return
        }
        switch screen {
        case .master: await handleMaster(key)
        case .detail: await handleDetail(key)
        case .settings: await handleSettings(key)
        case .latencies: handleLatencies(key)
        case .trash: await handleTrash(key)
        case .help: screen = screenBeforeHelp
        }
    }

    /// Keys every screen but the editor shares; true if handled.
    func handleCommon(_ key: Key) async -> Bool {
        switch key {
        case .character("q"), .character("Q"):
            await leaveDetail()
            quitRequested = true
        case .character("?"), .function(1):
            screenBeforeHelp = screen
            screen = .help
        case .character("r"):
            let report = await library.sync()
            await refreshList()
            if detailState != nil, detailState?.editor == nil { await reloadDetail() }
            if let problem = report.problems.first {
                fail(problem.description)
            } else {
                show("synced: \(report.importedLogs) logs imported, \(report.exportedLogs) exported" + (report.discovered.isEmpty ? "" : ", found \(report.discovered.joined(separator: ", "))"))
            }
        default:
            return false
        }
        return true
    }

    // MARK: Drawing

    private func draw() {
        terminal.clear()
        let (lines, columns) = terminal.size
        guard lines >= 8, columns >= 30 else {
            terminal.draw("Terminal too small (\(columns)×\(lines)); q quits", line: 0, column: 0)
            terminal.placeCursor(nil)
            terminal.refresh()
            return
        }
        var cursor: (line: Int, column: Int)?
        switch screen {
        case .master: drawMaster()
        case .detail: cursor = drawDetail()
        case .settings: drawSettings()
        case .latencies: drawLatencies()
        case .trash: drawTrash()
        case .help: drawHelp()
        }
        drawMessage()
        terminal.placeCursor(cursor)
        terminal.refresh()
    }

    /// The title bar: screen, device and cloud status.
    func drawTitle(_ title: String) {
        let cloud: String
        if device.setup.container == nil {
            cloud = "no container"
        } else {
            cloud = cloudAvailable ? "cloud ok" : "cloud UNAVAILABLE"
        }
        let right = "\(settings.deviceName) · \(cloud) · sync \(passes.value)"
        let columns = terminal.size.columns
        let rightWidth = min(TextWidth.of(right), max(0, columns - 12))
        terminal.drawBar(" " + title, line: 0, style: [.title, .bold])
        if rightWidth > 0 {
            terminal.draw(right, line: 0, column: columns - rightWidth - 1, width: rightWidth, style: [.title])
        }
    }

    /// The key hints on the last line.
    func drawKeys(_ hints: String) {
        terminal.drawBar(" " + hints, line: terminal.size.lines - 1, style: [.reverse])
    }

    private func drawMessage() {
        let line = terminal.size.lines - 2
        if let pendingDelete {
            terminal.drawBar("Delete \(pendingDelete.name)\(pendingDelete.location == .cloud ? " on every device" : "")? (y/n)", line: line, style: [.error])
        } else if let message {
            terminal.draw(message.text, line: line, column: 0, style: message.isError ? [.error] : [.good])
        }
    }
}
