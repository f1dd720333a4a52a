#if canImport(Glibc)
import Glibc
#endif
import Crypto
import FileIO
import Foundation

/// The short, human-comparable name of a device's public key: the first 8 bytes of its
/// SHA-256, written `1a2b-3c4d-5e6f-7a8b`. People compare it on two screens before admitting
/// a device (`multidoc device list`, `multidoc device admit`); envelope headers carry it.
public struct KeyFingerprint: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(publicKey: some DataProtocol) {
        bytes = Array(SHA256.hash(data: publicKey).prefix(8))
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Reads `1a2b-3c4d-5e6f-7a8b` (dashes, spaces and case ignored); nil unless it is 16 hex digits.
    public init?(_ text: String) {
        let digits = text.lowercased().filter { $0 != "-" && $0 != " " && $0 != ":" }
        guard digits.count == 16 else { return nil }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.bytes = bytes
    }

    /// Whether `text` is the start of this fingerprint (at least 4 hex digits; dashes ignored).
    /// For picking among devices already trusted (`device remove`); admission takes
    /// ``matches(admission:)``.
    public func matches(prefix text: String) -> Bool {
        let wanted = Self.digits(text)
        return wanted.count >= 4 && hex.hasPrefix(wanted)
    }

    /// The fewest hex digits `device admit` takes: 64 bits. A key whose fingerprint starts with
    /// the same few digits as a real joiner's is cheap to make (four digits: some 37,000 tries
    /// on average, seconds); the same 64 bits are not.
    public static let admissionDigits = 16

    /// Whether `text` names this fingerprint well enough to admit its device: at least
    /// ``admissionDigits`` hex digits (dashes, spaces and case ignored), all of them its own.
    public func matches(admission text: String) -> Bool {
        let wanted = Self.digits(text)
        return wanted.count >= min(Self.admissionDigits, hex.count) && hex.hasPrefix(wanted)
    }

    /// The hex digits of `text`, with dashes, spaces and colons dropped, in lower case.
    public static func digits(_ text: String) -> String {
        text.lowercased().filter { $0 != "-" && $0 != " " && $0 != ":" }
    }

    private var hex: String { bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined() }

    public var description: String {
        let hex = bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        var groups: [Substring] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 4, limitedBy: hex.endIndex) ?? hex.endIndex
            groups.append(hex[index..<next])
            index = next
        }
        return groups.joined(separator: "-")
    }

    public static func < (lhs: KeyFingerprint, rhs: KeyFingerprint) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// A device's Ed25519 signing key (`<root>/device.key`, mode 0600, never in the container).
/// It signs every file the device writes into a signed container; its public half is in the
/// device's registry entry and, once admitted, in the container's admission records.
public struct DeviceKey: Sendable {
    /// The private key's 32 bytes (CryptoKit's key type is not Sendable).
    let raw: Data
    public let publicKey: [UInt8]
    public let fingerprint: KeyFingerprint

    static let fileTag = "multidoc-device-key-1"

    init(privateKey: Curve25519.Signing.PrivateKey) {
        self.raw = privateKey.rawRepresentation
        self.publicKey = Array(privateKey.publicKey.rawRepresentation)
        self.fingerprint = KeyFingerprint(publicKey: publicKey)
    }

    /// A new random key.
    public static func generate() -> DeviceKey { DeviceKey(privateKey: Curve25519.Signing.PrivateKey()) }

    /// The key at `url`, made (and written 0600) when there is none.
    /// - Throws: ``SyncError`` naming the file when it cannot be read, is not a key, is readable
    ///   by other users, or cannot be written.
    public static func loadOrCreate(_ url: URL) throws(SyncError) -> DeviceKey {
        if let key = try load(url) { return key }
        return try replace(url)
    }

    /// A new random key written (0600, durably) at `url` in place of whatever key was there.
    /// - Throws: ``SyncError`` naming the file when it cannot be written.
    @discardableResult
    public static func replace(_ url: URL) throws(SyncError) -> DeviceKey {
        let key = generate()
        let text = "\(fileTag) \(key.raw.base64EncodedString())\n"
        do {
            try AtomicFile.write(Data(text.utf8), to: url, mode: 0o600)
        } catch {
            throw SyncError(.keyUnusable, path: url.path, detail: "cannot write the device key: \(error.description)")
        }
        return key
    }

    /// The key at `url`, or nil when there is no file.
    public static func load(_ url: URL) throws(SyncError) -> DeviceKey? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw SyncError(.keyUnusable, path: url.path, detail: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SyncError(.keyUnusable, path: url.path, detail: "not a regular file (a link or folder where the device key belongs)")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw SyncError(.keyUnusable, path: url.path, detail: "other users may read it; run `chmod 600 \(url.path)`")
        }
        let text: String
        do {
            text = String(decoding: try AtomicFile.read(url, limit: 4096, followSymlinks: false), as: UTF8.self)
        } catch {
            throw SyncError(.keyUnusable, path: url.path, detail: error.description)
        }
        let parts = text.split(whereSeparator: \.isWhitespace)
        guard parts.count == 2, parts[0] == fileTag, let raw = Data(base64Encoded: String(parts[1])), raw.count == 32,
              let privateKey = try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)
        else {
            throw SyncError(.keyUnusable, path: url.path, detail: "not a multidoc device key; restore it from a backup, or move it away and remove this device from the container's admitted set (`multidoc device remove`) before it makes a new one")
        }
        return DeviceKey(privateKey: privateKey)
    }

    /// The Ed25519 signature of `bytes` (64 bytes).
    func signature(for bytes: [UInt8]) throws(SyncError) -> [UInt8] {
        do {
            return Array(try Curve25519.Signing.PrivateKey(rawRepresentation: raw).signature(for: bytes))
        } catch {
            throw SyncError(.keyUnusable, path: "device.key", detail: "signing failed: \(error)")
        }
    }

    /// Whether `signature` is `publicKey`'s Ed25519 signature of `bytes`.
    static func isValid(signature: some DataProtocol, of bytes: some DataProtocol, publicKey: [UInt8]) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey) else { return false }
        return key.isValidSignature(signature, for: bytes)
    }
}
