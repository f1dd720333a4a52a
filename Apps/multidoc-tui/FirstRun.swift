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

    private var form: TerminalForm
    /// A missing container folder the user was told about: Enter again creates it.
    private var confirmCreate: URL?

    init(terminal: Terminal, device: DeviceInit, flags: [SettingKey: SettingValue], name: String?, container: String?) {
        self.terminal = terminal
        self.device = device
        self.flags = flags
        form = TerminalForm(fields: [
            .init(label: "Device name", hint: "the name peers see for this device", text: name ?? device.suggestedName),
            .init(label: "Container folder", hint: "a folder all devices reach; none: documents stay here",
                  text: container ?? device.environmentContainer ?? device.suggestedContainer),
        ])
    }

    /// Runs until the root is set up (its ``DeviceSetup``) or the user leaves (nil).
    mutating func run() -> DeviceSetup? {
        while !terminationRequested.load(ordering: .relaxed) {
            form.draw(
                on: terminal, title: "multidoc — set up this device",
                intro: ["No device root at \(device.root.path) yet.", "Answer two questions to make it (as 'multidoc init' would):"],
                footer: "Tab/Enter: next field · Enter on the last field: set up · Esc: quit, nothing made")
            guard let key = terminal.readKey() else { continue }
            switch form.handle(key) {
            case .cancel: return nil
            case .edited: confirmCreate = nil
            case .submit: if let setup = submit() { return setup }
            case .none: break
            }
        }
        return nil
    }

    /// Checks the form and, when it holds, makes the root; otherwise says what to change.
    private mutating func submit() -> DeviceSetup? {
        switch device.submit(name: form.text(0), container: form.text(1), flags: flags, confirmed: confirmCreate) {
        case .setUp(let setup):
            return setup
        case .confirmCreate(let url, let text):
            confirmCreate = url
            form.message = (text, false)
        case .refused(let field, let text):
            form.focus = field
            form.message = (text, true)
        }
        return nil
    }
}
