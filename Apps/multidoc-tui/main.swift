import Engine
import ArgumentParser
import Foundation
import Settings

// Thin: parse, bootstrap, hand over to the UI loop. Errors before the terminal is taken over
// are one line on stderr and the CLI's exit codes.
let options = TUIOptions.parseOrExit()
let device: Device
do {
    device = try bootstrap(options, environment: ProcessInfo.processInfo.environment)
} catch let error as EngineError {
    FileHandle.standardError.write(Data("multidoc-tui: error: \(error.description)\n".utf8))
    exit(error.exitCode)
} catch {
    FileHandle.standardError.write(Data("multidoc-tui: error: \(describe(error))\n".utf8))
    exit(error is SettingsError ? 13 : 1)
}

installTerminationHandlers()
let terminal = Terminal()
do {
    try terminal.start()
} catch {
    terminal.stop()
    FileHandle.standardError.write(Data("multidoc-tui: error: \(error.description)\n".utf8))
    exit(1)
}
let app = TUIApp(device: device, terminal: terminal, syncInterval: .milliseconds(Int(options.syncInterval * 1000)))
let status = await app.run()
terminal.stop()
exit(status)
