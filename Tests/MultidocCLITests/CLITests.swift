import Foundation
import Testing
import TestSupport

/// The CLI run as separate processes: two device roots, one container.
@Suite(.serialized, .offThePool) struct CLITests: TwoDevices {
    let folder: TemporaryDirectory

    init() throws { folder = try Self.makeFolder("cli") }

    @Test func newOnAIsListedOnBThenEditedOnBAndShownOnA() throws {
        defer { folder.remove() }
        let created = try multidoc(["new", "--device-name", "A"], root: rootA)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.hasPrefix("TestDoc1\t"))
        let list = try multidoc(["list", "--json", "--device-name", "B"], root: rootB)
        #expect(list.status == 0, "\(list.stderr)")
        let rows = try #require(try json(list) as? [[String: Any]])
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(row["name"] as? String == "TestDoc1")
        #expect(row["origin"] as? String == "discovered")
        #expect(row["viewable"] as? Bool == true)
        #expect(row["downloadPercent"] as? Int == 100)
        #expect(row["location"] as? String == "cloud")
        for key in ["uuid", "state", "modified"] { #expect(row[key] != nil, "missing \(key)") }
        let edit = try multidoc(["edit", "TestDoc1", "--append", " from B"], root: rootB)
        #expect(edit.status == 0, "\(edit.stderr)")
        let show = try multidoc(["show", "TestDoc1", "--json"], root: rootA)
        #expect(show.status == 0, "\(show.stderr)")
        let detail = try #require(try json(show) as? [String: Any])
        #expect((detail["text"] as? String)?.hasSuffix(" from B") == true)
        for key in ["name", "uuid", "state", "modified", "text"] { #expect(detail[key] != nil, "missing \(key)") }
    }

    @Test func aJSONStoreOnOneSideSyncsWithSQLiteOnTheOther() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Notes", "--store", "json"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Notes", "--text", "héllo 日本 🎉", "--store", "sqlite"], root: rootB).status == 0)
        let show = try multidoc(["show", "Notes", "--json"], root: rootA)
        let detail = try #require(try json(show) as? [String: Any])
        #expect(detail["text"] as? String == "héllo 日本 🎉")
        let rows = try #require(try json(try multidoc(["list", "--json"], root: rootA)) as? [[String: Any]])
        #expect(rows.first?["store"] as? String == "json")
    }

    @Test(arguments: [
        (["show", "nope"], Int32(3), "no document matches 'nope'"),
        (["new", "a/b"], Int32(5), "contains '/'"),
        (["new", ".."], Int32(5), "reserved"),
        (["new", ""], Int32(5), "empty"),
        (["new", String(repeating: "x", count: 300)], Int32(5), "300 bytes"),
        (["new", "tab\there"], Int32(5), "control character"),
        (["settings", "get", "Turbo"], Int32(13), "unknown setting 'Turbo'"),
        (["settings", "set", "FastSave", "maybe"], Int32(13), "bad value 'maybe' for FastSave"),
    ])
    func badInputGetsOneClearLineAndAnExitCode(arguments: [String], code: Int32, message: String) throws {
        defer { folder.remove() }
        let result = try multidoc(arguments, root: rootA)
        #expect(result.status == code, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(!result.stderr.contains("Fatal error"))
    }

    @Test func anAmbiguousNameListsTheCandidates() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Untitled"], root: rootA).status == 0)
        #expect(try multidoc(["new", "Untitled"], root: rootB).status == 0)
        let result = try multidoc(["show", "Untitled"], root: rootA)
        #expect(result.status == 4)
        #expect(result.stderr.contains("names 2 documents"))
        // Making a second name on one device says so at once.
        let again = try multidoc(["new", "Untitled"], root: rootA)
        #expect(again.status == 0)
        #expect(again.stderr.contains("documents are now named 'Untitled'"), "\(again.stderr)")
    }

    @Test func aMissingRootOrContainerIsNamed() throws {
        defer { folder.remove() }
        let missingRoot = try ProductRunner.run("multidoc", ["list", "--root", folder.appending("nowhere").path])
        #expect(missingRoot.status == 6)
        #expect(missingRoot.stderr.contains("no device root at") && missingRoot.stderr.contains("multidoc init --root"))
        let missingContainer = try ProductRunner.run("multidoc", ["container", "status", "--root", rootA, "--container", folder.appending("gone").path])
        #expect(missingContainer.status == 7)
        #expect(missingContainer.stderr.contains("gone"))
        // The TUI and the daemon refuse a container folder that never existed the same way,
        // before they start (one exit-code table for the three).
        let gone = folder.appending("gone").path
        for program in ["multidoc-tui", "multidocd"] {
            let result = try ProductRunner.run(program, ["--root", rootA, "--container", gone])
            #expect(result.status == 7, "\(program): \(result.stderr)")
            #expect(result.stderr.contains("\(program): error: container folder \(gone) does not exist"), "\(result.stderr)")
        }
    }

    /// A mistyped verb among options is named as the mistake, and every executable's parser
    /// errors are one line in the documented form.
    @Test func parserErrorsOfEveryExecutableAreOneLine() throws {
        defer { folder.remove() }
        let verb = try ProductRunner.run("multidoc", ["lsit", "--root", rootA, "--json"])
        #expect(verb.status == 64)
        #expect(verb.stderr == "multidoc: error: unknown command 'lsit'; did you mean 'list'? (see 'multidoc --help')\n")
        let before = try ProductRunner.run("multidoc", ["--root", rootA, "shwo", "Doc"])
        #expect(before.stderr.hasPrefix("multidoc: error: unknown command 'shwo'; did you mean 'show'?"), "\(before.stderr)")
        let daemon = try ProductRunner.run("multidocd", ["--rescan-intervall", "5"])
        #expect(daemon.status == 64)
        #expect(daemon.stderr == "multidocd: error: unknown option '--rescan-intervall'; did you mean '--rescan-interval'? (see 'multidocd --help')\n")
        let tui = try ProductRunner.run("multidoc-tui", ["--stroe", "json"])
        #expect(tui.status == 64)
        #expect(tui.stderr == "multidoc-tui: error: unknown option '--stroe'; did you mean '--store'? (see 'multidoc-tui --help')\n")
    }

    /// `list` downloads a document it discovers (a few at a time: past 64 it previews them), so
    /// what it calls downloaded shows with the container away.
    @Test func aListedDocumentIsMadeLocalWhenFirstOpened() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Listed", "--device-name", "A"], root: rootA).status == 0)
        #expect(try multidoc(["edit", "Listed", "--append", " and more"], root: rootA).status == 0)
        let rows = try #require(try json(try multidoc(["list", "--json", "--device-name", "B"], root: rootB)) as? [[String: Any]])
        #expect(rows.first?["viewable"] as? Bool == true && rows.first?["downloadPercent"] as? Int == 100)
        let gone = folder.appending("gone").path
        // Local now: shown with the container away.
        let offline = try ProductRunner.run("multidoc", ["show", "Listed", "--root", rootB, "--container", gone])
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stdout.contains(" and more"))
    }

    /// A name the root uses itself, one that displays as something else, or a UUID (which
    /// every command would take for another document's) is refused with exit 5; nothing is made.
    @Test func namesThatWouldMisleadAreRefused() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Kept", "--device-name", "A"], root: rootA).status == 0)
        for bad in ["document.json", "invoice\u{202E}txt.exe", "0b5e1c44-2d3f-4a5b-9c6d-7e8f90a1b2c3"] {
            let created = try multidoc(["new", bad], root: rootA)
            #expect(created.status == 5, "\(bad.debugDescription): \(created.stderr)")
            #expect(created.stderr.hasPrefix("multidoc: error: invalid document name"), "\(created.stderr)")
            let renamed = try multidoc(["rename", "Kept", bad], root: rootA)
            #expect(renamed.status == 5, "\(bad.debugDescription): \(renamed.stderr)")
        }
        let rows = try #require(try json(try multidoc(["list", "--json"], root: rootA)) as? [[String: Any]])
        #expect(rows.map { $0["name"] as? String } == ["Kept"])
    }

    @Test func syncSaysWhenThereIsNothingToSyncWith() throws {
        defer { folder.remove() }
        let none = try ProductRunner.run("multidoc", ["sync", "--root", rootA])
        #expect(none.status == 7)
        #expect(none.stderr.contains("no container is configured"))
        let gone = try ProductRunner.run("multidoc", ["sync", "--root", rootA, "--container", folder.appending("gone").path])
        #expect(gone.status == 7, "\(gone.stderr)")
        #expect(gone.stderr.contains("gone"))
    }

    @Test func settingsListShowsEverySettingWithItsSource() throws {
        defer { folder.remove() }
        #expect(try multidoc(["settings", "set", "EnablePing", "on"], root: rootA).status == 0)
        let result = try ProductRunner.run("multidoc", ["settings", "list", "--json", "--root", rootA, "--fast-save", "off"],
                                           environment: ["MULTIDOC_USE_CLOUD": "0"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = try #require(try json(result) as? [[String: Any]])
        let byKey = Dictionary(uniqueKeysWithValues: rows.compactMap { row in (row["key"] as? String).map { ($0, row) } })
        for key in ["FastSave", "EnablePing", "CopyContainerOnSegue", "AttemptErrorRecovery", "UseCloud", "DeviceName"] {
            #expect(byKey[key] != nil, "missing \(key)")
        }
        #expect(byKey["FastSave"]?["source"] as? String == "flag")
        #expect(byKey["UseCloud"]?["source"] as? String == "environment")
        #expect(byKey["EnablePing"]?["source"] as? String == "file")
        #expect(byKey["AttemptErrorRecovery"]?["source"] as? String == "default")
    }

    @Test func deleteOnADisappearsFromB() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new"], root: rootA).status == 0)
        #expect(try multidoc(["list"], root: rootB).stdout.contains("TestDoc1"))
        #expect(try multidoc(["rm", "TestDoc1"], root: rootA).status == 0)
        let rows = try #require(try json(try multidoc(["list", "--json"], root: rootB)) as? [[String: Any]])
        #expect(rows.isEmpty)
    }

    @Test func demoRunsAndReportsRealFigures() throws {
        defer { folder.remove() }
        let result = try ProductRunner.run("multidoc", ["demo", "--json", "--ping-rounds", "5"], timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try #require(try json(result) as? [String: Any])
        #expect(summary["discoveredOnB"] as? Bool == true)
        #expect(summary["viewableOnB"] as? Bool == true)
        #expect(summary["editSeenOnA"] as? Bool == true)
        #expect((summary["newToViewableMs"] as? Double ?? 0) > 0)
        let pings = try #require(summary["pingsSent"] as? [String: Int])
        #expect(pings["A"] == 5 && pings["B"] == 5)
        let oneWay = try #require(summary["oneWay"] as? [String: Any])
        #expect((oneWay["count"] as? Int ?? 0) >= 5)
        #expect((oneWay["p50Ms"] as? Double ?? 0) > 0)
        #expect(FileManager.default.fileExists(atPath: summary["folder"] as? String ?? "/") == false)
    }

    @Test func everyCommandHasHelp() throws {
        defer { folder.remove() }
        for command in ["demo", "new", "list", "show", "edit", "rm", "rename", "convert", "move-to-cloud", "move-to-local",
                        "sync", "settings", "latencies", "inspect", "container", "status"] {
            let result = try ProductRunner.run("multidoc", [command, "--help"])
            #expect(result.status == 0, "\(command)")
            #expect(result.stdout.contains("USAGE"), "\(command)")
        }
    }
}
