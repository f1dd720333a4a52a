import Foundation
import Testing
import TestSupport

/// README's "Using it", pasted into a fresh home folder: every line must work as written.
@Suite(.offThePool) struct ReadmeTests {
    /// The `sh` block under "## Using it", one command per line (comments dropped).
    static func usingIt() throws -> [String] {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("README.md").path) {
            url.deleteLastPathComponent()
        }
        let readme = try String(contentsOf: url.appendingPathComponent("README.md"), encoding: .utf8)
        guard let section = readme.range(of: "## Using it"),
              let open = readme.range(of: "```sh\n", range: section.upperBound..<readme.endIndex),
              let close = readme.range(of: "```", range: open.upperBound..<readme.endIndex) else {
            throw ProductRunner.RunnerError(message: "README.md has no sh block under '## Using it'")
        }
        return readme[open.upperBound..<close.lowerBound].split(separator: "\n").map { line in
            // A comment starts at a `#` after white space (not inside a path or a word).
            var command = String(line)
            if let hash = command.range(of: " #") { command = String(command[..<hash.lowerBound]) }
            return command.trimmingCharacters(in: .whitespaces)
        }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    @Test func everyStepOfUsingItWorksInAFreshHome() throws {
        let home = try TemporaryDirectory("readme")
        defer { home.remove() }
        let products = try #require(ProductRunner.productsDirectory())
        let lines = try Self.usingIt()
        #expect(lines.first?.hasPrefix("Tools/install.sh") == true, "README starts with the install")
        var script = ["set -e", "cd \"$HOME\""]
        for line in lines {
            // The install is tested on its own (InstallTests); the built products stand in for it.
            if line.hasPrefix("Tools/install.sh") || line.hasPrefix("export PATH") { continue }
            script.append("echo \"+ \(line.replacingOccurrences(of: "\"", with: "\\\""))\"")
            script.append(line)
            if line.hasPrefix("multidocd"), line.hasSuffix("&") {
                // A person reads the output before the next line; the test waits for the daemon's status file.
                let root = line.components(separatedBy: " ").drop { $0 != "--root" }.dropFirst().first ?? "~"
                script.append("for i in $(seq 1 600); do [ -f \(root)/multidocd.status.json ] && break; sleep 0.05; done")
            }
            if line.hasPrefix("kill %1") { script.append("wait %1 && echo 'daemon stopped cleanly'") }
        }
        let result = try ProductRunner.run(
            "/bin/bash", ["-c", script.joined(separator: "\n")],
            environment: ["HOME": home.url.path, "PATH": products.path + ":/usr/bin:/bin", "XDG_DATA_HOME": ""], timeout: 120)
        #expect(result.status == 0, "stdout:\n\(result.stdout)\nstderr:\n\(result.stderr)")
        #expect(result.stdout.contains("Notes\t"), "new prints the name and the UUID")
        #expect(result.stdout.contains("discovered"), "B lists Notes as discovered")
        #expect(result.stdout.contains("hello from B"), "A shows B's edit")
        #expect(result.stdout.contains("daemon:    running"), "status shows the daemon")
        #expect(result.stdout.contains("daemon stopped cleanly"))
        #expect(!result.stderr.contains("error"), "\(result.stderr)")
    }
}
