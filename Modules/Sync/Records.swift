import Foundation
import Model
import Storage
import Text

/// The container's identity file: written once by the device that seeds the container
/// (the seed APCoreDataStackManager's Configuration.plist).
public struct ContainerIdentity: Codable, Sendable, Hashable {
    public var format: Int
    public var containerID: UUID
    public var seededBy: DeviceID
    public var seededAt: Date
    /// The identities this one replaces (a reset, or a device adopting a new container): a device
    /// that remembers one of them knows the container was reset even while the old identity
    /// file is still on its way out of its replica. Absent in files written before it existed.
    public var replaces: [UUID]?

    public init(format: Int = Container.formatVersion, containerID: UUID, seededBy: DeviceID, seededAt: Date, replaces: [UUID]? = nil) {
        self.format = format
        self.containerID = containerID
        self.seededBy = seededBy
        self.seededAt = seededAt
        self.replaces = replaces
    }
}

/// What a peer can see of a document before its logs arrive. Written once by the creating device.
public struct DocumentInfo: Codable, Sendable, Hashable {
    public var format: Int
    public var document: DocumentID
    public var name: DocumentName
    public var createdBy: DeviceID
    public var createdByName: String
    public var createdAt: Date
    public var store: StoreKind
    /// The container identity in force when the document was published (absent in files of
    /// earlier versions). After a reset, a replica may still hold folders of the old container
    /// for a while; their info files name an identity that is no longer in force, so nobody
    /// takes them for documents of the new one (``Container/isLeftOver(_:inForce:)``).
    public var container: UUID?

    public init(
        document: DocumentID, name: DocumentName, createdBy: DeviceID, createdByName: String, createdAt: Date, store: StoreKind,
        container: UUID? = nil
    ) {
        self.container = container
        self.format = Container.recordFormat
        self.document = document
        self.name = name
        self.createdBy = createdBy
        self.createdByName = createdByName
        self.createdAt = createdAt
        self.store = store
    }
}

/// A deleted document. Written once by each device that deletes it; kept for good so the
/// document never comes back ("zombie documents", seed 001).
public struct DocumentTombstone: Codable, Sendable, Hashable {
    public var format: Int
    public var document: DocumentID
    public var deletedBy: DeviceID
    public var deletedAt: Date

    public init(document: DocumentID, deletedBy: DeviceID, deletedAt: Date) {
        self.format = Container.recordFormat
        self.document = document
        self.deletedBy = deletedBy
        self.deletedAt = deletedAt
    }
}

/// A device's entry in the container's registry: who it is and what it has applied.
/// Each device writes only its own file.
public struct DeviceRecord: Codable, Sendable, Hashable {
    public var format: Int
    public var device: DeviceID
    public var name: String
    public var model: String
    public var updatedAt: Date
    /// Per document, per origin device, the highest sequence applied.
    public var applied: [DocumentID: [DeviceID: UInt64]]
    /// The newest container format the device's build reads (absent: 1, a build before
    /// format 2). `container upgrade` waits until every device reads the new format.
    public var reads: Int?
    /// The device's Ed25519 public key and its fingerprint (absent: a build before signing).
    /// In a signed container, an entry whose key no admission lists is a request to join.
    public var key: Data?
    public var fingerprint: String?

    public init(device: DeviceIdentity, updatedAt: Date, applied: [DocumentID: [DeviceID: UInt64]], key: [UInt8]? = nil) {
        self.key = key.map { Data($0) }
        self.fingerprint = key.map { KeyFingerprint(publicKey: $0).description }
        self.format = Container.recordFormat
        self.device = device.id
        self.name = device.name
        self.model = device.model
        self.updatedAt = updatedAt
        self.applied = applied
        self.reads = Container.formatVersion
    }
}

extension DeviceRecord {
    /// The record as compact JSON with sorted keys, written by hand: a registry entry holds a
    /// map per document, and JSONEncoder's tree of 10,000 of them (pretty-printed, 1 MB) was a
    /// daemon's peak memory at that size. Read back by JSONDecoder like any record.
    func encodedJSON() -> Data {
        var out: [UInt8] = []
        out.reserveCapacity(256 + applied.count * 88)
        func raw(_ text: String) { out.append(contentsOf: text.utf8) }
        func string(_ text: String) { JSONQuote.append(text, to: &out) }
        raw(#"{"applied":{"#)
        var first = true
        for (document, devices) in applied.sorted(by: { $0.key < $1.key }) {
            if !first { raw(",") }
            first = false
            string(document.description)
            raw(":{")
            var firstDevice = true
            for (origin, sequence) in devices.sorted(by: { $0.key < $1.key }) {
                if !firstDevice { raw(",") }
                firstDevice = false
                string(origin.description)
                raw(":\(sequence)")
            }
            raw("}")
        }
        raw(#"},"device":"#)
        string(device.description)
        if let fingerprint {
            raw(#","fingerprint":"#)
            string(fingerprint)
        }
        raw(#","format":\#(format)"#)
        if let key {
            raw(#","key":"#)
            string(key.base64EncodedString())
        }
        raw(#","model":"#)
        string(model)
        raw(#","name":"#)
        string(name)
        if let reads { raw(#","reads":\#(reads)"#) }
        raw(#","updatedAt":\#(updatedAt.clampedMilliseconds)}"#)
        return Data(out)
    }
}

/// A snapshot of a document's state at a known set of applied logs: enough to build the
/// document from scratch and go on with the logs after it.
public struct Baseline: Codable, Sendable, Hashable {
    public var format: Int
    public var document: DocumentID
    public var writtenBy: DeviceID
    public var writtenAt: Date
    /// Per origin device, the logs (1 through N) this snapshot includes.
    public var applied: [DeviceID: UInt64]
    public var objects: [ObjectID: ObjectRecord]
    public var stamps: [ObjectID: [String: Stamp]]
    public var tombstones: [ObjectID: Stamp]
    /// The replicated sequence of every text attribute that has one (format 2; absent before).
    public var texts: [ObjectID: [String: TextSequence]]?

    public init(document: DocumentID, writtenBy: DeviceID, writtenAt: Date, contents: StoreContents) {
        self.format = contents.sync.texts.isEmpty ? 1 : 2
        self.document = document
        self.writtenBy = writtenBy
        self.writtenAt = writtenAt
        self.applied = contents.sync.applied
        self.objects = contents.graph.objects
        self.stamps = contents.sync.stamps
        self.tombstones = contents.sync.tombstones
        self.texts = contents.sync.texts.isEmpty ? nil : contents.sync.texts
    }

    /// How many logs the snapshot includes, over all devices.
    public var coverage: UInt64 { applied.values.reduce(0, ContainerBounds.sum) }
}
