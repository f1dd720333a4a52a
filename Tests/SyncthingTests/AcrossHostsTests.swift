import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import Syncthing
import Testing
import TestSupport

/// Two devices, each with its own container folder, joined by two real Syncthing instances on
/// loopback (`Tools/syncthing-pair`): what issue 9 calls "across hosts", on one machine.
@Suite(
    .serialized,
    .enabled(if: SyncthingAvailability.shouldRun, "syncthing is not installed (apt-get install syncthing); set CI=true to require these tests")
)
struct AcrossHostsTests {
    let folder: TemporaryDirectory
    let pair: SyncthingPair

    init() throws {
        folder = try TemporaryDirectory("across-hosts")
        do {
            pair = try SyncthingPair.start(in: folder.appending("pair"))
        } catch {
            folder.remove()
            throw error
        }
    }

    func root(_ name: String) -> URL { folder.appending("root-\(name)") }
    func side(_ name: String) -> SyncthingPair.Side { name == "A" ? pair.a : pair.b }

    /// The CLI on device `name`, its container being that device's own Syncthing folder.
    /// `nudge`: tell Syncthing about each file written (through its config.xml).
    func multidoc(_ name: String, _ arguments: [String], nudge: Bool = true) throws -> ProductRunner.Result {
        try FileManager.default.createDirectory(at: root(name), withIntermediateDirectories: true)
        var all = arguments + ["--root", root(name).path, "--container", side(name).folder.path, "--device-name", name]
        if nudge { all += ["--syncthing-config", side(name).config.path] }
        return try ProductRunner.run("multidoc", all)
    }

