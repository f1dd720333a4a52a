/// Reads the elements of an XML document such as Syncthing's `config.xml`: start tags with
/// their attributes, text, end tags. Comments, processing instructions and a doctype are
/// skipped; CDATA is text; the five named entities and numeric references are decoded. Anything
/// malformed (an unclosed tag, a mismatched end tag, a bad reference) is an error.
///
/// Written by hand (Docs/DECISIONS.md): FoundationXML would load libxml2 and a second ICU into
/// every multidoc process for three values of one machine-written file.
struct ConfigXMLReader {
    enum Event: Equatable {
        case start(name: String, attributes: [String: String])
        case text(String)
        case end(name: String)
    }

    struct Malformed: Error, Equatable {
        let offset: Int
    }

    /// Every event of `bytes`, in order; throws if the document is not well formed.
    static func events(_ bytes: [UInt8]) throws(Malformed) -> [Event] {
        var reader = ConfigXMLReader(bytes: bytes)
        return try reader.read()
    }

    private let bytes: [UInt8]
    private var index = 0

    private init(bytes: [UInt8]) {
        self.bytes = bytes
        // A UTF-8 byte order mark is not content.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    private mutating func read() throws(Malformed) -> [Event] {
        var events: [Event] = []
        var open: [String] = []
        var sawRoot = false
        while index < bytes.count {
            if bytes[index] != UInt8(ascii: "<") {
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: "<") { index += 1 }
                let text = try Self.decode(bytes[start..<index], at: start)
                if open.isEmpty {
                    // Outside the root only white space may stand.
                    guard text.allSatisfy(\.isWhitespace) else { throw Malformed(offset: start) }
                } else {
                    events.append(.text(text))
                }
                continue
            }
            if starts(with: "<!--") {
                try skip(past: "-->")
            } else if starts(with: "<![CDATA[") {
                guard !open.isEmpty else { throw Malformed(offset: index) }
                index += 9
                let start = index
                try skip(past: "]]>")
                events.append(.text(String(decoding: bytes[start..<(index - 3)], as: UTF8.self)))
            } else if starts(with: "<?") {
                try skip(past: "?>")
            } else if starts(with: "<!") {
                try skip(past: ">")
            } else if starts(with: "</") {
                index += 2
                let name = try readName()
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ">"), open.last == name else { throw Malformed(offset: index) }
                index += 1
                open.removeLast()
                events.append(.end(name: name))
            } else {
                index += 1
                guard open.isEmpty ? !sawRoot : true else { throw Malformed(offset: index) }
                let name = try readName()
                var attributes: [String: String] = [:]
                while true {
                    skipSpace()
                    guard index < bytes.count else { throw Malformed(offset: index) }
                    if bytes[index] == UInt8(ascii: ">") {
                        index += 1
                        open.append(name)
                        sawRoot = true
                        events.append(.start(name: name, attributes: attributes))
                        break
                    }
                    if bytes[index] == UInt8(ascii: "/") {
                        guard index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: ">") else { throw Malformed(offset: index) }
                        index += 2
                        sawRoot = true
                        events.append(.start(name: name, attributes: attributes))
                        events.append(.end(name: name))
                        break
                    }
                    let key = try readName()
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { throw Malformed(offset: index) }
                    index += 1
                    skipSpace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                        throw Malformed(offset: index)
                    }
                    let quote = bytes[index]
                    index += 1
                    let start = index
                    while index < bytes.count, bytes[index] != quote {
                        guard bytes[index] != UInt8(ascii: "<") else { throw Malformed(offset: index) }
                        index += 1
                    }
                    guard index < bytes.count, attributes[key] == nil else { throw Malformed(offset: index) }
                    attributes[key] = try Self.decode(bytes[start..<index], at: start)
                    index += 1
                }
            }
        }
        guard open.isEmpty, sawRoot else { throw Malformed(offset: index) }
        return events
    }

    private func starts(with prefix: String) -> Bool {
        bytes[index...].starts(with: prefix.utf8)
    }

    private mutating func skip(past end: String) throws(Malformed) {
        let marker = Array(end.utf8)
        while index < bytes.count {
            if bytes[index...].starts(with: marker) {
                index += marker.count
                return
            }
            index += 1
        }
        throw Malformed(offset: index)
    }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func readName() throws(Malformed) -> String {
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            let isNameByte = byte >= 0x80 || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
            guard isNameByte else { break }
            index += 1
        }
        guard index > start else { throw Malformed(offset: start) }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Text with its references decoded.
    private static func decode(_ raw: ArraySlice<UInt8>, at offset: Int) throws(Malformed) -> String {
        guard raw.contains(UInt8(ascii: "&")) else { return String(decoding: raw, as: UTF8.self) }
        var result = ""
        var position = raw.startIndex
        while position < raw.endIndex {
            guard raw[position] == UInt8(ascii: "&") else {
                let start = position
                while position < raw.endIndex, raw[position] != UInt8(ascii: "&") { position += 1 }
                result += String(decoding: raw[start..<position], as: UTF8.self)
                continue
            }
            guard let semicolon = raw[position...].firstIndex(of: UInt8(ascii: ";")), semicolon - position <= 12 else {
                throw Malformed(offset: offset + position - raw.startIndex)
            }
            let name = String(decoding: raw[(position + 1)..<semicolon], as: UTF8.self)
            switch name {
            case "lt": result += "<"
            case "gt": result += ">"
            case "amp": result += "&"
            case "quot": result += "\""
            case "apos": result += "'"
            default:
                let value: UInt32?
                if name.hasPrefix("#x") || name.hasPrefix("#X") {
                    value = UInt32(name.dropFirst(2), radix: 16)
                } else if name.hasPrefix("#") {
                    value = UInt32(name.dropFirst(), radix: 10)
                } else {
                    value = nil
                }
                guard let value, value != 0, let scalar = Unicode.Scalar(value) else {
                    throw Malformed(offset: offset + position - raw.startIndex)
                }
                result.unicodeScalars.append(scalar)
            }
            position = semicolon + 1
        }
        return result
    }
}
