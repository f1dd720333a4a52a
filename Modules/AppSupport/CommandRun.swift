import ArgumentParser
import Foundation

/// Runs a command body, turning every error into one line on stderr (`multidoc: error: …`) and
/// an exit code. The warnings its sync passes collected are printed when it ends, except one
/// that says what the error says: a problem is reported once.
public func runCommand(_ body: () async throws -> Void) async throws {
    do {
        try await body()
        PassWarnings.pending.flush(except: nil)
    } catch let error as ExitCode {
        PassWarnings.pending.flush(except: nil)
        throw error
    } catch {
        let failure = AppError(error)
        PassWarnings.pending.flush(except: failure.message)
        printError("multidoc: error: \(failure.message)")
        throw ExitCode(failure.exitCode)
    }
}

/// The warnings of a command's sync passes, held until the command ends.
public final class PassWarnings: @unchecked Sendable {
    /// The running command's warnings (a process runs one command).
    public static let pending = PassWarnings()
    private let lock = NSLock()
    private var lines: [String] = []

    /// Holds `line` for the end of the command, once however often it comes.
    public func add(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        if !lines.contains(line) { lines.append(line) }
    }

    /// Prints the warnings once, leaving out any that contains `error`.
    public func flush(except error: String?) {
        lock.lock()
        let held = lines
        lines = []
        lock.unlock()
        for line in held where error.map({ !line.contains($0) }) ?? true {
            printError("multidoc: warning: \(line)")
        }
    }
}
