import AppSupport
import ArgumentParser
import Engine
import Foundation
import Logging
import Model
import Settings

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

/// Runs a command body, turning every error into one line on stderr and an exit code. The
/// warnings its sync passes collected are printed when it ends, except one that says what the
/// error says: a problem is reported once.
func runCommand(_ body: () async throws -> Void) async throws {
    do {
        try await body()
        PassWarnings.pending.flush(except: nil)
    } catch let error as ExitCode {
        PassWarnings.pending.flush(except: nil)
        throw error
    } catch {
        let failure = AppError(error)
        PassWarnings.pending.flush(except: failure.message)
        FileHandle.standardError.write(Data("multidoc: error: \(failure.message)\n".utf8))
        throw ExitCode(failure.exitCode)
    }
}

/// The warnings of a command's sync passes, held until the command ends.
final class PassWarnings: @unchecked Sendable {
    static let pending = PassWarnings()
    private let lock = NSLock()
    private var lines: [String] = []

    func add(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        if !lines.contains(line) { lines.append(line) }
    }

    /// Prints the warnings once, leaving out any that contains `error`.
    func flush(except error: String?) {
        lock.lock()
        let held = lines
        lines = []
        lock.unlock()
        for line in held where error.map({ !line.contains($0) }) ?? true {
            FileHandle.standardError.write(Data("multidoc: warning: \(line)\n".utf8))
        }
    }
}

/// Prints a value as pretty JSON with sorted keys.
func printJSON(_ value: some Encodable) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .iso8601
    let data = try encoder.encode(value)
    print(String(decoding: data, as: UTF8.self))
}

/// Parses a document name typed by the user.
func documentName(_ raw: String) throws -> DocumentName {
    do { return try DocumentName(typed: raw) } catch { throw AppError(.invalidName, error.description, cause: error) }
}

