import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import Testing
import TestSupport

/// The TUI run for real in tmux (80×24) against a device root A and a container C, with peers
/// played by the engine in this process on root B.
@Suite(
    .serialized,
    .enabled(if: Tmux.shouldRun, "tmux is not installed and CI is not set: install tmux (apt-get install tmux) to run the TUI tests"),
    .timeLimit(.minutes(1))
)
struct TUITests {
    let folder: TemporaryDirectory
    var rootA: URL { folder.appending("A") }
    var rootB: URL { folder.appending("B") }
    var container: URL { folder.appending("C") }

    init() throws {
        folder = try TemporaryDirectory("tui")
        for url in [rootA, rootB, container] {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
    }

    /// Starts the TUI on root A.
    func startTUI() throws -> Tmux {
        let binary = try Product.tui()
        return try Tmux([binary.path, "--root", rootA.path, "--container", container.path, "--device-name", "tui",
                         "--sync-interval", "2"], directory: folder.url)
    }

    /// The screen line showing `text`, with its escape sequences (attributes) kept.
    func styledLine(_ tmux: Tmux, containing text: String) throws -> String? {
        try tmux.captureStyled().split(separator: "\n").first { $0.contains(text) }.map(String.init)
    }

    /// Whether an SGR sequence on the line turns on dim (parameter 2).
    static func isDim(_ line: String) -> Bool {
        line.components(separatedBy: "\u{1B}[").dropFirst().contains { sequence in
            guard let end = sequence.firstIndex(of: "m") else { return false }
            return sequence[..<end].split(separator: ";").contains("2")
        }
    }

    /// The engine in this process, as the apps build it.
    func library(root: URL, name: String, fastSave: Bool = true) throws -> DocumentLibrary {
        let setup = try DeviceSetup(
            rootPath: root.path, containerPath: container.path, flags: [.deviceName: .text(name), .fastSave: .bool(fastSave)],
            environment: [:], createRoot: false)
        var logger = Logger(label: "tui-tests")
        logger.logLevel = .critical
        return setup.makeLibrary(stores: .standard(options: StoreOptions()), logger: logger)
    }

    /// After importing a peer's document the TUI rests: the title's "sync N" stops growing
    /// while nothing changes (its own store and record writes never start a pass). The counter
    /// settling is waited for; the assertion is that it settles, and soon.
    @Test func theTUIStopsPassingOnceItHasImported() async throws {
        defer { folder.remove() }
        let binary = try Product.tui()
        let tmux = try Tmux([binary.path, "--root", rootA.path, "--container", container.path, "--device-name", "tui"], directory: folder.url)
        defer { tmux.kill() }
        try await tmux.waitFor("No documents yet")
        let peer = try library(root: rootB, name: "peer")
        let created = try await peer.create(name: try DocumentName("FromPeer"))
        try await peer.appendText(created.id, " and more")
        await peer.closeAll()
        try await tmux.waitFor("FromPeer")
        func passes() throws -> Int? {
            guard let title = try tmux.capture().split(separator: "\n").first,
                  let range = title.range(of: "sync ") else { return nil }
            return Int(title[range.upperBound...].prefix { $0.isNumber })
        }
        var last = -1
        var since = ContinuousClock.now
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline, ContinuousClock.now - since < .seconds(2) {
            let now = try passes() ?? -1
            if now != last { (last, since) = (now, .now) }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(ContinuousClock.now - since >= .seconds(2), "the TUI's pass count never settled (last \(last))")
        // Three on an idle machine; on a loaded one (a CI run with every suite beside it) the
        // peer's files land in more passes (7 once). A pass that starts another never settles.
        #expect(last >= 1 && last <= 8, "\(last) passes for one peer document")
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)
    }

    @Test func nAddsADocumentRow() async throws {
        defer { folder.remove() }
        let tmux = try startTUI()
        defer { tmux.kill() }
        try await tmux.waitFor("No documents yet")
        try tmux.send("n")
        _ = try await tmux.waitFor(all: ["TestDoc1", "created", "cloud"])
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)
    }

    @Test func editedUTF8TextReachesTheStore() async throws {
        defer { folder.remove() }
        let tmux = try startTUI()
        defer { tmux.kill() }
        try await tmux.waitFor("No documents yet")
        try tmux.send("n")
        try await tmux.waitFor("TestDoc1")
        try tmux.send("Enter")
        try await tmux.waitFor("e or Enter edits")
        try tmux.send("e")
        try await tmux.waitFor("editing")
        try tmux.type(" héllo 日本 🎉")
        try await tmux.waitFor("héllo 日本 🎉")
        try tmux.send("Escape")
        try await tmux.waitFor("saved")
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)

