import Crypto
import Foundation
import Model
import Text

/// Format 2's envelope around every binary container file (Docs/CONTAINER-FORMAT.md, "Format 2"):
///
/// ```
/// "MDC2"  kind (1 byte)  flags (1 byte)  header length, header  payload length, payload  [checksum]  [signature]
/// ```
///
/// The header is cleartext and says where the file belongs (container, document, writer, place),
/// so a file copied under another name, into another document or another container is refused
/// before its payload is read. Lengths are LEB128 varints; every one is capped before anything
/// is allocated. Flags other than the ones this build knows make the file unreadable here (a
/// newer writer's file is refused, never half-read).
///
/// Every envelope this build writes carries a checksum (flag bit 2): the first 8 bytes of the
/// SHA-256 of every byte before it, checked before anything else is read, so a damaged file is
/// refused ("damaged: checksum mismatch") instead of decoding into other content. Files of
/// earlier writers (no flag) are still read; clearing the flag leaves 8 bytes no reader takes.
public struct ContainerEnvelope: Sendable, Hashable {
    public enum Kind: UInt8, Sendable, CaseIterable {
        // A join request is a device's registry entry signed by its own key (no kind of its own).
        case log = 1, baseline, info, tombstone, registry, identity, admission

        var name: String {
            switch self {
            case .log: "log"
            case .baseline: "baseline"
            case .info: "info"
            case .tombstone: "tombstone"
            case .registry: "registry"
            case .identity: "identity"
            case .admission: "admission"
            }
        }
    }

    /// Where a file belongs. Compared with the file's path and the container it lies in.
    public struct Header: Sendable, Hashable {
        /// The container's identity UUID (zeros: written before the writer knew it).
        public var container: UUID
        /// The document (zeros for container-wide files).
        public var document: UUID
        /// The writing device.
        public var writer: UUID
        /// The log's sequence, the baseline's coverage, a record's version.
        public var place: UInt64
        /// Milliseconds since 1970 when the file was made.
        public var writtenAt: UInt64
        /// The first 8 bytes of the writer's key fingerprint (zeros while unsigned).
        public var fingerprint: [UInt8]

        public init(container: UUID, document: UUID, writer: UUID, place: UInt64, writtenAt: UInt64, fingerprint: [UInt8] = Array(repeating: 0, count: 8)) {
            self.container = container
            self.document = document
            self.writer = writer
            self.place = place
            self.writtenAt = writtenAt
            self.fingerprint = fingerprint
        }
    }

    public static let magic: [UInt8] = Array("MDC2".utf8)
    /// Bit 0: a 64-byte Ed25519 signature over every byte before it follows the payload.
    public static let signedFlag: UInt8 = 1
    /// Bit 1: the payload is sealed (ChaCha20-Poly1305 under the container key, the bytes
    /// before it as associated data): 12-byte nonce, ciphertext, 16-byte tag.
    public static let encryptedFlag: UInt8 = 2
    /// Bit 2: an 8-byte checksum follows the payload (before the signature, which covers it):
    /// the first 8 bytes of SHA-256 over every byte before it. Set on every envelope this build
    /// writes; builds before it refuse such a file (an unknown flag) instead of misreading it.
    public static let checksumFlag: UInt8 = 4
    /// Flags this build understands; a file with any other bit set is refused.
    static let knownFlags: UInt8 = signedFlag | encryptedFlag | checksumFlag
    static let maximumHeaderLength = 256
    static let signatureLength = 64
    static let checksumLength = 8

    /// The checksum of `bytes`: the first ``checksumLength`` bytes of their SHA-256
    /// (Docs/DECISIONS.md, "A checksum on every envelope").
    static func checksum(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        bytes.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        return Array(hasher.finalize().prefix(checksumLength))
    }

    public var kind: Kind
    public var flags: UInt8
    public var header: Header
    public var payload: [UInt8]
    /// The signature read with the file, or made by ``ContainerKeys`` (signed files only).
    public var signature: [UInt8]?
    /// How many bytes of the file the signature covers (every byte before it), as read.
    var signedLength: Int?

    public init(kind: Kind, header: Header, payload: [UInt8]) {
        self.kind = kind
        self.flags = Self.checksumFlag
        self.header = header
        self.payload = payload
    }

    public var isSigned: Bool { flags & Self.signedFlag != 0 }
    public var isEncrypted: Bool { flags & Self.encryptedFlag != 0 }
    /// Whether the file carries a checksum (every envelope this build writes does).
    public var isChecksummed: Bool { flags & Self.checksumFlag != 0 }

    /// Whether `data` starts like a format 2 file (as opposed to format 1's JSON).
    public static func isEnvelope(_ data: some Collection<UInt8>) -> Bool {
        data.starts(with: magic)
    }

    public var encoded: [UInt8] {
        var bytes = signedPart(reserving: isSigned ? signature?.count ?? 0 : 0)
        if isSigned, let signature { bytes += signature }
        return bytes
    }

    /// The magic, kind, flags and header: the associated data of a sealed payload, so a payload
    /// moved under another header does not open.
    var associatedData: [UInt8] {
        var writer = ByteWriter()
        writer.raw(Self.magic)
        writer.byte(kind.rawValue)
        writer.byte(flags)
        let header = headerBytes
        writer.varint(header.count)
        writer.raw(header)
        return writer.bytes
    }

