import Foundation
import Testing
import TestSupport

/// What a tester found scripting the CLI: `--json` that printed text or strings where the
/// documented shape has booleans and arrays, help and version that said what was not so, edits
/// that said "saved" with nothing saved, and negative numbers taken for options.
@Suite(.serialized, .offThePool) struct TesterReportTests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("tester") }

    /// `--version` names the container format new containers are written in.
    @Test func versionNamesTheFormatNewContainersHave() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        let status = try #require(try json(try multidoc(["container", "status", "--json"], root: rootA)) as? [String: Any])
        let format = try #require(status["format"] as? Int)
        for program in ["multidoc", "multidocd", "multidoc-tui"] {
            let version = try ProductRunner.run(program, ["--version"])
            #expect(version.stdout.contains("(container format \(format))"), "\(program): \(version.stdout)")
        }
    }

    /// A time before every save is refused in plain words.
    @Test func aTimeBeforeEverySaveIsRefusedInPlainWords() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "hello"], root: rootA).status == 0)
        let before = try multidoc(["show", "Notes", "--at", "2020-01-01"], root: rootA)
        #expect(before.status == 3)
        #expect(before.stderr.contains("its history has no save at or before that time"), "\(before.stderr)")
    }
}