        let library = try library(root: rootA, name: "tui")
        let document = try #require(await library.list().first { $0.name == "TestDoc1" })
        let detail = try await library.detail(document.id)
        #expect(detail.text.contains("héllo 日本 🎉"), "store text: \(detail.text)")
        await library.closeAll()
    }

    @Test func aPeersNewDocumentAppearsWithoutAKeyPress() async throws {
        defer { folder.remove() }
        let tmux = try startTUI()
        defer { tmux.kill() }
        try await tmux.waitFor("No documents yet")
        let peer = try library(root: rootB, name: "peer")
        _ = try await peer.create(name: try DocumentName("FromPeer"))
        await peer.sync()
        _ = try await tmux.waitFor(all: ["FromPeer", "discovered"])
        await peer.closeAll()
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)
    }

    @Test func aPeersEditAppearsInTheOpenDetail() async throws {
        defer { folder.remove() }
        let peer = try library(root: rootB, name: "peer")
        let created = try await peer.create(name: try DocumentName("Shared"))
        await peer.sync()
        let tmux = try startTUI()
        defer { tmux.kill() }
        try await tmux.waitFor("Shared")
        // The row may still be waiting for its first import: Enter again until the detail opens.
        try tmux.send("Enter")
        try await tmux.waitFor("e or Enter edits") { try tmux.send("Enter") }
        try await peer.setText(created.id, "edited by the peer ✓ ünïcode")
        await peer.sync()
        try await tmux.waitFor("edited by the peer ✓ ünïcode")
        await peer.closeAll()
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)
    }

    @Test func qQuitsAndRestoresTheTerminal() async throws {
        defer { folder.remove() }
        let tmux = try startTUI()
        defer { tmux.kill() }
        try await tmux.waitFor("q quit")
        #expect(try tmux.pane("alternate_on") == "1")
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)
        #expect(try tmux.pane("alternate_on") == "0")
        #expect(try !tmux.capture().contains("q quit"))
    }

    @Test func sigtermLeavesCleanly() async throws {
        defer { folder.remove() }
        let tmux = try startTUI()
        defer { tmux.kill() }
        try await tmux.waitFor("q quit")
        let pid = try tmux.commandPID()
        #expect(kill(pid, SIGTERM) == 0)
        #expect(try await tmux.waitForExit() == 0)
        #expect(try tmux.pane("alternate_on") == "0")
    }

    @Test func dAndYDeletesADocumentAndTheTrashRestoresIt() async throws {
        defer { folder.remove() }
        let tmux = try startTUI()
        defer { tmux.kill() }
        try await tmux.waitFor("No documents yet")
        try tmux.send("n")
        try await tmux.waitFor("TestDoc1")
        try tmux.send("d")
        try await tmux.waitFor("Delete TestDoc1 on every device? (y/n)")
        try tmux.send("n")
        try await tmux.waitFor("kept TestDoc1")
        try tmux.send("d")
        try await tmux.waitFor("(y/n)")
        try tmux.send("y")
        try await tmux.waitFor("deleted TestDoc1")
        #expect(try tmux.capture().contains("No documents yet"))
        // The trash offers it back, as a new document.
        try tmux.send("t")
        try await tmux.waitFor(all: ["Trash — 1 document", "TestDoc1"])
        try tmux.send("Enter")
        try await tmux.waitFor("restored TestDoc1 as")
        #expect(!(try tmux.capture().contains("No documents yet")))
        try tmux.send("t")
        try await tmux.waitFor("The trash is empty")
        try tmux.send("Escape")
        try await tmux.waitFor("n new  Enter open")
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)
    }

    @Test func settingsToggleIsSavedAndApplied() async throws {
        defer { folder.remove() }
        let tmux = try startTUI()
        defer { tmux.kill() }
        try await tmux.waitFor("q quit")
        try tmux.send("s")
        try await tmux.waitFor("EnablePing")
        try tmux.send("Down", "Space")
        try await tmux.waitFor("EnablePing on")
        let file = try String(contentsOf: rootA.appendingPathComponent("settings.json"), encoding: .utf8)
        #expect(file.contains("\"EnablePing\" : true"), "settings.json: \(file)")
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)
    }

    @Test func latenciesShowStatisticsAndASparkline() async throws {
        defer { folder.remove() }
        let peer = Fixed.device(2)
        let document = DocumentID(Fixed.uuid(1))
        let samples = [12.0, 30.0, 18.0].enumerated().map { index, ms in
            LatencySample(at: Date(timeIntervalSince1970: 1_700_000_000 + Double(index)), document: document,
                          fromDevice: peer, fromName: "peer", oneWayMs: ms, roundTripMs: nil)
        }
        try LatencyLog(url: DeviceRoot(url: rootA).latenciesURL).append(samples)
        let tmux = try startTUI()
        defer { tmux.kill() }
        try await tmux.waitFor("q quit")
        try tmux.send("l")
        // The title can be on the screen before the body (CI caught the old list still below
        // it): wait until all of it is there.
        _ = try await tmux.waitFor(all: ["3 samples", "count 3", "p50 18.0 ms", "▁█▃"])
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)
    }

    @Test func aVanishedContainerIsAMessageNotACrash() async throws {
        defer { folder.remove() }
        let tmux = try startTUI()
        defer { tmux.kill() }
        try await tmux.waitFor("cloud ok")
        // Moved away, as an unmounted drive or a stopped replication engine leaves it.
        try FileManager.default.moveItem(at: container, to: folder.appending("C-gone"))
        try await tmux.waitFor("unavailable")
        try tmux.send("n")
        try await tmux.waitFor("TestDoc1")
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)
    }

    /// A root that does not exist yet gets the first-run screen: the name and container typed
    /// there are remembered (as `multidoc init` would), a missing container is created only
    /// after a second Enter, and the master list follows. Esc leaves nothing behind.
    @Test func aMissingRootGetsTheFirstRunScreen() async throws {
        defer { folder.remove() }
        let root = folder.appending("fresh")
        let shared = folder.appending("shared")
        let binary = try Product.tui()
        let tmux = try Tmux([binary.path, "--root", root.path], directory: folder.url)
        defer { tmux.kill() }
        try await tmux.waitFor("set up this device")
        for _ in 0..<40 { try tmux.send("BSpace") }
        try tmux.type("Desk")
        try tmux.send("Tab")
        for _ in 0..<40 { try tmux.send("BSpace") }
        try tmux.type(shared.path)
        try tmux.send("Enter")
        try await tmux.waitFor("does not exist: Enter creates it")
        #expect(!FileManager.default.fileExists(atPath: root.path), "nothing is made before the form is confirmed")
        try tmux.send("Enter")
        try await tmux.waitFor("No documents yet")
        let settings = try String(contentsOf: root.appendingPathComponent("settings.json"), encoding: .utf8)
        #expect(settings.contains("\"DeviceName\" : \"Desk\""), "\(settings)")
        #expect(settings.contains(shared.path), "\(settings)")
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: shared.path, isDirectory: &isFolder) && isFolder.boolValue)
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)

        let other = folder.appending("left")
        let leaving = try Tmux([binary.path, "--root", other.path], directory: folder.url)
        defer { leaving.kill() }
        try await leaving.waitFor("set up this device")
        try leaving.send("Escape")
        #expect(try await leaving.waitForExit() == 6)
        #expect(!FileManager.default.fileExists(atPath: other.path))
    }

    @Test func badFlagsAndNoTerminalAreOneLineAndAnExitCode() throws {
        defer { folder.remove() }
        let badFlag = try ProductRunner.run("multidoc-tui", ["--root", rootA.path, "--enable-ping", "maybe"])
        #expect(badFlag.status == 13)
        #expect(badFlag.stderr.contains("bad value 'maybe' for EnablePing"), "\(badFlag.stderr)")
        let noTerminal = try ProductRunner.run("multidoc-tui", ["--root", rootA.path])
        #expect(noTerminal.status == 1)
        #expect(noTerminal.stderr.contains("needs a terminal"), "\(noTerminal.stderr)")
    }

    @Test func aRowWaitingForItsFirstImportIsDimUntilItArrives() async throws {
        defer { folder.remove() }
        // FastSave off: the peer publishes the document but keeps its first log in the outbox.
        let peer = try library(root: rootB, name: "peer", fastSave: false)
        let tmux = try startTUI()
        defer { tmux.kill() }
        try await tmux.waitFor("No documents yet")
        _ = try await peer.create(name: try DocumentName("Later"))
        try await tmux.waitFor("Later")
        let dim = try #require(try styledLine(tmux, containing: "Later"))
        #expect(Self.isDim(dim), "not dim: \(dim.debugDescription)")
        #expect(dim.contains("Editing Disabled"))
        try tmux.send("Enter")
        try await tmux.waitFor("not viewable yet")
        await peer.sync()  // ships the log
        try await tmux.waitFor("100%")
        let normal = try #require(try styledLine(tmux, containing: "Later"))
        #expect(!Self.isDim(normal), "still dim: \(normal.debugDescription)")
        await peer.closeAll()
        try tmux.send("q")
        #expect(try await tmux.waitForExit() == 0)
    }
}
