import Foundation
import Testing
import TestSupport

/// `Tools/install.sh` into a temporary prefix, with the built products standing in for the
/// release build (`--from`): binaries, man pages, completions and the systemd unit.
@Suite(.offThePool) struct InstallTests {
    static var repository: URL {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
            url.deleteLastPathComponent()
        }
        return url
    }

    @Test func theInstallPutsEverythingUnderThePrefixAndTheUnitVerifies() throws {
        let folder = try TemporaryDirectory("install")
        defer { folder.remove() }
        let products = try #require(ProductRunner.productsDirectory())
        let prefix = folder.appending("prefix")
        let script = Self.repository.appendingPathComponent("Tools/install.sh").path
        let result = try ProductRunner.run(
            "/bin/bash", [script, "--from", products.path, "--prefix", prefix.path, "--systemd"],
            environment: ["HOME": folder.url.path, "XDG_CONFIG_HOME": folder.appending("config").path], timeout: 300)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        for product in ["multidoc", "multidoc-tui", "multidocd"] {
            let binary = prefix.appendingPathComponent("bin/\(product)")
            let version = try ProductRunner.run(binary.path, ["--version"])
            #expect(version.status == 0 && version.stdout.hasPrefix(product + " "), "\(product)")
            let manual = try String(contentsOf: prefix.appendingPathComponent("share/man/man1/\(product).1"), encoding: .utf8)
            #expect(manual.hasPrefix(".TH \(product.uppercased()) 1"), "\(product).1")
            #expect(manual.contains(".SH NAME\n\(product) \\- "), "\(product).1 has a NAME line")
            let bash = try String(contentsOf: prefix.appendingPathComponent("share/bash-completion/completions/\(product)"), encoding: .utf8)
            #expect(bash.contains("complete"), "bash completion of \(product)")
            #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent("share/zsh/site-functions/_\(product)").path))
            #expect(FileManager.default.fileExists(atPath: prefix.appendingPathComponent("share/fish/vendor_completions.d/\(product).fish").path))
        }
        let manual = try String(contentsOf: prefix.appendingPathComponent("share/man/man1/multidoc.1"), encoding: .utf8)
        #expect(manual.contains(".SH MULTIDOC INIT") && manual.contains(".SS multidoc settings set"), "every verb has its section")

        let unit = folder.appending("config/systemd/user/multidocd.service")
        let text = try String(contentsOf: unit, encoding: .utf8)
        #expect(text.contains("ExecStart=\(prefix.path)/bin/multidocd "), "the unit runs the installed daemon")
        #expect(!text.contains("@DOCS@"))
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
            let verify = try ProductRunner.run("/usr/bin/systemd-analyze", ["verify", unit.path])
            #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
        }

        let removed = try ProductRunner.run("/bin/bash", [script, "--uninstall", "--prefix", prefix.path], environment: ["HOME": folder.url.path])
        #expect(removed.status == 0)
        #expect(!FileManager.default.fileExists(atPath: prefix.appendingPathComponent("bin/multidoc").path))
        let bad = try ProductRunner.run("/bin/bash", [script, "--prefx", "x"])
        #expect(bad.status == 64 && bad.stderr.hasPrefix("install.sh: error: unknown option '--prefx'"))
    }
}
