import Foundation
import Logging
import Model
import Settings
@testable import Sync
import Syncthing
import Testing
import TestSupport

/// Records what a nudge sends instead of talking to Syncthing.
final class RecordingTransport: @unchecked Sendable {
    private let lock = NSLock()
    private var requests: [HTTPRequest] = []
    private var status: Int
    private var failure: (any Error)?
    let delay: Duration

    init(status: Int = 200, delay: Duration = .zero) {
        self.status = status
        self.delay = delay
    }

    var transport: SyncthingNudge.Transport {
        { [self] request in
            if delay > .zero { try? await Task.sleep(for: delay) }
            return try lock.withLock {
                requests.append(request)
                if let failure { throw failure }
                return status
            }
        }
    }

    func answer(status: Int, failure: (any Error)? = nil) {
        lock.withLock {
            self.status = status
            self.failure = failure
        }
    }

    var sent: [HTTPRequest] { lock.withLock { requests } }

    /// Every `sub` value, in the order sent.
    var subs: [String] {
        sent.flatMap { request in
            URLComponents(url: request.url, resolvingAgainstBaseURL: false)?
                .queryItems?.filter { $0.name == "sub" }.compactMap(\.value) ?? []
        }
    }
}

/// Keeps log lines for assertions.
final class CapturedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [(Logger.Level, String)] = []

    func append(_ level: Logger.Level, _ message: String) { lock.withLock { lines.append((level, message)) } }
    func messages(at level: Logger.Level) -> [String] { lock.withLock { lines.filter { $0.0 == level }.map(\.1) } }

    var logger: Logger {
        var logger = Logger(label: "test") { _ in CapturingHandler(log: self) }
        logger.logLevel = .trace
        return logger
    }
}

struct CapturingHandler: LogHandler {
    let log: CapturedLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) { log.append(event.level, "\(event.message)") }
}

struct TestFailure: Error, LocalizedError {
    var errorDescription: String? { "connection refused" }
}

@Suite struct SyncthingNudgeTests {
    let configuration = SyncthingNudge.Configuration(
        address: URL(string: "http://127.0.0.1:8384") ?? URL(fileURLWithPath: "/"), apiKey: "secret", folderID: "multi doc", prefix: "sub/container")

    @Test func aScanRequestNamesTheFolderEachPathAndTheKey() throws {
        let request = try #require(configuration.scanRequest(["documents/a b/0000000000000001.log", "x+y.json"]))
        #expect(request.method == "POST")
        #expect(request.headers["X-API-Key"] == "secret")
        let url = request.url
        #expect(url.path == "/rest/db/scan")
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        #expect(items.first { $0.name == "folder" }?.value == "multi doc")
        #expect(items.filter { $0.name == "sub" }.compactMap(\.value) == ["sub/container/documents/a b/0000000000000001.log", "sub/container/x+y.json"])
        #expect(url.absoluteString.contains("x%2By.json"), "a + must not reach Syncthing as a space: \(url)")
    }

