import AppSupport
import Model
import Testing

@Suite struct CommandLineShapeTests {
    let values: Set<String> = ["--root", "--container"]
    let flags: Set<String> = ["--json"]

    @Test func globalOptionsBeforeTheVerbMoveAfterIt() {
        #expect(CommandLineShape.globalOptionsLast(["--root", "X", "list"], valueOptions: values, flags: flags) == ["list", "--root", "X"])
        #expect(CommandLineShape.globalOptionsLast(["--root=X", "--json", "show", "Doc"], valueOptions: values, flags: flags)
            == ["show", "Doc", "--root=X", "--json"])
        // Before a `--` that ends the options.
        #expect(CommandLineShape.globalOptionsLast(["--json", "edit", "--", "-x"], valueOptions: values, flags: flags) == ["edit", "--json", "--", "-x"])
        // Anything else is left for the parser to judge.
        #expect(CommandLineShape.globalOptionsLast(["list", "--root", "X"], valueOptions: values, flags: flags) == ["list", "--root", "X"])
        #expect(CommandLineShape.globalOptionsLast(["--help"], valueOptions: values, flags: flags) == ["--help"])
        #expect(CommandLineShape.globalOptionsLast(["--root"], valueOptions: values, flags: flags) == ["--root"])
        #expect(CommandLineShape.globalOptionsLast(["--root", "X"], valueOptions: values, flags: flags) == ["--root", "X"])
    }

    @Test func parserErrorsAreOneLineWithASuggestion() {
        let verb = CommandLineShape.parserError(
            "Error: Unexpected argument 'lsit'\nUsage: multidoc <subcommand>\n  See 'multidoc --help' for more information.",
            verbs: ["list", "new", "show"], options: [])
        #expect(verb == "unknown command 'lsit'; did you mean 'list'?")
        let option = CommandLineShape.parserError("Error: Unknown option '--contianer'", verbs: [], options: ["--container", "--root"])
        #expect(option == "unknown option '--contianer'; did you mean '--container'?")
        let nothingClose = CommandLineShape.parserError("Error: Unexpected argument 'zebra'", verbs: ["list"], options: [])
        #expect(nothingClose == "unexpected argument 'zebra'")
        #expect(CommandLineShape.longOptions(inHelp: "  --root <dir>  The root.\n  --json  JSON.\n  -h, --help") == ["--root", "--json", "--help"])
    }

    @Test func suggestionsAreCloseMatchesIgnoringCase() {
        #expect(Suggestions.closest(to: "testdoc1", among: ["TestDoc1", "TestDoc2", "Other"]) == ["TestDoc1", "TestDoc2"])
        #expect(Suggestions.closest(to: "TestDco1", among: ["TestDoc1", "Notes"]) == ["TestDoc1"])
        #expect(Suggestions.closest(to: "x", among: ["list", "new"]).isEmpty)
        #expect(Suggestions.closest(to: "", among: ["list"]).isEmpty)
        #expect(Suggestions.phrase(["a", "b", "c"], quoted: true) == "; did you mean 'a', 'b' or 'c'?")
        #expect(Suggestions.phrase([]) == "")
    }

    /// A negative number is named only where the option's value is a number that must not be
    /// negative: not a text that happens to look like one, not after `--`.
    @Test func aNegativeNumberIsNamedOnlyWhereANumberBelongs() {
        let options: CommandLineShape.NonNegativeOptions = ["--at": [0], "--insert": [0], "--delete": [0, 1]]
        let named = { (arguments: [String]) in CommandLineShape.negativeValue(in: arguments, options: options) }
        #expect(named(["show", "Doc", "--at", "-1"]) == "bad value '-1' for --at; it must not be negative")
        #expect(named(["show", "Doc", "--at=-1"]) == "bad value '-1' for --at; it must not be negative")
        #expect(named(["edit", "Doc", "--delete", "2", "-0.5"]) == "bad value '-0.5' for --delete; it must not be negative")
        #expect(named(["edit", "Doc", "--insert", "-3", "x"]) == "bad value '-3' for --insert; it must not be negative")
        // --insert's second value is its text.
        #expect(named(["edit", "Doc", "--insert", "2", "-1"]) == nil)
        #expect(named(["edit", "Doc", "--text", "-1"]) == nil)
        #expect(named(["edit", "--", "Doc", "--at", "-1"]) == nil)
        #expect(named(["show", "Doc", "--at", "-x"]) == nil)
    }
}
