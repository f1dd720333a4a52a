import Crypto
import Foundation
import Testing

/// The API's server code was generated from `openapi.yaml` (Tools/generate-api.sh), which
/// recorded the SHA-256 of the document, its configuration and every generated file. An edit
/// to one without running the script again shows here.
@Suite struct GeneratedCodeTests {
    @Test func theGeneratedCodeIsTheDocumentsAsRecorded() throws {
        let module = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Modules/LocalAPI")
        let recorded = try String(contentsOf: module.appendingPathComponent("Generated/openapi.sha256"), encoding: .utf8)
        var checked: Set<String> = []
        for line in recorded.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let path = parts[1].trimmingCharacters(in: .whitespaces)
            let data = try Data(contentsOf: module.appendingPathComponent(path))
            let digest = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            #expect(digest == String(parts[0]), "\(path) changed since the code was generated: run Tools/generate-api.sh and commit what it writes")
            checked.insert(path)
        }
        #expect(checked.contains("openapi.yaml"))
        let generated = try FileManager.default.contentsOfDirectory(atPath: module.appendingPathComponent("Generated").path)
            .filter { $0.hasSuffix(".swift") }.map { "Generated/" + $0 }
        #expect(Set(generated).isSubset(of: checked), "generated files not recorded: \(Set(generated).subtracting(checked).sorted())")
    }
}
