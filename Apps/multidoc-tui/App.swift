import AppSupport
import Engine
import Foundation
import Model
import Settings
import Sync
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

/// The open detail's view: the editor while editing, and how far the text is scrolled.
struct DetailView {
    var editor: TextEditor?
    var scroll = 0
}

/// The UI: one loop on the main actor that draws, reads a key (waiting at most 100 ms) and
/// handles what the engine reported meanwhile. Engine calls never throw out of it: failures
/// become the message line.
@MainActor
final class TUIApp {
    let device: Device
    let terminal: Terminal
    let syncInterval: Duration

    let model: LibraryModel
    var library: DocumentLibrary { device.library }
    var screen: Screen = .master
    var screenBeforeHelp: Screen = .master
    var listScroll = 0
    var pendingDelete: DocumentSummary?
    var view = DetailView()
    var settingsCursor = 0
    var trashCursor = 0
    var quitRequested = false
    var needsDraw = true

    init(device: Device, terminal: Terminal, syncInterval: Duration) {
        self.device = device
        self.terminal = terminal
        self.syncInterval = syncInterval
        model = LibraryModel(setup: device.setup, library: device.library, flags: device.flags, environment: device.environment)
    }

    /// Runs until `q` or a termination signal; returns the exit status.
    func run() async -> Int32 {
        await model.startLive(rescanInterval: syncInterval)
        if device.setup.container == nil {
            model.show("no container (--container or MULTIDOC_CONTAINER): documents stay on this device")
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
            if await model.tick(editing: view.editor != nil) {
                // The open document was deleted meanwhile.
                if model.open == nil, screen == .detail { (screen, view) = (.master, DetailView()) }
                needsDraw = true
            }
        }
        // A signal while editing still saves the edit.
        await model.finish(editedText: view.editor?.text, editedFrom: view.editor?.original, edits: view.editor?.edits.map(\.kind))
        await model.stopLive()
        return 0
    }

    // MARK: Keys

    private func handle(_ key: Key) async {
        if key == .resize { return }
        if let document = pendingDelete {
            pendingDelete = nil
            if key == .character("y") || key == .character("Y") {
                await model.delete(document)
            } else {
                model.show("kept \(document.name)")
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
            await model.syncNow(editing: view.editor != nil)
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
            cloud = model.cloudAvailable ? "cloud ok" : "cloud UNAVAILABLE"
        }
        let right = "\(model.settings.deviceName) · \(cloud) · sync \(model.passCount)"
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
        } else if let message = model.message {
            terminal.draw(message.text, line: line, column: 0, style: message.isError ? [.error] : [.good])
        }
    }
}
