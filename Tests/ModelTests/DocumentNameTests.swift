import Foundation
import Model
import Testing

@Suite struct DocumentNameTests {
    @Test(arguments: ["TestDoc1", "Untitled", "Café ☕️", "日本語のメモ", "a b", "x.y", "עברית"])
    func acceptsOrdinaryNames(_ name: String) throws {
        #expect(try DocumentName(name).rawValue == name)
    }

    @Test func refusesEmpty() {
        #expect(throws: DocumentNameError(name: "", rule: .empty)) { try DocumentName("") }
    }

    /// A typed name of spaces only (or invisible marks) would be a row with nothing to read.
    @Test(arguments: ["   ", " ", "\u{3000}", "\u{00A0}\u{200B}"])
    func refusesATypedNameOfSpacesOnly(_ name: String) {
        #expect(throws: DocumentNameError(name: name, rule: .blank)) { try DocumentName(typed: name) }
        // Names peers wrote are still read.
        #expect((try? DocumentName(name))?.rawValue == name)
    }

    @Test func refusesSlash() {
        #expect(throws: DocumentNameError(name: "a/b", rule: .slash)) { try DocumentName("a/b") }
    }

    @Test func refusesDotNames() {
        #expect(throws: DocumentNameError(name: ".", rule: .dotName)) { try DocumentName(".") }
        #expect(throws: DocumentNameError(name: "..", rule: .dotName)) { try DocumentName("..") }
        #expect(throws: DocumentNameError(name: ".hidden", rule: .leadingDot)) { try DocumentName(".hidden") }
    }

    @Test func refusesControlCharacters() {
        #expect(throws: DocumentNameError(name: "a\u{0}b", rule: .controlCharacter(0))) { try DocumentName("a\u{0}b") }
        #expect(throws: DocumentNameError(name: "tab\there", rule: .controlCharacter(9))) { try DocumentName("tab\there") }
        #expect(throws: DocumentNameError(name: "bell\u{7F}", rule: .controlCharacter(0x7F))) { try DocumentName("bell\u{7F}") }
    }

    @Test func limitIs255BytesOfUTF8() throws {
        _ = try DocumentName(String(repeating: "a", count: 255))
        #expect(throws: DocumentNameError(name: String(repeating: "a", count: 256), rule: .tooLong(byteCount: 256))) {
            try DocumentName(String(repeating: "a", count: 256))
        }
        // 86 × 3-byte characters = 258 bytes although only 86 characters.
        let wide = String(repeating: "語", count: 86)
        #expect(throws: DocumentNameError(name: wide, rule: .tooLong(byteCount: 258))) { try DocumentName(wide) }
    }

    @Test func errorMessagesNameTheRule() {
        #expect(DocumentNameError(name: "a/b", rule: .slash).description.contains("'/'"))
        #expect(DocumentNameError(name: "", rule: .empty).description.contains("empty"))
        #expect(DocumentNameError(name: "x", rule: .tooLong(byteCount: 300)).description.contains("300 bytes"))
        #expect(DocumentNameError(name: "a\u{1}", rule: .controlCharacter(1)).description.contains("U+0001"))
    }

    @Test func decodingValidates() {
        let data = Data(#"["a/b"]"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([DocumentName].self, from: data) }
    }

    @Test func sortsNaturally() throws {
        let names = try ["TestDoc10", "TestDoc2", "TestDoc1"].map { try DocumentName($0) }
        #expect(names.sorted().map(\.rawValue) == ["TestDoc1", "TestDoc2", "TestDoc10"])
    }
}

@Suite struct DefaultNamingTests {
    private func names(_ raw: [String]) throws -> [DocumentName] { try raw.map { try DocumentName($0) } }

    @Test func firstNameIsTestDoc1() {
        #expect(DefaultNaming.nextName(after: []).rawValue == "TestDoc1")
    }

    @Test func followsTheHighestListedNumber() throws {
        #expect(DefaultNaming.nextName(after: try names(["TestDoc1", "TestDoc2"])).rawValue == "TestDoc3")
        #expect(DefaultNaming.nextName(after: try names(["TestDoc7", "TestDoc2"])).rawValue == "TestDoc8")
        #expect(DefaultNaming.nextName(after: try names(["TestDoc9", "TestDoc10"])).rawValue == "TestDoc11")
    }

    @Test func ignoresOtherNames() throws {
        #expect(DefaultNaming.nextName(after: try names(["Untitled", "TestDocX", "TestDoc", "MyTestDoc5", "TestDoc-3"])).rawValue == "TestDoc1")
    }
}