    @Test func everyFileTheContainerWritesOrRemovesIsNudgedOnce() async throws {
        let folder = try TemporaryDirectory("nudge")
        defer { folder.remove() }
        let recorder = RecordingTransport()
        let nudge = SyncthingNudge(configuration: configuration, logger: CapturedLog().logger, transport: recorder.transport)
        let container = Container(root: folder.url, writeObserver: nudge)
        let document = DocumentID(Fixed.uuid(1)), device = Fixed.device(1)
        _ = try container.writeLog(Data("{}".utf8), document: document, device: device, sequence: 1)
        try container.writeJSON(["a": 1], to: container.tombstoneURL(document, device: device))
        container.remove(container.documentDirectory(document))
        container.remove(container.documentDirectory(DocumentID(Fixed.uuid(2))))  // not there: nothing to say
        await nudge.flush(timeout: .seconds(120))
        #expect(recorder.subs.sorted() == [
            "sub/container/documents/\(document)",
            "sub/container/documents/\(document)/logs/\(device)/0000000000000001.log",
            "sub/container/tombstones/\(document).\(device).json",
        ])
        #expect(nudge.sent.failures == 0)
    }

    @Test func aBurstOfWritesIsCoalescedIntoFewRequests() async throws {
        let recorder = RecordingTransport(delay: .milliseconds(30))
        let nudge = SyncthingNudge(configuration: configuration, logger: CapturedLog().logger, transport: recorder.transport)
        let paths = (1...200).map { "documents/d/logs/x/\($0).log" }
        for path in paths { nudge.containerDidChange(path) }
        await nudge.flush(timeout: .seconds(120))  // returns as soon as everything is sent
        #expect(Set(recorder.subs) == Set(paths.map { "sub/container/" + $0 }))
        #expect(recorder.subs.count == paths.count, "each path once")
        #expect(recorder.sent.count < 20, "\(recorder.sent.count) requests for a burst of 200 writes")
    }

    @Test func failuresNeverReachTheWriterAndAreLoggedOnceUntilItWorksAgain() async throws {
        let log = CapturedLog()
        let recorder = RecordingTransport()
        recorder.answer(status: 0, failure: TestFailure())
        let nudge = SyncthingNudge(configuration: configuration, logger: log.logger, transport: recorder.transport)
        for round in 1...3 {
            nudge.containerDidChange("file\(round)")
            await nudge.flush(timeout: .seconds(120))
        }
        #expect(nudge.sent.failures == 3)
        #expect(log.messages(at: .warning).count == 1)
        #expect(log.messages(at: .warning).first?.contains("only slower") == true)
        recorder.answer(status: 200)
        nudge.containerDidChange("file4")
        await nudge.flush(timeout: .seconds(120))
        #expect(log.messages(at: .notice).count == 1)
        recorder.answer(status: 403)
        nudge.containerDidChange("file5")
        await nudge.flush(timeout: .seconds(120))
        #expect(log.messages(at: .warning).count == 2)
    }

    @Test func flushReturnsAtTheTimeoutWhenSyncthingHangs() async throws {
        let gate = Gate()
        let nudge = SyncthingNudge(configuration: configuration, logger: CapturedLog().logger) { _ in
            await gate.wait()  // Syncthing never answers (until the test ends)
            return 200
        }
        nudge.containerDidChange("slow")
        await nudge.flush(timeout: .milliseconds(200))
        // flush came back although the request is still hanging: the timeout, not completion.
        #expect(nudge.sent.requests == 0)
        await gate.open()
        await nudge.flush(timeout: .seconds(120))
        #expect(nudge.sent.requests == 1)
    }
}

/// Holds callers until opened.
actor Gate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        waiting.forEach { $0.resume() }
        waiting.removeAll()
    }
}

@Suite struct SyncthingConfigurationTests {
    static let xml = """
    <configuration version="36">
        <folder id="outer" label="Outer" path="/srv/sync" type="sendreceive"></folder>
        <folder id="inner" label="Inner" path="/srv/sync/multidoc/" type="sendreceive"></folder>
        <device id="AAAA" name="a"><address>dynamic</address></device>
        <gui enabled="true" tls="false" debugging="false">
            <address>127.0.0.1:8384</address>
            <apikey>KEY123</apikey>
        </gui>
    </configuration>
    """

    func settings(_ values: [SettingKey: String]) throws -> ResolvedSettings {
        var flags: [SettingKey: SettingValue] = [:]
        for (key, value) in values { flags[key] = try key.parse(value) }
        return try ResolvedSettings(flags: flags, hostName: "h")
    }

    @Test func configXMLGivesTheAddressKeyAndTheDeepestFolderHoldingTheContainer() throws {
        let config = try SyncthingConfigFile(data: Data(Self.xml.utf8))
        #expect(config.address == "http://127.0.0.1:8384")
        #expect(config.apiKey == "KEY123")
        #expect(config.folders.map(\.id) == ["outer", "inner"])
        #expect(config.folder(holding: URL(fileURLWithPath: "/srv/sync/multidoc"))?.folder.id == "inner")
        #expect(config.folder(holding: URL(fileURLWithPath: "/srv/sync/multidoc/c"))?.prefix == "c")
        #expect(config.folder(holding: URL(fileURLWithPath: "/srv/sync/other"))?.prefix == "other")
        #expect(config.folder(holding: URL(fileURLWithPath: "/srv/syncthing")) == nil)
        #expect(throws: SyncthingError.self) { try SyncthingConfigFile(data: Data("<html></html>".utf8)) }
        #expect(throws: SyncthingError.self) { try SyncthingConfigFile(data: Data("not xml".utf8)) }
    }

