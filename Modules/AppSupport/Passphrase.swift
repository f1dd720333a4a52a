#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Where a command reads a container passphrase: `--passphrase-file`, then the environment
/// (`MULTIDOC_PASSPHRASE`), then the terminal (without echo; asked twice when `confirm`), then
/// one line of standard input. Never from a command-line argument (other users see those).
public enum Passphrase {
    public static let environmentVariable = "MULTIDOC_PASSPHRASE"

    /// - Throws: ``AppError`` (usage) for an empty passphrase, a file that cannot be read, or
    ///   two entries that differ.
    public static func read(file: String?, environment: [String: String], confirm: Bool) throws -> String {
        if let file {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: file))
            } catch {
                throw AppError(.usage, "cannot read the passphrase file \(file): \(error.localizedDescription)")
            }
            return try nonEmpty(String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? "")
        }
        if let value = environment[environmentVariable] { return try nonEmpty(value) }
        if isatty(STDIN_FILENO) == 1 {
            let first = try prompt("container passphrase: ")
            if confirm, try prompt("again: ") != first { throw AppError(.usage, "the two passphrases differ; nothing was changed") }
            return try nonEmpty(first)
        }
        return try nonEmpty(Swift.readLine(strippingNewline: true) ?? "")
    }

    private static func nonEmpty(_ value: String) throws -> String {
        guard !value.isEmpty else {
            throw AppError(.usage, "empty passphrase; give one with --passphrase-file, \(environmentVariable) or at the prompt")
        }
        return value
    }

    /// Reads a line from the terminal with echo off.
    private static func prompt(_ text: String) throws -> String {
        FileHandle.standardError.write(Data(text.utf8))
        var saved = termios()
        let hasTerminal = tcgetattr(STDIN_FILENO, &saved) == 0
        if hasTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(STDIN_FILENO, TCSANOW, &quiet)
        }
        defer {
            if hasTerminal { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
            FileHandle.standardError.write(Data("\n".utf8))
        }
        return Swift.readLine(strippingNewline: true) ?? ""
    }
}
