import AppSupport
import Engine
import Foundation
import Settings
import Synchronization
import TerminalUI

/// The first-run screen: on a root that does not exist yet, asks for the device's name and its
/// container folder and sets the root up as `multidoc init` does (AppSupport's ``DeviceInit``).
/// Nothing is made until the user presses Enter on a valid form; Esc leaves with nothing made.
@MainActor
struct FirstRunScreen {
    let terminal: Terminal
    let device: DeviceInit
    /// Setting flags given on the command line, remembered with the answers.
    let flags: [SettingKey: SettingValue]

    private var fields: [TextEditor]
    private var focus = 0
    private var message: (text: String, isError: Bool)?
    /// A missing container folder the user was told about: Enter again creates it.
    private var confirmCreate: URL?

    init(terminal: Terminal, device: DeviceInit, flags: [SettingKey: SettingValue], name: String?, container: String?) {
        self.terminal = terminal
        self.device = device
        self.flags = flags
        fields = [
            TextEditor(text: name ?? device.suggestedName),
            TextEditor(text: container ?? device.environmentContainer ?? device.suggestedContainer),
        ]
    }

    private static let labels = ["Device name", "Container folder"]
    private static let hints = [
        "the name peers see for this device",
        "a folder all devices reach; none: documents stay here",
    ]

    /// Runs until the root is set up (its ``DeviceSetup``) or the user leaves (nil).
    mutating func run() -> DeviceSetup? {
        while !terminationRequested.load(ordering: .relaxed) {
            draw()
            guard let key = terminal.readKey() else { continue }
            switch key {
            case .escape:
                return nil
            case .tab, .down:
                focus = (focus + 1) % fields.count
            case .up:
                focus = (focus + fields.count - 1) % fields.count
            case .enter:
                if focus < fields.count - 1 {
                    focus += 1
                } else if let setup = submit() {
                    return setup
                }
            case .backspace: edit { $0.backspace() }
            case .delete: edit { $0.deleteForward() }
            case .left: fields[focus].left()
            case .right: fields[focus].right()
            case .home: fields[focus].home()
            case .end: fields[focus].end()
            case .character(let scalar) where scalar.value >= 0x20: edit { $0.type(scalar) }
            default: break
            }
        }
        return nil
    }

    private mutating func edit(_ change: (inout TextEditor) -> Void) {
        change(&fields[focus])
        confirmCreate = nil
        message = nil
    }

    /// Checks the form and, when it holds, makes the root; otherwise says what to change.
    private mutating func submit() -> DeviceSetup? {
        switch device.submit(name: fields[0].text, container: fields[1].text, flags: flags, confirmed: confirmCreate) {
        case .setUp(let setup):
            return setup
        case .confirmCreate(let url, let text):
            confirmCreate = url
            message = (text, false)
        case .refused(let field, let text):
            focus = field
            message = (text, true)
        }
        return nil
    }

    private func draw() {
        terminal.clear()
        let columns = terminal.size.columns
        terminal.drawBar(" multidoc — set up this device", line: 0, style: [.title])
        terminal.draw("No device root at \(device.root.path) yet.", line: 2, column: 2)
        terminal.draw("Answer two questions to make it (as 'multidoc init' would):", line: 3, column: 2)
        let labelWidth = 20
        var cursor: (line: Int, column: Int)?
        for (index, field) in fields.enumerated() {
            let line = 5 + index * 3
            let focused = index == focus
            terminal.draw(Self.labels[index] + ":", line: line, column: 2, style: focused ? [.bold] : [])
            let width = max(10, columns - labelWidth - 4)
            let text = field.text
            // Long paths scroll: the end (where the cursor usually is) stays in view.
            let shown = TextWidth.of(text) < width ? text : "…" + String(text.suffix(width - 2))
            terminal.draw(TextWidth.pad(shown, to: width), line: line, column: labelWidth, width: width, style: focused ? [.underline, .accent] : [.underline])
            terminal.draw(Self.hints[index], line: line + 1, column: labelWidth, style: [.dim])
            if focused {
                let before = String(field.characters.prefix(field.cursor))
                let offset = TextWidth.of(text) < width ? TextWidth.of(before) : min(width - 1, 1 + TextWidth.of(String(before.suffix(width - 2))))
                cursor = (line, labelWidth + offset)
            }
        }
        if let message {
            terminal.draw(message.text, line: 12, column: 2, style: message.isError ? [.error] : [.accent])
        }
        terminal.drawBar(" Tab/Enter: next field · Enter on the last field: set up · Esc: quit, nothing made", line: terminal.size.lines - 1, style: [.reverse])
        terminal.placeCursor(cursor)
        terminal.refresh()
    }
}
