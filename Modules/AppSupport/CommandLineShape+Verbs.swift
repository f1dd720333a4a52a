import ArgumentParser
import Foundation
import Model

extension CommandLineShape {
    /// Parses the command line of a program with verbs and runs the command it names. Global
    /// options may come before the verb; a parser error is one line in the documented form
    /// (`program: error: …`, exit 64) with a suggestion for a mistyped verb or option; a negative
    /// number given to an option of `nonNegative` is named as such; `help` of a verb that does
    /// not exist is an unknown command, not the main help.
    public static func runRoot<Root: ParsableCommand>(
        _ root: Root.Type, valueOptions: Set<String>, flags: Set<String>, nonNegative: NonNegativeOptions = [:],
        _ raw: [String] = Array(CommandLine.arguments.dropFirst())
    ) async {
        let arguments = globalOptionsLast(raw, valueOptions: valueOptions, flags: flags)
        let program = Root._commandName
        if let (line, help) = unknownHelpTopic(arguments, root: root) { exitWithParserError(line, program: program, help: help) }
        let command: any ParsableCommand
        do {
            command = try Root.parseAsRoot(arguments)
        } catch {
            guard Root.exitCode(for: error) != .success else { Root.exit(withError: error) }
            let path = commandPath(arguments, root: root)
            let deepest = path.last ?? Root.self
            let verbs = deepest.configuration.subcommands.map { $0._commandName }
            var line = parserError(Root.message(for: error), verbs: verbs, options: longOptions(inHelp: Root.helpMessage(for: deepest)))
            // A mistyped verb among options (`multidoc lsit --root X`): the verb is the mistake
            // to name, not the options the top level does not take.
            if path.isEmpty, let word = firstWord(arguments, valueOptions: valueOptions), !verbs.contains(word), word != "help" {
                line = "unknown command '\(word)'" + Suggestions.phrase(Suggestions.closest(to: word, among: verbs), quoted: true)
            } else if let negative = negativeValue(in: arguments, options: nonNegative) {
                line = negative
            }
            exitWithParserError(line, program: program, help: ([program] + path.map { $0._commandName }).joined(separator: " ") + " --help")
        }
        do {
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                var synchronous = command
                try synchronous.run()
            }
        } catch {
            Root.exit(withError: error)
        }
    }

    /// `help VERB…` where a verb does not exist (`multidoc help nonexist`, `multidoc help
    /// container nope`): the line that says so, with the verbs close to it, and the help to see;
    /// nil otherwise.
    static func unknownHelpTopic<Root: ParsableCommand>(_ arguments: [String], root: Root.Type) -> (line: String, help: String)? {
        guard arguments.first == "help" else { return nil }
        let topic = Array(arguments.dropFirst().prefix { !$0.hasPrefix("-") })
        let path = commandPath(topic, root: root)
        guard path.count < topic.count else { return nil }
        let typed = topic[path.count]
        if path.isEmpty, typed == "help" { return nil }
        let verbs = (path.last ?? Root.self).configuration.subcommands.map { $0._commandName }
        let named = (path.map { $0._commandName } + [typed]).joined(separator: " ")
        let help = ([Root._commandName] + path.map { $0._commandName }).joined(separator: " ") + " --help"
        return ("unknown command '\(named)'" + Suggestions.phrase(Suggestions.closest(to: typed, among: verbs), quoted: true), help)
    }

    /// The subcommands named at the start of `arguments`, outermost first.
    static func commandPath<Root: ParsableCommand>(_ arguments: [String], root: Root.Type) -> [any ParsableCommand.Type] {
        var path: [any ParsableCommand.Type] = []
        var current: any ParsableCommand.Type = root
        for word in arguments {
            guard let next = current.configuration.subcommands.first(where: { $0._commandName == word || $0.configuration.aliases.contains(word) }) else { break }
            path.append(next)
            current = next
        }
        return path
    }
}
