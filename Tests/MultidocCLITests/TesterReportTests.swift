import Foundation
import Testing
import TestSupport

/// What a tester found scripting the CLI: `--json` that printed text or strings where the
/// documented shape has booleans and arrays, help and version that said what was not so, edits
/// that said "saved" with nothing saved, and negative numbers taken for options.
@Suite(.serialized, .offThePool) struct TesterReportTests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("tester") }

    /// `sync --watch --json` prints JSON Lines: one object per event, typed fields.
    @Test func syncWatchWithJSONPrintsOneObjectPerLine() async throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["sync", "--device-name", "B"], root: rootB).status == 0)
        let output = folder.appending("watch.jsonl")
        try Data().write(to: output)
        let watch = Process()
        watch.executableURL = try #require(ProductRunner.path(of: "multidoc"))
        watch.arguments = ["sync", "--watch", "--json", "--root", rootB, "--container", container]
        watch.standardOutput = try FileHandle(forWritingTo: output)
        watch.standardError = FileHandle.nullDevice
        try watch.run()
        defer {
            if watch.isRunning { kill(watch.processIdentifier, SIGKILL) }
            watch.waitUntilExit()
        }
        let lines = { (try? String(contentsOf: output, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? [] }
        // Edits until one is imported: the first may land before the watch looks.
        var imported: [String: Any]?
        for round in 0..<20 where imported == nil {
            #expect(try multidoc(["edit", "Notes", "--append", " \(round)", "--device-name", "A"], root: rootA).status == 0)
            _ = await eventually(timeout: .seconds(3)) { lines().contains { $0.contains("\"imported\"") } }
            imported = lines().compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .first { $0["event"] as? String == "imported" }
        }
        for line in lines() {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "not a JSON object: \(line)")
        }
        let event = try #require(imported, "\(lines())")
        #expect(event["from"] as? [String] == ["A"])
        #expect(event["updated"] as? Int == 1)
        #expect(event["inserted"] as? Int == 0)
        #expect((event["document"] as? String)?.count == 36)
        #expect(event["time"] is String)
    }

    /// `container copy --json`, `container adopt --json` and `inspect --json` print typed JSON;
    /// `container dump` takes the device options and `--json` as every command does.
    @Test func containerVerbsAndInspectPrintTypedJSON() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--device-name", "A"], root: rootA).status == 0)
        let copy = try multidoc(["container", "copy", folder.appending("copy").path, "--json"], root: rootA)
        #expect(copy.status == 0, "\(copy.stderr)")
        let copied = try #require(try json(copy) as? [String: Any], "\(copy.stdout)")
        #expect(copied["copiedTo"] as? String == folder.appending("copy").path)
        #expect(copied["skipped"] as? [String] == [])

        let adopt = try multidoc(["container", "adopt", "--json"], root: rootB)
        #expect(adopt.status == 0, "\(adopt.stderr)")
        let adopted = try #require(try json(adopt) as? [String: Any], "\(adopt.stdout)")
        #expect(adopted["cloudAvailable"] as? Bool == true)
        #expect(adopted["problems"] as? [String] == [])

        let identity = try #require(try FileManager.default.contentsOfDirectory(atPath: container + "/identity").first)
        let dump = try multidoc(["container", "dump", container + "/identity/" + identity, "--json"], root: rootA)
        #expect(dump.status == 0, "\(dump.stderr)")
        #expect(try json(dump) is [String: Any], "\(dump.stdout)")

        // With --ping-rounds it ends by itself; interrupted, it prints the same (below).
        let inspect = try multidoc(["inspect", "Notes", "--json", "--ping-rounds", "1", "--start-ping"], root: rootA)
        #expect(inspect.status == 0, "\(inspect.stderr)")
        let inspected = try #require(try json(inspect) as? [String: Any], "\(inspect.stdout)")
        #expect(inspected["name"] as? String == "Notes")
        #expect(inspected["pingsSent"] as? Int == 1)
        #expect(inspected["pingsAnswered"] is Int)
    }

    /// `container reset --yes --json` and `device new-identity --json` without `--yes` print JSON,
    /// not their text lines.
    @Test func resetAndANewIdentityNotTakenPrintJSON() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--device-name", "A"], root: rootA).status == 0)
        let preview = try multidoc(["device", "new-identity", "--json"], root: rootA)
        #expect(preview.status == 0, "\(preview.stderr)")
        let kept = try #require(try json(preview) as? [String: Any], "\(preview.stdout)")
        #expect(kept["changed"] as? Bool == false)
        #expect((kept["device"] as? String)?.count == 36)
        let reset = try multidoc(["container", "reset", "--yes", "--json"], root: rootA)
        #expect(reset.status == 0, "\(reset.stderr)")
        let emptied = try #require(try json(reset) as? [String: Any], "\(reset.stdout)")
        #expect((emptied["containerID"] as? String)?.count == 36)
        #expect(emptied["problems"] is [String])
    }

    /// `latencies --csv --json` is refused in one line rather than printing CSV under --json.
    @Test func latenciesRefusesCSVAndJSONTogether() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        let both = try multidoc(["latencies", "--csv", "--json"], root: rootA)
        #expect(both.status == 64)
        #expect(both.stdout.isEmpty)
        #expect(both.stderr.contains("--csv and --json are two forms of output; give one"), "\(both.stderr)")
        #expect(try json(try multidoc(["latencies", "--json"], root: rootA)) is [String: Any])
    }

    /// `inspect` without --ping-rounds runs until interrupted, and then still prints its
    /// summary (--json: the object).
    @Test func inspectInterruptedStillPrintsItsJSON() async throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--device-name", "A"], root: rootA).status == 0)
        let output = folder.appending("inspect.json")
        try Data().write(to: output)
        let inspect = Process()
        inspect.executableURL = try #require(ProductRunner.path(of: "multidoc"))
        inspect.arguments = ["inspect", "Notes", "--json", "--root", rootA, "--container", container]
        inspect.standardOutput = try FileHandle(forWritingTo: output)
        let errors = folder.appending("inspect.err")
        try Data().write(to: errors)
        inspect.standardError = try FileHandle(forWritingTo: errors)
        try inspect.run()
        // Its line on stderr says it has started (and takes a signal as the way to stop).
        let started = await eventually(timeout: .seconds(30)) {
            (try? String(contentsOf: errors, encoding: .utf8))?.contains("inspecting Notes until interrupted") == true
        }
        #expect(started)
        kill(inspect.processIdentifier, SIGTERM)
        let ended = await eventually(timeout: .seconds(30)) { !inspect.isRunning }
        if !ended { kill(inspect.processIdentifier, SIGKILL) }
        inspect.waitUntilExit()
        #expect(ended)
        let text = try String(contentsOf: output, encoding: .utf8)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
        #expect(summary["pingsSent"] as? Int == 0)
        #expect(summary["name"] as? String == "Notes")
    }

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

    /// `help` of a verb that does not exist says so and fails, instead of the main help.
    @Test func helpOfAnUnknownCommandFails() throws {
        defer { folder.remove() }
        let unknown = try multidoc(["help", "nonexist"])
        #expect(unknown.status == 64)
        #expect(unknown.stdout.isEmpty)
        #expect(unknown.stderr == "multidoc: error: unknown command 'nonexist' (see 'multidoc --help')\n", "\(unknown.stderr)")
        let typo = try multidoc(["help", "container", "stauts"])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("unknown command 'container stauts'; did you mean 'status'?"), "\(typo.stderr)")
        let known = try multidoc(["help", "container", "status"])
        #expect(known.status == 0)
        #expect(known.stdout.contains("Identity, devices, documents and tombstones"))
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

    /// Edits that change nothing say so, save nothing, and say so in `--json`'s `saved`.
    @Test func anEditThatChangesNothingSavesNothing() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "hello"], root: rootA).status == 0)
        let logs = { try FileManager.default.subpathsOfDirectory(atPath: container + "/documents").filter { $0.hasSuffix(".log") }.count }
        let before = try logs()
        for edit in [["--delete", "2", "0"], ["--insert", "2", ""], ["--append", ""], ["--text", "hello"]] {
            let result = try multidoc(["edit", "Notes"] + edit, root: rootA)
            #expect(result.status == 0, "\(edit): \(result.stderr)")
            #expect(result.stdout == "unchanged: nothing saved to Notes\n", "\(edit): \(result.stdout)")
        }
        let editor = try ProductRunner.run(
            "multidoc", ["edit", "Notes", "--root", rootA, "--container", container], environment: ["EDITOR": "true"])
        #expect(editor.stdout == "unchanged: nothing saved to Notes\n", "\(editor.stdout) \(editor.stderr)")
        let quiet = try multidoc(["edit", "Notes", "--delete", "0", "0", "--json"], root: rootA)
        #expect(try (json(quiet) as? [String: Any])?["saved"] as? Bool == false)
        #expect(try logs() == before)
        #expect(try multidoc(["history", "Notes"], root: rootA).stdout.split(separator: "\n").count == 3)
        // A position past the end is still refused, and a real edit still saves.
        #expect(try multidoc(["edit", "Notes", "--insert", "9", ""], root: rootA).status == 64)
        let saved = try multidoc(["edit", "Notes", "--insert", "5", "!", "--json"], root: rootA)
        #expect(try (json(saved) as? [String: Any])?["saved"] as? Bool == true)
        #expect(try logs() == before + 1)
    }

    /// `sync` says how many container files it quarantined in its summary line, with a warning
    /// per file; `--json` lists them.
    @Test func syncCountsTheFilesItQuarantined() throws {
        defer { folder.remove() }
        for name in ["Notes", "Plans"] { #expect(try multidoc(["new", name, "--device-name", "A"], root: rootA).status == 0) }
        #expect(try multidoc(["sync", "--device-name", "B"], root: rootB).status == 0)
        // A's next log of each document, garbage: B stops at it and quarantines it.
        let documents = try FileManager.default.contentsOfDirectory(atPath: container + "/documents").filter { UUID(uuidString: $0) != nil }
        #expect(documents.count == 2)
        for document in documents {
            let logs = container + "/documents/\(document)/logs"
            let writer = try #require(try FileManager.default.contentsOfDirectory(atPath: logs).first)
            try Data("garbage".utf8).write(to: URL(fileURLWithPath: "\(logs)/\(writer)/0000000000000002.log"))
        }
        let sync = try multidoc(["sync"], root: rootB)
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stdout == "imported 0 logs, exported 0, discovered 0, removed 0, 2 files quarantined (see the warnings for what to do)\n")
        let warnings = sync.stderr.split(separator: "\n").filter { $0.hasPrefix("multidoc: warning: ") && $0.contains("0000000000000002.log") }
        #expect(warnings.count == 2, "\(sync.stderr)")
        let report = try #require(try json(try multidoc(["sync", "--json"], root: rootB)) as? [String: Any])
        #expect((report["quarantined"] as? [String])?.count == 2, "\(report)")
    }

    /// `list` warns once about a document whose store is damaged: the table's problem, not also
    /// the pass's failure to open it.
    @Test func listWarnsOnceAboutADamagedStore() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "S1", "--device-name", "A"], root: rootA).status == 0)
        let store = try #require(
            FileManager.default.subpaths(atPath: rootA)?.first { $0.hasSuffix("/S1/store.sqlite") }, "no store for S1 in \(rootA)")
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: rootA + "/" + store))
        let list = try multidoc(["list"], root: rootA)
        #expect(list.status == 0, "\(list.stderr)")
        let warnings = list.stderr.split(separator: "\n").filter { $0.hasPrefix("multidoc: warning: ") }
        #expect(warnings.count == 1, "\(list.stderr)")
        #expect(warnings.first?.hasPrefix("multidoc: warning: S1: ") == true && warnings.first?.contains("not a valid store") == true, "\(list.stderr)")
        // sync names the document once too.
        let sync = try multidoc(["sync"], root: rootA)
        #expect(sync.stderr.contains("warning: S1: ") && !sync.stderr.contains("S1: document S1"), "\(sync.stderr)")
    }

    /// A negative number given to an option that takes a save, a position, a length, a count or
    /// seconds is named as such, by each executable.
    @Test(arguments: [
        ("multidoc", ["show", "Notes", "--at", "-1"], "bad value '-1' for --at; it must not be negative"),
        ("multidoc", ["revert", "Notes", "--to", "-2"], "bad value '-2' for --to; it must not be negative"),
        ("multidoc", ["edit", "Notes", "--insert", "-1", "x"], "bad value '-1' for --insert; it must not be negative"),
        ("multidoc", ["edit", "Notes", "--delete", "-1", "2"], "bad value '-1' for --delete; it must not be negative"),
        ("multidoc", ["edit", "Notes", "--delete", "1", "-2"], "bad value '-2' for --delete; it must not be negative"),
        ("multidoc", ["inspect", "Notes", "--ping-rounds", "-1"], "bad value '-1' for --ping-rounds; it must not be negative"),
        ("multidoc", ["demo", "--ping-rounds", "-3"], "bad value '-3' for --ping-rounds; it must not be negative"),
        ("multidocd", ["--rescan-interval", "-1"], "bad value '-1' for --rescan-interval; it must not be negative"),
        ("multidocd", ["--autosave-interval", "-0.5"], "bad value '-0.5' for --autosave-interval; it must not be negative"),
        ("multidocd", ["--ping-rounds", "-1"], "bad value '-1' for --ping-rounds; it must not be negative"),
        ("multidoc-tui", ["--sync-interval", "-1"], "bad value '-1' for --sync-interval; it must not be negative"),
    ])
    func aNegativeNumberIsNamedAsSuch(program: String, arguments: [String], message: String) throws {
        defer { folder.remove() }
        let result = try ProductRunner.run(program, arguments + ["--root", rootA, "--container", container])
        #expect(result.status == 64)
        let help = program == "multidoc" ? "multidoc \(arguments[0]) --help" : "\(program) --help"
        #expect(result.stderr == "\(program): error: \(message) (see '\(help)')\n", "\(result.stderr)")
    }

    /// The TUI does not serve the local API: asked to, it says whose option that is instead of
    /// starting with nothing listening.
    @Test func theTUIRefusesTheLocalAPIOption() throws {
        defer { folder.remove() }
        let result = try ProductRunner.run("multidoc-tui", ["--local-api", "17491", "--root", rootA, "--container", container])
        #expect(result.status == 64)
        #expect(result.stderr.contains("--local-api is multidocd's"), "\(result.stderr)")
    }

    /// An editor that takes its file away leaves nothing to save: one line saying so, not a
    /// Foundation error, and the text as it was.
    @Test func anEditorThatRemovesItsFileSavesNothingAndSaysWhy() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "kept"], root: rootA).status == 0)
        let editor = try ProductRunner.run(
            "multidoc", ["edit", "Notes", "--root", rootA, "--container", container], environment: ["EDITOR": "rm"])
        #expect(editor.status != 0)
        #expect(editor.stderr.contains("left no text") && !editor.stderr.contains("NSCocoaErrorDomain"), "\(editor.stderr)")
        let show = try multidoc(["show", "Notes", "--json"], root: rootA)
        #expect((try json(show) as? [String: Any])?["text"] as? String == "kept")
    }
}
