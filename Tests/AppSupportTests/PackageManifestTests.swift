import Foundation
import Testing

/// Package.swift says what each target depends on; the sources say what they import. The two
/// agree, so a module's real dependencies can be read from the manifest (ARCHITECTURE.md's
/// picture is drawn from it) and nothing builds only through a neighbour's dependency.
@Suite struct PackageManifestTests {
    /// Products whose module name differs from the variable Package.swift names them by.
    static let products = [
        "argumentParser": "ArgumentParser", "logging": "Logging", "serviceLifecycle": "ServiceLifecycle", "grdb": "GRDB",
        "hdrHistogram": "Histogram", "unixSignals": "UnixSignals", "crypto": "Crypto", "cryptoExtras": "_CryptoExtras",
        "hummingbird": "Hummingbird", "openAPIRuntime": "OpenAPIRuntime", "openAPIHummingbird": "OpenAPIHummingbird",
        "httpTypes": "HTTPTypes", "nioCore": "NIOCore",
    ]
    /// Modules of the toolchain and the system: not package dependencies.
    static let system: Set<String> = ["Foundation", "FoundationXML", "Glibc", "Darwin", "Testing", "XCTest", "Dispatch", "Synchronization"]

    @Test func everyTargetDeclaresWhatItImportsAndNothingElse() throws {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let manifest = try String(contentsOf: packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let target = /\.(?:target|executableTarget|testTarget)\(\s*name:\s*"([^"]+)"(?:,\s*dependencies:\s*\[([^\]]*)\])?.*?path:\s*"([^"]+)"/
            .dotMatchesNewlines()
        var checked = 0
        for match in manifest.matches(of: target) {
            let name = String(match.1)
            let declared = Set((match.2.map(String.init) ?? "").split(separator: ",").map { entry in
                let word = entry.trimmingCharacters(in: .whitespacesAndNewlines).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                return Self.products[word] ?? word
            }.filter { !$0.isEmpty })
            var imported: Set<String> = []
            let folder = packageRoot.appendingPathComponent(String(match.3))
            let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
            for file in files where file.pathExtension == "swift" {
                for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                    if let found = line.firstMatch(of: /^\s*(?:@testable\s+|public\s+)?import\s+(?:struct\s+|enum\s+|class\s+|func\s+)?(\w+)/) {
                        imported.insert(String(found.1))
                    }
                }
            }
            imported.subtract(Self.system)
            imported.remove(name)
            // A system library target (the ncurses shim) is linked, not always imported by name.
            let unused = declared.subtracting(imported).subtracting(["CNcurses"])
            #expect(imported.subtracting(declared).isEmpty, "\(name) imports \(imported.subtracting(declared).sorted()) without declaring them in Package.swift")
            #expect(unused.isEmpty, "\(name) declares \(unused.sorted()) in Package.swift but imports none of them")
            checked += 1
        }
        #expect(checked >= 20, "the manifest's targets were not found (\(checked))")
    }
}
