import Foundation

/// A document's display name, validated so it is safe as one path component on every device.
///
/// Rules: non-empty, at most 255 bytes of UTF-8, no `/`, no NUL or other control characters,
/// not `.` or `..`, no leading `.`.
public struct DocumentName: Hashable, Sendable, Comparable, Codable, CustomStringConvertible {
    public let rawValue: String

    /// The longest name, in bytes of UTF-8 (the common file-name limit).
    public static let maximumByteCount = 255

    /// Validates `rawValue`.
    /// - Throws: ``DocumentNameError`` naming the first rule the name breaks.
    public init(_ rawValue: String) throws(DocumentNameError) {
        if let problem = Self.problem(with: rawValue) { throw DocumentNameError(name: rawValue, rule: problem) }
        self.rawValue = rawValue
    }

    /// Validates a name a user typed for a new document or a rename: the rules above, and none
    /// of the names a device root uses beside a store (`document.json`), not only spaces, no bidirectional
    /// control character (U+202E would show `txt.exe` as `exe.txt`), and not a UUID (which
    /// `show`, `rm` and every other command would take for another document's). Names that
    /// peers or earlier versions wrote are read with the rules above only.
    /// - Throws: ``DocumentNameError`` naming the first rule the name breaks.
    ///
    /// A typed name is kept in its composed form (NFC): "café" typed as `e` + U+0301 and as
    /// `é` is one name, on every device and in every folder made for it.
    public init(typed: String) throws(DocumentNameError) {
        let rawValue = typed.precomposedStringWithCanonicalMapping
        try self.init(rawValue)
        if Self.reserved.contains(rawValue.lowercased()) { throw DocumentNameError(name: rawValue, rule: .reserved) }
        // Spaces only: a row with no name to see, and one no command finds by typing it.
        if rawValue.unicodeScalars.allSatisfy({ $0.properties.isWhitespace || $0.properties.isDefaultIgnorableCodePoint }) {
            throw DocumentNameError(name: rawValue, rule: .blank)
        }
        if let scalar = rawValue.unicodeScalars.first(where: Self.isBidiControl) {
            throw DocumentNameError(name: rawValue, rule: .bidiControl(scalar.value))
        }
        if UUIDText.parse(rawValue) != nil { throw DocumentNameError(name: rawValue, rule: .looksLikeUUID) }
    }

    /// File names a device root keeps beside a document's store folder.
    public static let reserved: Set<String> = ["document.json"]

    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    public var description: String { rawValue }

    public static func < (lhs: DocumentName, rhs: DocumentName) -> Bool {
        lhs.rawValue.localizedStandardLess(rhs.rawValue)
    }

    static func problem(with name: String) -> DocumentNameError.Rule? {
        if name.isEmpty { return .empty }
        if name.utf8.count > maximumByteCount { return .tooLong(byteCount: name.utf8.count) }
        if name == "." || name == ".." { return .dotName }
        if name.contains("/") { return .slash }
        for scalar in name.unicodeScalars where scalar.properties.generalCategory == .control {
            return .controlCharacter(scalar.value)
        }
        if name.hasPrefix(".") { return .leadingDot }
        return nil
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        do {
            try self.init(string)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A name that breaks one of ``DocumentName``'s rules.
public struct DocumentNameError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Rule: Equatable, Sendable {
        case empty
        case tooLong(byteCount: Int)
        case slash
        case controlCharacter(UInt32)
        case dotName
        case leadingDot
        case reserved
        case bidiControl(UInt32)
        case looksLikeUUID
        case blank
    }

    public let name: String
    public let rule: Rule

    public init(name: String, rule: Rule) {
        self.name = name
        self.rule = rule
    }

    public var description: String {
        switch rule {
        case .empty: return "invalid document name: the name is empty"
        case .tooLong(let count):
            return "invalid document name: \(count) bytes of UTF-8, the limit is \(DocumentName.maximumByteCount)"
        case .slash: return "invalid document name \(name.debugDescription): it contains '/'"
        case .controlCharacter(let value):
            let hex = String(value, radix: 16, uppercase: true)
            return "invalid document name \(name.debugDescription): it contains the control character U+\(String(repeating: "0", count: max(0, 4 - hex.count)))\(hex)"
        case .dotName: return "invalid document name \(name.debugDescription): '.' and '..' are reserved"
        case .leadingDot: return "invalid document name \(name.debugDescription): it starts with '.' (hidden files are reserved)"
        case .reserved: return "invalid document name \(name.debugDescription): the device root uses that name itself; pick another"
        case .bidiControl(let value):
            return "invalid document name \(name.debugDescription): it contains the bidirectional control character U+\(String(value, radix: 16, uppercase: true)), which makes a name display as something else"
        case .looksLikeUUID: return "invalid document name \(name.debugDescription): a UUID names documents by their identity; pick a name that is not one"
        case .blank: return "invalid document name \(name.debugDescription): it is only spaces, which show as no name at all; pick a name with something to read"
        }
    }
}

extension String {
    /// A natural ordering ("TestDoc2" < "TestDoc10") that does not need Foundation.
    func localizedStandardLess(_ other: String) -> Bool {
        var lhs = self.unicodeScalars.makeIterator()
        var rhs = other.unicodeScalars.makeIterator()
        var left = lhs.next()
        var right = rhs.next()
        while let l = left, let r = right {
            if l.properties.numericType == .decimal, r.properties.numericType == .decimal,
               l.isASCII, r.isASCII {
                var leftNumber = ""
                var rightNumber = ""
                while let c = left, c.isASCII, c.properties.numericType == .decimal { leftNumber.unicodeScalars.append(c); left = lhs.next() }
                while let c = right, c.isASCII, c.properties.numericType == .decimal { rightNumber.unicodeScalars.append(c); right = rhs.next() }
                let a = leftNumber.drop(while: { $0 == "0" })
                let b = rightNumber.drop(while: { $0 == "0" })
                if a.count != b.count { return a.count < b.count }
                if a != b { return a < b }
                continue
            }
            if l != r { return l.value < r.value }
            left = lhs.next()
            right = rhs.next()
        }
        return left == nil && right != nil
    }
}
