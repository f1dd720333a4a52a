import ArgumentParser
import Foundation
import Model

/// What the three executables do to a command line before and after ArgumentParser sees it:
/// options that every command takes are accepted before the verb, and a parser error becomes
/// one line with a suggestion.
public enum CommandLineShape {
    /// Moves the global options written before the verb (`multidoc --root X list`) to after
    /// it (`multidoc list --root X`), where ArgumentParser reads them. `valueOptions` take a
    /// value (`--root X` or `--root=X`), `flags` do not. Stops at the first other word.
    public static func globalOptionsLast(_ arguments: [String], valueOptions: Set<String>, flags: Set<String>) -> [String] {
        var leading: [String] = []
        var index = 0
        while index < arguments.count, arguments[index].hasPrefix("--"), arguments[index] != "--" {
            let word = arguments[index]
            let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
            if valueOptions.contains(name) {
                if word.contains("=") {
                    leading.append(word)
                    index += 1
                } else {
                    guard index + 1 < arguments.count else { break }
                    leading += [word, arguments[index + 1]]
                    index += 2
                }
            } else if flags.contains(name), !word.contains("=") {
                leading.append(word)
                index += 1
            } else {
                break
            }
        }
        guard !leading.isEmpty, index < arguments.count else { return arguments }
        var rest = Array(arguments[index...])
        if let separator = rest.firstIndex(of: "--") {
            rest.insert(contentsOf: leading, at: separator)
        } else {
            rest += leading
        }
        return rest
    }

    /// The first line of ArgumentParser's message, without its `Error: ` prefix, with a
    /// suggestion for an unknown verb or option: `verbs` are the subcommands at the place of
    /// the error, `options` the long options the command takes.
    public static func parserError(_ message: String, verbs: [String], options: [String]) -> String {
        var line = message.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? message
        if line.hasPrefix("Error: ") { line.removeFirst("Error: ".count) }
        // The documented form: lower case after "multidoc: error: ", like every other message.
        if let first = line.first, first.isUppercase, line.dropFirst().first?.isLowercase == true {
            line = first.lowercased() + line.dropFirst()
        }
        if let range = line.range(of: ". Did you mean") { line.replaceSubrange(range, with: "; did you mean") }
        guard !line.contains("did you mean") else { return line }
        if let typed = quoted(in: line, after: "unexpected argument '") {
            let suggestions = Suggestions.closest(to: typed, among: verbs)
            if !suggestions.isEmpty { return "unknown command '\(typed)'" + Suggestions.phrase(suggestions, quoted: true) }
        }
        if let typed = quoted(in: line, after: "unknown option '") {
            let suggestions = Suggestions.closest(to: typed, among: options)
            return line + Suggestions.phrase(suggestions, quoted: true)
        }
        return line
    }

    /// The first word that is neither an option nor the value of one (`valueOptions`): the
    /// verb, wherever the options put it; nil if there is none.
    public static func firstWord(_ arguments: [String], valueOptions: Set<String>) -> String? {
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            if word == "--" { return index + 1 < arguments.count ? arguments[index + 1] : nil }
            guard word.hasPrefix("-") else { return word }
            let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
            index += valueOptions.contains(name) && !word.contains("=") ? 2 : 1
        }
        return nil
    }

    /// Parses a command without subcommands, or exits: help and the version as ArgumentParser
    /// prints them, a parser error as one line (`program: error: …; did you mean …`, exit 64),
    /// the same form as `multidoc`'s; a negative number given to an option of `nonNegative` is
    /// named as such.
    public static func parseOrExit<Command: ParsableCommand>(
        _ type: Command.Type, nonNegative: NonNegativeOptions = [:], _ arguments: [String] = Array(CommandLine.arguments.dropFirst())
    ) -> Command {
        do {
            return try Command.parse(arguments)
        } catch {
            guard Command.exitCode(for: error) != .success else { Command.exit(withError: error) }
            let program = Command._commandName
            let line = negativeValue(in: arguments, options: nonNegative)
                ?? parserError(Command.message(for: error), verbs: [], options: longOptions(inHelp: Command.helpMessage()))
            exitWithParserError(line, program: program, help: program + " --help")
        }
    }

    /// Writes a parser error in the documented form (`program: error: line (see 'help')`) and
    /// exits with 64.
    public static func exitWithParserError(_ line: String, program: String, help: String) -> Never {
        FileHandle.standardError.write(Data("\(program): error: \(line) (see '\(help)')\n".utf8))
        Foundation.exit(ExitCode.validationFailure.rawValue)
    }

    /// Every `--long-option` named in a help text.
    public static func longOptions(inHelp help: String) -> [String] {
        var found: [String] = []
        var seen = Set<String>()
        for word in help.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "-") }) where word.hasPrefix("--") && word.count > 2 {
            let option = String(word)
            if seen.insert(option).inserted { found.append(option) }
        }
        return found
    }

    private static func quoted(in line: String, after prefix: String) -> String? {
        guard let start = line.range(of: prefix) else { return nil }
        let rest = line[start.upperBound...]
        guard let end = rest.firstIndex(of: "'") else { return nil }
        return String(rest[..<end])
    }
}