    @Test func configXMLIsReadAsXMLEntitiesCommentsAndAll() throws {
        let xml = """
        \u{FEFF}<?xml version="1.0" encoding="UTF-8"?>
        <!-- written by Syncthing -->
        <configuration version='37'>
            <folder id="a&amp;b" path="/srv/s&#233;ync &quot;x&quot;"/>
            <gui tls="true"><address>[::1]:8384</address><apikey><![CDATA[K<E>Y]]></apikey></gui>
        </configuration>
        """
        let config = try SyncthingConfigFile(data: Data(xml.utf8))
        #expect(config.folders.map(\.id) == ["a&b"])
        #expect(config.folders.map(\.path) == ["/srv/séync \"x\""])
        #expect(config.address == "https://[::1]:8384")
        #expect(config.apiKey == "K<E>Y")
        for broken in [
            "<configuration><gui></configuration>", "<configuration>", "<configuration a=1></configuration>",
            "<configuration>&bogus;</configuration>", "<configuration></configuration><configuration></configuration>",
            "<configuration><!-- unterminated </configuration>", "",
        ] {
            #expect(throws: SyncthingError.self, "\(broken)") { try SyncthingConfigFile(data: Data(broken.utf8)) }
        }
    }

    @Test func settingsResolveWithFlagsWinningOverConfigXML() throws {
        let folder = try TemporaryDirectory("stconfig")
        defer { folder.remove() }
        let path = folder.appending("config.xml")
        try Data(Self.xml.utf8).write(to: path)
        let container = URL(fileURLWithPath: "/srv/sync/multidoc")

        #expect(try SyncthingNudge.Configuration.resolve(try settings([:]), container: container) == nil)

        let fromFile = try #require(try SyncthingNudge.Configuration.resolve(try settings([.syncthingConfig: path.path]), container: container))
        #expect(fromFile.address.absoluteString == "http://127.0.0.1:8384" && fromFile.apiKey == "KEY123")
        #expect(fromFile.folderID == "inner" && fromFile.prefix == "")

        let overridden = try #require(try SyncthingNudge.Configuration.resolve(
            try settings([.syncthingConfig: path.path, .syncthingKey: "OTHER", .syncthingAddress: "127.0.0.1:9999"]), container: container))
        #expect(overridden.apiKey == "OTHER" && overridden.address.absoluteString == "http://127.0.0.1:9999")

        let direct = try #require(try SyncthingNudge.Configuration.resolve(
            try settings([.syncthingAddress: "http://h:1", .syncthingKey: "k", .syncthingFolder: "f"]), container: container))
        #expect(direct == SyncthingNudge.Configuration(address: URL(string: "http://h:1") ?? container, apiKey: "k", folderID: "f", prefix: ""))

        let tls = #expect(throws: SyncthingError.self) {
            try SyncthingNudge.Configuration.resolve(
                try settings([.syncthingAddress: "https://h:1", .syncthingKey: "k", .syncthingFolder: "f"]), container: container)
        }
        #expect(tls?.message.contains("http://HOST:PORT") == true)

        let missingKey = #expect(throws: SyncthingError.self) {
            try SyncthingNudge.Configuration.resolve(try settings([.syncthingAddress: "http://h:1", .syncthingFolder: "f"]), container: container)
        }
        #expect(missingKey?.message.contains("SyncthingKey") == true)
        let elsewhere = #expect(throws: SyncthingError.self) {
            try SyncthingNudge.Configuration.resolve(try settings([.syncthingConfig: path.path]), container: URL(fileURLWithPath: "/home/me/c"))
        }
        #expect(elsewhere?.message.contains("no folder") == true)
        let unreadable = #expect(throws: SyncthingError.self) {
            try SyncthingNudge.Configuration.resolve(try settings([.syncthingConfig: folder.appending("nope.xml").path]), container: container)
        }
        #expect(unreadable?.message.contains("nope.xml") == true)
    }

    @Test func addressSettingsAreCheckedWhenTyped() throws {
        #expect(try SettingKey.syncthingAddress.parse("127.0.0.1:8384") == .text("http://127.0.0.1:8384"))
        #expect(try SettingKey.syncthingAddress.parse("https://h:8384/") == .text("https://h:8384"))
        #expect(try SettingKey.syncthingAddress.parse("none") == .text(""))
        #expect(throws: SettingsError.self) { try SettingKey.syncthingAddress.parse("ftp://h:1") }
        #expect(throws: SettingsError.self) { try SettingKey.syncthingAddress.parse("http://h:1/rest/db") }
        #expect(SettingKey.syncthingKey.environmentName == "MULTIDOC_SYNCTHING_KEY")
        #expect(try ResolvedSettings(hostName: "h").optionalText(.syncthingFolder) == nil)
    }
}