    private var headerBytes: [UInt8] {
        var headerBytes = ByteWriter()
        headerBytes.uuid(header.container)
        headerBytes.uuid(header.document)
        headerBytes.uuid(header.writer)
        headerBytes.varint(header.place)
        headerBytes.varint(header.writtenAt)
        headerBytes.raw(header.fingerprint.prefix(8) + Array(repeating: 0, count: max(0, 8 - header.fingerprint.count)))
        return headerBytes.bytes
    }

    /// Every byte a signature covers: the file without its signature.
    var signedPart: [UInt8] { signedPart(reserving: 0) }

    /// The signed part in a buffer with room for `extra` bytes more (a baseline's payload is
    /// megabytes: growing the buffer while copying it in cost a third of writing one); the
    /// checksum, when the flags ask for it, ends it.
    private func signedPart(reserving extra: Int) -> [UInt8] {
        var writer = ByteWriter()
        writer.bytes.reserveCapacity(payload.count + 128 + Self.checksumLength + extra)
        writer.raw(associatedData)
        writer.varint(payload.count)
        writer.raw(payload)
        if isChecksummed { writer.raw(Self.checksum(writer.bytes[...])) }
        return writer.bytes
    }

    /// Reads an envelope, its payload at most `maximumPayload` bytes.
    /// - Throws: ``LogDecodingError`` naming the first problem.
    public init(decoding bytes: [UInt8], maximumPayload: Int) throws(LogDecodingError) {
        var reader = ByteReader(bytes)
        do {
            guard Self.isEnvelope(bytes) else { throw LogDecodingError(reason: "not a format 2 file (no MDC2 magic)") }
            _ = try reader.raw(count: 4)
            let kindByte = try reader.byte()
            let flags = try reader.byte()
            guard flags & ~Self.knownFlags == 0 else {
                throw LogDecodingError(reason: "flags \(flags) this build does not know (written by a newer build?)")
            }
            // The checksum first: a damaged file is named as damaged, whatever its damage
            // would make of the fields read below.
            let checksumEnd: Int?
            if flags & Self.checksumFlag != 0 {
                let trailer = Self.checksumLength + (flags & Self.signedFlag != 0 ? Self.signatureLength : 0)
                guard bytes.count >= reader.offset + trailer else { throw LogDecodingError(reason: "damaged: cut short (no room for its checksum)") }
                let start = bytes.count - trailer
                let end = start + Self.checksumLength
                guard Self.checksum(bytes[..<start]).elementsEqual(bytes[start..<end]) else {
                    throw LogDecodingError(reason: "damaged: checksum mismatch")
                }
                checksumEnd = end
            } else {
                checksumEnd = nil
            }
            guard let kind = Kind(rawValue: kindByte) else { throw LogDecodingError(reason: "unknown file kind \(kindByte)") }
            let headerLength = try reader.count(maximum: Self.maximumHeaderLength)
            var headerReader = ByteReader(Array(try reader.raw(count: headerLength)))
            let container = try headerReader.uuid()
            let document = try headerReader.uuid()
            let writer = try headerReader.uuid()
            let place = try headerReader.varint()
            let writtenAt = try headerReader.varint()
            let fingerprint = Array(try headerReader.raw(count: 8))
            try headerReader.finish()
            let payloadLength = try reader.count(maximum: maximumPayload)
            let payload = Array(try reader.raw(count: payloadLength))
            if let checksumEnd {
                // Verified above; it must start where the payload ends.
                _ = try reader.raw(count: Self.checksumLength)
                guard reader.offset == checksumEnd else { throw LogDecodingError(reason: "malformed envelope: its checksum is not where its payload ends") }
            }
            if flags & Self.signedFlag != 0 {
                self.signedLength = reader.offset
                self.signature = Array(try reader.raw(count: Self.signatureLength))
            }
            try reader.finish()
            self.kind = kind
            self.flags = flags
            self.header = Header(container: container, document: document, writer: writer, place: place, writtenAt: writtenAt, fingerprint: fingerprint)
            self.payload = payload
        } catch let error as LogDecodingError {
            throw error
        } catch {
            throw LogDecodingError(reason: "malformed envelope: \(error)")
        }
    }

    /// Checks the header against where the file lies. `refusing`: container identities a file
    /// must not name (replaced by a reset). An identity not seen here is not refused: in a
    /// replicated folder a peer's files may arrive before its identity file. (Signatures, not
    /// this comparison, will keep out files copied from elsewhere.)
    func check(kind expected: Kind, refusing: Set<UUID>, document: UUID, writer: UUID, place: UInt64?) throws(LogDecodingError) {
        guard kind == expected else { throw LogDecodingError(reason: "is a \(kind.name) file where a \(expected.name) belongs") }
        if refusing.contains(header.container) {
            throw LogDecodingError(reason: "was written for container \(header.container.uuidString.lowercased()), which a reset replaced: a left-over of the old container")
        }
        guard header.document == document else {
            throw LogDecodingError(reason: "names document \(header.document.uuidString.lowercased()) but lies in \(document.uuidString.lowercased())'s folder")
        }
        guard header.writer == writer else {
            throw LogDecodingError(reason: "claims device \(header.writer.uuidString.lowercased()) but lies in \(writer.uuidString.lowercased())'s folder")
        }
        if let place, header.place != place { throw LogDecodingError(reason: "claims sequence \(header.place) but is named \(place)") }
    }

    static let zero = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
