/// A JSON string written by hand (AppSupport's `list --json` rows, Sync's registry records):
/// quotes, backslashes and control characters escaped, everything else as is.
public enum JSONQuote {
    public static func append(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most texts need no escape: copied in one piece.
        let plain = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if plain == true {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): bytes.append(contentsOf: #"\\"#.utf8)
            case 0x08: bytes.append(contentsOf: #"\b"#.utf8)
            case 0x0C: bytes.append(contentsOf: #"\f"#.utf8)
            case 0x0A: bytes.append(contentsOf: #"\n"#.utf8)
            case 0x0D: bytes.append(contentsOf: #"\r"#.utf8)
            case 0x09: bytes.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: #"\u00"#.utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
