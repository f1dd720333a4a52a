import Foundation
import Testing
import TestSupport

/// The first hour, as a new user lives it: `init` on two devices, remembered settings, and the
/// messages that say what to run when something is missing.
@Suite(.offThePool) struct FirstHourTests {
    let folder: TemporaryDirectory
    var home: URL { folder.url }

    init() throws {
        folder = try TemporaryDirectory("first-hour")
    }

    /// `multidoc` with HOME set to the test's folder and no MULTIDOC_* variables.
    func multidoc(_ arguments: [String], in directory: URL? = nil) throws -> ProductRunner.Result {
        try ProductRunner.run("multidoc", arguments, environment: ["HOME": home.path, "XDG_DATA_HOME": ""], directory: directory)
    }

    @Test func initRemembersTheNameAndTheContainerForEveryLaterCommand() throws {
        defer { folder.remove() }
        let devA = home.appendingPathComponent("devA").path, devB = home.appendingPathComponent("devB").path
        let shared = home.appendingPathComponent("shared").path

        // Before init, every verb says what to run.
        for verb in [["list"], ["new", "X"], ["settings", "list"]] {
            let early = try multidoc(verb + ["--root", devA])
            #expect(early.status == 6, "\(verb): \(early.stderr)")
            #expect(early.stderr.contains("multidoc init --root"), "\(verb): \(early.stderr)")
        }
        let noDefault = try multidoc(["list"])
        #expect(noDefault.status == 6 && noDefault.stderr.contains("set one up with: multidoc init\n"), "\(noDefault.stderr)")

        // A container that does not exist is an error that leaves nothing behind.
        let missing = try multidoc(["init", "--no-input", "--root", devA, "--device-name", "A", "--container", shared])
        #expect(missing.status == 7)
        #expect(missing.stderr.contains("does not exist") && missing.stderr.contains("--create-container"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: devA), "a refused init made the root")

        let initA = try multidoc(["init", "--no-input", "--root", devA, "--device-name", "A", "--container", shared, "--create-container"])
        #expect(initA.status == 0, "\(initA.stderr)")
        #expect(initA.stdout.contains("device A") && initA.stdout.contains(shared), "\(initA.stdout)")
        let initB = try multidoc(["init", "--no-input", "--root", devB, "--device-name", "B", "--container", shared, "--json"])
        #expect(initB.status == 0, "\(initB.stderr)")
        let output = try #require(try JSONSerialization.jsonObject(with: Data(initB.stdout.utf8)) as? [String: Any])
        #expect(output["device"] as? String == "B" && output["container"] as? String == shared && output["created"] as? Bool == true)

        // No --container, no --device-name from here on.
        #expect(try multidoc(["new", "Hello", "--root", devA]).status == 0)
        let list = try multidoc(["list", "--json", "--root", devB])
        #expect(list.status == 0, "\(list.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["name"] as? String } == ["Hello"])
        let status = try multidoc(["settings", "get", "DeviceName", "--root", devB])
        #expect(status.stdout == "B\n")

        // A device that synced and now has no container configured warns instead of going local silently.
        #expect(try multidoc(["settings", "set", "Container", "none", "--root", devB]).status == 0)
        let alone = try multidoc(["list", "--root", devB])
        #expect(alone.status == 0)
        #expect(alone.stderr.contains("no container is configured now"), "\(alone.stderr)")
        // Remembered again with a relative path: stored absolute.
        let relative = try multidoc(["settings", "set", "Container", "shared", "--root", devB], in: home)
        #expect(relative.status == 0, "\(relative.stderr)")
        #expect(try multidoc(["settings", "get", "Container", "--root", devB]).stdout == shared + "\n")
    }

    @Test func aContainerThatNeverExistedIsNotAnUnpluggedDrive() throws {
        defer { folder.remove() }
        let dev = home.appendingPathComponent("dev").path
        #expect(try multidoc(["init", "--no-input", "--root", dev]).status == 0)
        let typo = home.appendingPathComponent("shraed").path
        let sync = try multidoc(["sync", "--root", dev, "--container", typo])
        #expect(sync.status == 7)
        #expect(sync.stdout.isEmpty, "no success line before the error: \(sync.stdout)")
        #expect(sync.stderr.contains("does not exist") && sync.stderr.contains("mkdir -p"), "\(sync.stderr)")
        let new = try multidoc(["new", "Doc", "--root", dev, "--container", typo])
        #expect(new.status == 7, "\(new.stderr)")
    }
}

/// What a typo gets: one line in the documented form, an exit code, and a suggestion.
@Suite(.offThePool) struct ParserErrorTests {
    @Test(arguments: [
        (["lsit"], "multidoc: error: unknown command 'lsit'; did you mean 'list'?"),
        (["list", "--rot", "x"], "multidoc: error: unknown option '--rot'; did you mean '--root'?"),
        (["container", "verfy"], "multidoc: error: unknown command 'verfy'; did you mean 'verify'?"),
        (["settings", "get", "Fastsav", "--root", "/nonexistent-root"], "multidoc: error: unknown setting 'Fastsav'; did you mean FastSave?"),
    ])
    func aTypoGetsOneLineAndASuggestion(arguments: [String], start: String) throws {
        let result = try ProductRunner.run("multidoc", arguments)
        #expect(result.status == 64 || result.status == 13, "\(result.status)")
        #expect(result.stderr.hasPrefix(start), "\(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
    }

    @Test func globalOptionsWorkBeforeTheVerbAndEveryExecutableHasAVersion() throws {
        let folder = try TemporaryDirectory("global-options")
        defer { folder.remove() }
        let root = folder.appending("dev").path
        #expect(try ProductRunner.run("multidoc", ["--root", root, "init", "--no-input", "--device-name", "D"]).status == 0)
        let created = try ProductRunner.run("multidoc", ["--root", root, "--json", "new", "Before"])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("\"name\" : \"Before\""))
        let shown = try ProductRunner.run("multidoc", ["--root=\(root)", "show", "before"])
        #expect(shown.status == 3)
        #expect(shown.stderr.contains("did you mean 'Before'?"), "\(shown.stderr)")
        for product in ["multidoc", "multidocd", "multidoc-tui"] {
            let version = try ProductRunner.run(product, ["--version"])
            #expect(version.status == 0 && version.stdout.hasPrefix("\(product) "), "\(product): \(version.stdout)\(version.stderr)")
        }
    }

    @Test func everyGlobalOptionIsOneEveryCommandTakes() throws {
        let help = try ProductRunner.run("multidoc", ["list", "--help"]).stdout
        for option in ["--root", "--container", "--store", "--journal", "--device-name", "--fast-save", "--enable-ping",
                       "--copy-container-on-segue", "--attempt-error-recovery", "--use-cloud", "--syncthing-address",
                       "--syncthing-key", "--syncthing-folder", "--syncthing-config", "--json", "--verbose"] {
            #expect(help.contains(option), "\(option) is not in list --help")
        }
    }
}
