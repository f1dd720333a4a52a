import AppSupport
import Engine
import ArgumentParser
import Foundation
import TerminalUI

// Thin: parse, bootstrap, hand over to the UI loop. Errors outside the terminal UI are one
// line on stderr and an exit code from AppSupport's one table.
let options = CommandLineShape.parseOrExit(TUIOptions.self, nonNegative: ["--sync-interval": [0]])
let environment = ProcessInfo.processInfo.environment

/// Gives the terminal back, writes one line and exits with the error's code.
@MainActor
func fail(_ error: any Error, terminal: Terminal? = nil) -> Never {
    terminal?.stop()
    let failure = AppError(error)
    FileHandle.standardError.write(Data("multidoc-tui: error: \(failure.message)\n".utf8))
    exit(failure.exitCode)
}

installTerminationHandlers()
let terminal = Terminal()
let device: Device
do {
    device = try bootstrap(options, environment: environment)
    do { try terminal.start() } catch { fail(error, terminal: terminal) }
} catch EngineError.rootMissing(let path, let hint) {
    // A root that does not exist yet: on a terminal, the first-run screen sets it up.
    do { try terminal.start() } catch {
        fail(EngineError.rootMissing(path, hint: hint), terminal: terminal)
    }
    do {
        let setup = try DeviceInit(rootPath: options.device.root, environment: environment)
        var screen = FirstRunScreen(
            terminal: terminal, device: setup, flags: try options.device.settingFlags(),
            name: options.device.deviceName, container: options.device.container)
        guard screen.run() != nil else {
            terminal.stop()
            FileHandle.standardError.write(Data("multidoc-tui: nothing set up; run it again, or: \(hint)\n".utf8))
            exit(ExitStatus.rootUnusable.rawValue)
        }
        device = try bootstrap(options, environment: environment)
    } catch {
        fail(error, terminal: terminal)
    }
} catch {
    fail(error)
}

let app = TUIApp(device: device, terminal: terminal, syncInterval: .milliseconds(Int(options.syncInterval * 1000)))
let status = await app.run()
terminal.stop()
exit(status)
