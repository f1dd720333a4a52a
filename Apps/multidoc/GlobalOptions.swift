import AppSupport
import ArgumentParser
import Engine
import Foundation
import Logging

/// Options every command takes: the device and its settings (AppSupport's
/// ``DeviceOptions``, shared with the TUI and the daemon), `--json` and `--verbose`.
struct GlobalOptions: ParsableArguments {
    @OptionGroup var device: DeviceOptions

    @Flag(name: .long, help: "Machine-readable JSON output.")
    var json = false

    @Flag(name: .long, help: "Log what happens to stderr.")
    var verbose = false

    /// The long options that take a value and those that do not: they may also come before
    /// the verb (``CommandLineShape/globalOptionsLast(_:valueOptions:flags:)``).
    static let valueOptionNames = DeviceOptions.valueOptionNames
    static let flagNames: Set<String> = ["--json", "--verbose"]

    var root: String? { device.root }
    var container: String? { device.container }

    /// The one bootstrap: resolves the device and builds its library with the real stores.
    /// `onContainerChange` answers when the container's identity changed (reset, or another
    /// container mounted): commands stay local unless the user runs `container adopt`.
    func bootstrap(
        createRoot: Bool = false, onContainerChange: @escaping @Sendable (String) -> ContainerChangeDecision = { _ in .stayLocal }
    ) throws -> (DeviceSetup, DocumentLibrary) {
        let setup = try device.setup(environment: ProcessInfo.processInfo.environment, createRoot: createRoot)
        var logger = Logger(label: "multidoc")
        // Without --verbose the command's own one-line error (and the pass's warnings) say what
        // went wrong; the engine's log lines would repeat it.
        logger.logLevel = verbose ? .info : .critical
        let library = setup.openLibrary(logger: logger, onContainerChange: onContainerChange)
        for warning in setup.warnings { PassWarnings.pending.add(warning) }
        return (setup, library)
    }

    /// Opens the device's library, runs `body` on it and closes every document it opened,
    /// whether `body` returns or throws (the scope every command that touches documents runs in).
    func withLibrary<T: Sendable>(_ body: (DocumentLibrary) async throws -> T) async throws -> T {
        let (_, library) = try bootstrap()
        return try await library.closing(body)
    }
}