    func json(_ result: ProductRunner.Result) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    }

    func listed(_ name: String, nudge: Bool = true) throws -> [[String: Any]] {
        (json(try multidoc(name, ["list", "--json"], nudge: nudge)) as? [[String: Any]]) ?? []
    }

    func text(_ name: String, _ document: String, nudge: Bool = true) throws -> String? {
        let result = try multidoc(name, ["show", document, "--json"], nudge: nudge)
        guard result.status == 0 else { return nil }
        return (json(result) as? [String: Any])?["text"] as? String
    }

    func samples(_ name: String, document: String) -> [LatencySample] {
        LatencyLog(url: DeviceRoot(url: root(name)).latenciesURL).read().filter { $0.document.description == document }
    }

    @Test func createEditDeleteBurstAndPingTravelThroughSyncthing() async throws {
        defer {
            pair.stop()
            folder.remove()
        }
        let deadline = Duration.seconds(30)

        // Create on A → discovered, then viewable, on B.
        let created = try multidoc("A", ["new", "--json"])
        #expect(created.status == 0, "\(created.stderr)")
        let summary = try #require(json(created) as? [String: Any])
        let uuid = try #require(summary["uuid"] as? String)
        let textOnA = try #require(try text("A", uuid))
        var discovered: [String: Any]?
        let found = try await eventually(timeout: deadline) {
            discovered = try listed("B").first { $0["uuid"] as? String == uuid }
            return discovered != nil
        }
        #expect(found, "B never listed A's document")
        #expect(discovered?["name"] as? String == "TestDoc1")
        #expect(try await eventually(timeout: deadline) { try text("B", uuid) == textOnA }, "B never showed A's text")

        // Edit on B (without the nudge: only slower) → seen on A.
        let edit = try multidoc("B", ["edit", uuid, "--append", " and B"], nudge: false)
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(try await eventually(timeout: deadline) { try text("A", uuid) == textOnA + " and B" }, "A never saw B's edit")

        // Delete on A → gone on B.
        let removed = try multidoc("A", ["rm", uuid])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(try await eventually(timeout: deadline) { try !listed("B").contains { $0["uuid"] as? String == uuid } }, "B still lists the deleted document")

        try await burstOfEdits()
        try await pingRing()
    }

    /// A signed, encrypted container carried by Syncthing: B asks to join from its own replica,
    /// unlocks it with the passphrase, is admitted on A, and edits travel both ways; neither
    /// replica holds the document's name or text in cleartext.
    @Test func aSignedEncryptedContainerTravelsThroughSyncthing() async throws {
        defer {
            pair.stop()
            folder.remove()
        }
        let deadline = Duration.seconds(30)
        let created = try multidoc("A", ["new", "Secret Plans", "--json"])
        #expect(created.status == 0, "\(created.stderr)")
        let uuid = try #require((json(created) as? [String: Any])?["uuid"] as? String)
        #expect(try multidoc("A", ["edit", uuid, "--text", "the launch code is 1234"]).status == 0)
        #expect(try await eventually(timeout: deadline) { try text("B", uuid) == "the launch code is 1234" }, "B never showed A's text")

        let passphrase = folder.appending("passphrase")
        try Data("correct horse\n".utf8).write(to: passphrase)
        let encrypt = try multidoc("A", ["container", "upgrade", "--encrypt", "--passphrase-file", passphrase.path])
        #expect(encrypt.status == 0, "\(encrypt.stderr)")
        // B learns of it through Syncthing: it says it is locked until it is unlocked.
        #expect(try await eventually(timeout: deadline) { try multidoc("B", ["sync"]).stderr.contains("container unlock") }, "B never saw the container encrypted")
        #expect(try multidoc("B", ["container", "unlock", "--passphrase-file", passphrase.path]).status == 0)
        let fingerprintB = try #require((json(try multidoc("B", ["device", "list", "--json"])) as? [String: Any])?["thisFingerprint"] as? String)
        // A sees B ask to join once B's signed registry entry arrives, and admits it.
        #expect(try await eventually(timeout: deadline) { try multidoc("A", ["device", "admit", fingerprintB]).status == 0 }, "A never saw B ask to join")
        #expect(try multidoc("B", ["edit", uuid, "--append", " and B"]).status == 0)
        #expect(try await eventually(timeout: deadline) { try text("A", uuid) == "the launch code is 1234 and B" }, "A never saw B's edit")
        #expect(try multidoc("A", ["edit", uuid, "--append", " and A"]).status == 0)
        #expect(try await eventually(timeout: deadline) { try text("B", uuid) == "the launch code is 1234 and B and A" }, "B never saw A's edit")
        for side in [pair.a, pair.b] {
            let files = FileManager.default.enumerator(at: side.folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
            for file in files where !file.path.contains(".stfolder") {
                guard let data = try? Data(contentsOf: file) else { continue }
                #expect(data.range(of: Data("launch code".utf8)) == nil, "\(file.path) holds the text in cleartext")
                #expect(data.range(of: Data("Secret Plans".utf8)) == nil, "\(file.path) holds the name in cleartext")
            }
        }
    }

    /// 200 saves on A in a burst all reach B, each imported once, in order.
    func burstOfEdits() async throws {
        // A in process, composed the way the apps' bootstrap composes it.
        let setup = try DeviceSetup(
            rootPath: root("A").path, containerPath: pair.a.folder.path,
            flags: [.deviceName: .text("A"), .syncthingConfig: .text(pair.a.config.path)], environment: [:], createRoot: true)
        var logger = Logger(label: "test.A")
        logger.logLevel = .error
        let nudge = try #require(SyncthingNudge.fromSettings(setup.settings, container: setup.container, logger: logger))
        let library = setup.makeLibrary(stores: .standard(), logger: logger, containerObserver: nudge)
        let document = try await library.create(name: try DocumentName("Burst"))
        let uuid = document.id.description
        // Its first save, not just its info file (which may travel alone): a first save B's
        // daemon imports would count as one of the burst.
        let createdText = try await library.detail(document.id).text
        #expect(try await eventually(timeout: .seconds(30)) { try text("B", uuid) == createdText }, "B never showed the Burst document")

        let daemon = try Daemon(
            ["--root", root("B").path, "--container", pair.b.folder.path, "--device-name", "B", "--inspect", uuid, "--rescan-interval", "1"],
            environment: ["MULTIDOC_SYNCTHING_CONFIG": pair.b.config.path], log: folder.appending("burst-B.log"))
        #expect(await eventually(timeout: .seconds(30)) { FileManager.default.fileExists(atPath: DeviceRoot(url: root("B")).daemonStatusURL.path) })

        var expected = ""
        let started = ContinuousClock.now
        for index in 1...200 {
            expected += " e\(index)"
            try await library.setText(document.id, expected)
        }
        await library.closeAll()
        let saved = ContinuousClock.now - started
        let arrived = await eventually(timeout: .seconds(60)) { samples("B", document: uuid).filter { $0.fromName == "A" }.count >= 200 }
        let elapsed = ContinuousClock.now - started
        let fromA = samples("B", document: uuid).filter { $0.fromName == "A" }
        #expect(arrived, "B imported \(fromA.count) of A's 200 saves\n\(daemon.log)")
        #expect(fromA.count == 200, "each save imported exactly once")
        #expect(zip(fromA, fromA.dropFirst()).allSatisfy { $0.at <= $1.at })
        #expect(try text("B", uuid) == expected, "B's text is not A's last save")
        print("burst: 200 saves on A in \(saved), all imported on B after \(elapsed); nudge sent \(nudge.sent)")
        daemon.terminate()
        #expect(await daemon.waitForExit(timeout: .seconds(30)) == 0, "\(daemon.log)")
    }

    /// Both sides' daemons ping each other for 10 rounds through Syncthing.
    func pingRing() async throws {
        let created = try multidoc("A", ["new", "Ping", "--json"])
        #expect(created.status == 0, "\(created.stderr)")
        let uuid = try #require((json(created) as? [String: Any])?["uuid"] as? String)
        let createdText = try #require(try text("A", uuid))
        #expect(try await eventually(timeout: .seconds(30)) { try text("B", uuid) == createdText }, "B never showed the Ping document")

        let ping = ["--enable-ping", "on", "--inspect", uuid, "--ping-rounds", "10", "--exit-when-pings-done", "--rescan-interval", "1"]
        let started = ContinuousClock.now
        let b = try Daemon(
            ping + ["--root", root("B").path, "--container", pair.b.folder.path, "--device-name", "B"],
            environment: ["MULTIDOC_SYNCTHING_CONFIG": pair.b.config.path], log: folder.appending("ping-B.log"))
        let a = try Daemon(
            ping + ["--root", root("A").path, "--container", pair.a.folder.path, "--device-name", "A", "--start-ping"],
            environment: ["MULTIDOC_SYNCTHING_CONFIG": pair.a.config.path], log: folder.appending("ping-A.log"))
        let codeA = await a.waitForExit(timeout: .seconds(90))
        let codeB = await b.waitForExit(timeout: .seconds(90) - (ContinuousClock.now - started))
        #expect(codeA == 0, "A:\n\(a.log)")
        #expect(codeB == 0, "B:\n\(b.log)")
        let onA = samples("A", document: uuid), onB = samples("B", document: uuid)
        #expect(onA.count >= 9, "A recorded \(onA.count) samples")
        #expect(onB.count >= 10, "B recorded \(onB.count) samples")
        let oneWay = LatencyStatistics(milliseconds: (onA + onB).map(\.oneWayMs))
        let roundTrip = LatencyStatistics(milliseconds: (onA + onB).compactMap(\.roundTripMs))
        print("ping ring through Syncthing with the nudge: one-way p50 \(oneWay?.p50Ms ?? 0) ms max \(oneWay?.maxMs ?? 0) ms, round trip p50 \(roundTrip?.p50Ms ?? 0) ms; done in \(ContinuousClock.now - started)")
    }
}
