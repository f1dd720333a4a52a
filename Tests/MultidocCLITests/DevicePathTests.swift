import Foundation
import Testing
import TestSupport

/// The folders a user names for a device root and a container: `none`, empty paths, paths
/// with control characters, a root and a container that overlap, a container that is a file,
/// and a copy of the container into itself. Each is refused with one line before anything is
/// made, by every command that takes it.
@Suite(.offThePool) struct DevicePathTests {
    let folder: TemporaryDirectory
    var devA: String { folder.appending("devA").path }
    var shared: String { folder.appending("shared").path }

    /// A temporary folder with device A set up on the container `shared`.
    init() throws {
        folder = try TemporaryDirectory("device-paths")
        let initA = try multidoc(["init", "--root", devA, "--device-name", "A", "--container", shared, "--create-container", "--no-input"])
        #expect(initA.status == 0, "\(initA.stderr)")
    }

    /// `multidoc` with HOME set to the test's folder, no MULTIDOC_* variables but `environment`'s.
    func multidoc(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws -> ProductRunner.Result {
        try ProductRunner.run(
            "multidoc", arguments, environment: ["HOME": folder.url.path, "XDG_DATA_HOME": ""].merging(environment) { _, given in given },
            directory: directory)
    }

    /// Every name in `path`, recursively: what a refused command must leave as it was.
    func everything(in path: URL) -> [String] {
        (FileManager.default.subpaths(atPath: path.path) ?? []).sorted()
    }

    /// The message is one line, and the command ends with `status`.
    func expectRefused(_ result: ProductRunner.Result, _ status: Int32, saying words: String, _ arguments: [String]) {
        #expect(result.status == status, "\(arguments): \(result.status) \(result.stderr)")
        #expect(result.stderr.contains(words), "\(arguments): \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): one line: \(result.stderr)")
    }

    @Test func containerNoneOnTheCommandLineMeansNoCloudAsTheSettingDoes() throws {
        defer { folder.remove() }
        let work = folder.appending("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        for spelling in ["none", "NONE"] {
            let status = try multidoc(["status", "--container", spelling, "--root", devA], in: work)
            #expect(status.status == 0, "\(spelling): \(status.stderr)")
            #expect(status.stdout.contains("container: none"), "\(spelling): \(status.stdout)")
            let new = try multidoc(["new", "Local-\(spelling)", "--container", spelling, "--root", devA], in: work)
            #expect(new.status == 0, "\(spelling): \(new.stderr)")
        }
        // Nothing was taken for a folder named none, neither here nor at /.
        #expect(everything(in: work).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: "/none"))
        // The documents made without a container are local; the container knows none of them.
        let list = try multidoc(["list", "--json", "--root", devA])
        #expect(list.status == 0, "\(list.stderr)")
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
        #expect(Set(rows.compactMap { $0["name"] as? String }) == ["Local-none", "Local-NONE"])
        #expect(rows.allSatisfy { $0["location"] as? String == "local" }, "\(list.stdout)")
    }

    @Test func anEmptyRootOrContainerIsRefusedByEveryCommand() throws {
        defer { folder.remove() }
        let work = folder.appending("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let devB = folder.appending("devB").path
        let emptyRoot: [[String]] = [
            ["init", "--root", "", "--device-name", "E", "--container", shared, "--no-input"],
            ["list", "--root", ""], ["status", "--root", ""], ["new", "X", "--root", ""], ["settings", "list", "--root", ""],
        ]
        for arguments in emptyRoot {
            expectRefused(try multidoc(arguments, in: work), 64, saying: "--root is empty", arguments)
        }
        let emptyContainer: [[String]] = [
            ["init", "--root", devB, "--device-name", "B", "--container", "", "--no-input"],
            ["list", "--root", devA, "--container", ""], ["sync", "--root", devA, "--container", ""],
            ["new", "X", "--root", devA, "--container", ""],
        ]
        for arguments in emptyContainer {
            expectRefused(try multidoc(arguments, in: work), 64, saying: "--container is empty", arguments)
        }
        for arguments in [["--root", ""], ["--root", devA, "--container", ""]] {
            let daemon = try ProductRunner.run("multidocd", arguments, environment: ["HOME": folder.url.path], directory: work)
            #expect(daemon.status == 64 && daemon.stderr.contains("is empty"), "\(arguments): \(daemon.stderr)")
        }
        // The folder the commands ran in did not become a device root, and B was not made.
        #expect(everything(in: work).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: devB))
        #expect(try multidoc(["list", "--root", devA]).stdout.split(separator: "\n").count == 1, "no document was made")
    }

    @Test func aRootAndAContainerThatOverlapAreRefused() throws {
        defer { folder.remove() }
        let containerBefore = everything(in: URL(fileURLWithPath: shared))
        // A root equal to or inside the container: the device key would be shared.
        let same = ["init", "--root", shared, "--device-name", "Z", "--container", shared, "--no-input"]
        expectRefused(try multidoc(same), 7, saying: "is the device root itself", same)
        let inside = ["init", "--root", shared + "/documents/devZ", "--device-name", "Z", "--container", shared, "--no-input"]
        expectRefused(try multidoc(inside), 6, saying: "is inside the container folder", inside)
        #expect(everything(in: URL(fileURLWithPath: shared)) == containerBefore, "nothing was written into the container")

        // A container inside the root, or another device's root (or a folder inside one).
        let devC = folder.appending("devC").path
        let nested = ["init", "--root", devC, "--device-name", "C", "--container", devC + "/sub", "--create-container", "--no-input"]
        expectRefused(try multidoc(nested), 7, saying: "is inside the device root", nested)
        #expect(!FileManager.default.fileExists(atPath: devC))
        let devD = folder.appending("devD").path
        for container in [devA, devA + "/Documents"] {
            let other = ["init", "--root", devD, "--device-name", "D", "--container", container, "--no-input"]
            expectRefused(try multidoc(other), 7, saying: "root of a device", other)
        }
        #expect(!FileManager.default.fileExists(atPath: devD))

        // The same check where the container is given later: a flag on any command, and the setting.
        let flag = ["list", "--root", devA, "--container", devA + "/sub"]
        expectRefused(try multidoc(flag), 7, saying: "is inside the device root", flag)
        let setting = ["settings", "set", "Container", devA, "--root", devA]
        expectRefused(try multidoc(setting), 7, saying: "is the device root itself", setting)
        #expect(try multidoc(["settings", "get", "Container", "--root", devA]).stdout == shared + "\n")
    }

    @Test func aControlCharacterInAPathIsRefusedAndAFailedInitLeavesNoRoot() throws {
        defer { folder.remove() }
        let before = everything(in: folder.url)
        let devN = folder.appending("devN").path
        let newline = ["init", "--root", devN, "--device-name", "N", "--container", folder.appending("sh\nared").path, "--create-container", "--no-input"]
        expectRefused(try multidoc(newline), 64, saying: "holds a control character (\\n)", newline)
        let tab = ["init", "--root", folder.appending("de\tvN").path, "--device-name", "N", "--container", shared, "--no-input"]
        expectRefused(try multidoc(tab), 64, saying: "holds a control character (\\t)", tab)
        #expect(everything(in: folder.url) == before, "a refused init made nothing")

        // An init that fails once the root is being made takes the root (and the container it made) away.
        let late = ["init", "--root", devN, "--device-name", "N", "--container", folder.appending("new-shared").path, "--create-container", "--no-input"]
        let failed = try multidoc(late, environment: ["MULTIDOC_CLOCK_OFFSET": "soon"])
        #expect(failed.status == 64, "\(failed.stderr)")
        #expect(everything(in: folder.url) == before, "a failed init left \(everything(in: folder.url))")
        // So the same init, given what it needs, works.
        let again = try multidoc(late)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try multidoc(["list", "--root", devN]).status == 0)
    }

    @Test func aCopyOfTheContainerIntoItselfIsRefusedBeforeCopying() throws {
        defer { folder.remove() }
        #expect(try multidoc(["new", "Doc", "--root", devA]).status == 0)
        let before = everything(in: URL(fileURLWithPath: shared))
        let inside = ["container", "copy", shared + "/inside", "--root", devA]
        expectRefused(try multidoc(inside), 64, saying: "is inside the container", inside)
        #expect(everything(in: URL(fileURLWithPath: shared)) == before, "nothing was copied")
        // Outside the container, the copy is made.
        let outside = folder.appending("copy").path
        let copy = try multidoc(["container", "copy", outside, "--root", devA])
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(everything(in: URL(fileURLWithPath: outside)) == before)
    }

    @Test func aFileAsTheContainerIsRefusedBySettingsSetAsByInit() throws {
        defer { folder.remove() }
        let file = folder.appending("file")
        try Data("not a folder".utf8).write(to: file)
        let initFile = try multidoc(["init", "--root", devA, "--container", file.path, "--no-input"])
        let setFile = try multidoc(["settings", "set", "Container", file.path, "--root", devA])
        let message = "\(file.path) is a file, not a folder; give a folder as the container"
        expectRefused(initFile, 7, saying: message, ["init"])
        expectRefused(setFile, 7, saying: message, ["settings", "set"])
        #expect(setFile.stderr == initFile.stderr)
        #expect(try multidoc(["settings", "get", "Container", "--root", devA]).stdout == shared + "\n")
        let flag = ["list", "--root", devA, "--container", file.path]
        expectRefused(try multidoc(flag), 7, saying: message, flag)
    }
}
