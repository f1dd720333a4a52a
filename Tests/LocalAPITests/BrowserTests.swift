import Foundation
import Testing
import TestSupport

/// The daemon's page in a real browser: Debian's `chromium` and `chromium-driver`, headless,
/// driven by `Browser/page_test.py` through selenium from PyPI (`.ci/run` installs all three).
@Suite(.serialized, .offThePool) struct BrowserTests {
    /// What is missing for the browser test, or nil when it can run.
    static let missing: String? = {
        var absent: [String] = []
        for program in ["/usr/bin/chromium", "/usr/bin/chromedriver"] where !FileManager.default.isExecutableFile(atPath: program) {
            absent.append(program)
        }
        let python = (try? ProductRunner.run("/usr/bin/env", ["python3", "-c", "import selenium"], timeout: 60))?.status == 0
        if !python { absent.append("python3 with selenium") }
        return absent.isEmpty ? nil : absent.joined(separator: ", ")
    }()

    @Test(.enabled(if: missing == nil, "browser test skipped: needs chromium, chromium-driver and selenium (apt-get install chromium chromium-driver; python3 -m pip install selenium)"))
    func thePageShowsAPeersDocumentLiveAndTypingReachesTheOtherDevice() async throws {
        let folder = try TemporaryDirectory("browser")
        let container = folder.appending("container")
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
        let a = try APIDaemon("A", in: folder, container: container)
        let b = try APIDaemon("B", in: folder, container: container)
        defer { a.stop(); b.stop() }
        try await a.waitUntilListening()
        try await b.waitUntilListening()
        let shots = folder.appending("screenshots")
        try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Browser/page_test.py")
        let result = try ProductRunner.run(
            "/usr/bin/env", ["python3", script.path, a.address, a.token, b.address, b.token, shots.path], timeout: 180)
        print(result.stdout)
        print("browser test screenshots (kept): \(shots.path)")
        #expect(result.status == 0, "page_test.py: \(result.stdout)\n\(result.stderr)\nA's log:\n\(a.logText)")
    }
}
