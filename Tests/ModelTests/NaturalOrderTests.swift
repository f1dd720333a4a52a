import Model
import Testing

/// The master table's order: what Finder shows for the same names.
@Suite struct NaturalOrderTests {
    static func sorted(_ names: [String]) -> [String] {
        let keyed: [(key: NaturalOrder.Key, name: String)] = names.map { (NaturalOrder.key($0), $0) }
        return keyed.sorted { lhs, rhs in lhs.key == rhs.key ? lhs.name < rhs.name : lhs.key < rhs.key }.map(\.name)
    }

    @Test func numbersCompareAsNumbersAndCaseDoesNotCount() {
        #expect(Self.sorted(["TestDoc10", "testdoc2", "TestDoc1", "TestDoc02", "TestDoc", "Notes"])
                == ["Notes", "TestDoc", "TestDoc1", "TestDoc02", "testdoc2", "TestDoc10"])
        // A number sorts before text, a prefix before what continues it.
        #expect(Self.sorted(["ab", "abc", "ab2", "2ab", "b", "a b"]) == ["2ab", "a b", "ab", "ab2", "abc", "b"])
        // Long numbers and leading zeros: by value, however many digits.
        #expect(Self.sorted(["x99999999999999999999", "x100000000000000000000", "x0000", "x1"])
                == ["x0000", "x1", "x99999999999999999999", "x100000000000000000000"])
    }

    @Test func textBeyondASCIIKeepsTheOrderOfItsLetters() {
        #expect(Self.sorted(["Zebra", "Ärger", "apple", "Été", "éclair"]) == ["apple", "Zebra", "Ärger", "éclair", "Été"])
        #expect(NaturalOrder.key("Café") == NaturalOrder.key("CAFÉ"))
    }
}
