import FileIO
import Foundation
import Model
import Sync
import Storage

/// A device's folder (its sandbox): identity, settings, documents, latencies.
///
/// ```
/// <root>/device.json                       DeviceFile (UUID, model, remembered container)
/// <root>/device.key                        the device's Ed25519 signing key (0600; never in the container)
/// <root>/container.key                     keys of encrypted containers this device unlocked (0600)
/// <root>/settings.json                     Settings
/// <root>/Documents/<uuid>/document.json    LocalDocumentRecord
/// <root>/Documents/<uuid>/<name>/store.*   the document's store (UUID precedes the name, seed 000)
/// <root>/Documents/copyOfCloudContainer/   CopyContainerOnSegue's copy
/// <root>/latencies.jsonl                   recorded sync latencies (one sample a line)
/// <root>/catalog                           records and quiet documents, a cache (DocumentCatalog)
/// <root>/deletions                         cloud documents deleted here or by a peer, for good (DeletionLedger)
/// <root>/.spare-<kind>/                    the next document's folder, made ahead: store/, the record's file (SpareStores)
/// ```
public struct DeviceRoot: Sendable {
    public let url: URL
    /// `Documents/`'s path, made once: a record's path is asked for on every save and import.
    let documentsPath: String
    /// ``deviceFileURL``'s path, made once: every save looks at the device file's stamp.
    let deviceFilePath: String

    /// Resolves symlinks so one folder is never seen under two spellings (seed: NSURL+NPAssisting).
    public init(url: URL) {
        self.url = url.standardizedFileURL.resolvingSymlinksInPath()
        documentsPath = self.url.appendingPathComponent("Documents", isDirectory: false).path
        deviceFilePath = self.url.appendingPathComponent(Self.deviceFileName, isDirectory: false).path
    }

    /// The device file's name (``deviceFileURL``).
    public static let deviceFileName = "device.json"
    /// The device key's name (``deviceKeyURL``).
    static let deviceKeyFileName = "device.key"

    /// Whether `folder` holds a device root's files: `Documents/` with the device file or the
    /// device key (a root holds both; one cut short after its key holds no device file yet).
    /// A container or a copy's destination must never be one.
    public static func looksLikeRoot(_ folder: URL) -> Bool {
        var isFolder: ObjCBool = false
        let documents = folder.appendingPathComponent("Documents", isDirectory: false).path
        guard FileManager.default.fileExists(atPath: documents, isDirectory: &isFolder), isFolder.boolValue else { return false }
        return [deviceFileName, deviceKeyFileName].contains {
            FileManager.default.fileExists(atPath: folder.appendingPathComponent($0, isDirectory: false).path)
        }
    }

    public var documentsDirectory: URL { url.appendingPathComponent("Documents", isDirectory: false) }
    public var deviceFileURL: URL { url.appendingPathComponent(Self.deviceFileName, isDirectory: false) }
    public var deviceKeyURL: URL { url.appendingPathComponent(Self.deviceKeyFileName, isDirectory: false) }
    public var containerKeyURL: URL { url.appendingPathComponent("container.key", isDirectory: false) }
    /// The trust this device learned of signed containers (Sync's ``Sync/LearnedTrust``).
    public var trustURL: URL { url.appendingPathComponent("trust.json", isDirectory: false) }
    public var latenciesURL: URL { url.appendingPathComponent("latencies.jsonl", isDirectory: false) }
    /// The catalog of records and quiet documents (a cache: deleting it costs one slower pass).
    public var catalogURL: URL { url.appendingPathComponent("catalog", isDirectory: false) }
    /// The documents this device deleted or saw deleted (``DeletionLedger``; not a cache).
    var deletionsURL: URL { url.appendingPathComponent("deletions", isDirectory: false) }
    public var copyOfContainerURL: URL { documentsDirectory.appendingPathComponent("copyOfCloudContainer", isDirectory: false) }
    public var daemonLockURL: URL { url.appendingPathComponent("multidocd.lock", isDirectory: false) }
    public var daemonStatusURL: URL { url.appendingPathComponent("multidocd.status.json", isDirectory: false) }
    public var writeLockURL: URL { url.appendingPathComponent(".library.lock", isDirectory: false) }
    /// An empty store of `kind`, made ahead for the next document (``SpareStores``).
    public func spareStoreDirectory(_ kind: StoreKind) -> URL { url.appendingPathComponent(".spare-\(kind.rawValue)", isDirectory: false) }
    func spareBuildingDirectory(_ kind: StoreKind) -> URL { url.appendingPathComponent(".spare-\(kind.rawValue).building", isDirectory: false) }
    var spareLockURL: URL { url.appendingPathComponent(".spare.lock", isDirectory: false) }
    /// Held while `new` picks a default name and records the document.
    var namingLockURL: URL { url.appendingPathComponent(".naming.lock", isDirectory: false) }

    public func documentDirectory(_ id: DocumentID) -> URL { documentsDirectory.appendingPathComponent(id.description, isDirectory: false) }
    public static let recordFileName = "document.json"
    public func recordURL(_ id: DocumentID) -> URL { documentDirectory(id).appendingPathComponent(Self.recordFileName, isDirectory: false) }
    /// ``recordURL(_:)``'s path, without a URL made on the way.
    func recordPath(_ id: DocumentID) -> String { documentsPath + "/" + id.description + "/" + Self.recordFileName }
    /// The folder of a document's store: `Documents/<uuid>/<folder>/`, named after the document
    /// when its store was made and never moved by a rename (``LocalDocumentRecord/folder``).
    public func storeDirectory(_ record: LocalDocumentRecord) -> URL {
        documentDirectory(record.id).appendingPathComponent(record.storeFolder.rawValue, isDirectory: false)
    }
    public func storeURL(_ record: LocalDocumentRecord) -> URL {
        storeDirectory(record).appendingPathComponent(record.store.fileName, isDirectory: false)
    }

    /// Checks the folder exists and is usable, creating it only if `create`.
    public func prepare(create: Bool) throws(EngineError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw EngineError.rootUnusable(url.path, "not a folder") }
            guard FileManager.default.isWritableFile(atPath: url.path), FileManager.default.isReadableFile(atPath: url.path) else {
                throw EngineError.rootUnusable(url.path, "not readable and writable")
            }
        } else {
            guard create else { throw EngineError.rootUnusable(url.path, "no such folder") }
        }
        do {
            try AtomicFile.makeDirectory(url)
            try AtomicFile.makeDirectory(documentsDirectory)
        } catch {
            throw EngineError.rootUnusable(url.path, error.description)
        }
    }

    /// The device's identity, created on first use.
    public func loadDevice(defaultName: String, model: String, newID: () -> UUID) throws(EngineError) -> DeviceFile {
        if let data = try? AtomicFile.read(deviceFileURL) {
            do {
                return try JSONDecoder.multidoc.decode(DeviceFile.self, from: data)
            } catch {
                throw EngineError.damagedFile(
                    deviceFileURL.path,
                    "not a device file; put back a copy from a backup of this root (it holds the device's UUID, which its stores and the container know), or move it aside to set this root up as a new device, whose saves not shipped yet then stay behind")
            }
        }
        let file = DeviceFile(id: DeviceID(newID()), model: model, containerID: nil)
        try saveDevice(file)
        return file
    }

    /// The device file as saved, or nil when there is none or it cannot be read (read-only).
    public func savedDevice() -> DeviceFile? {
        (try? AtomicFile.read(deviceFileURL)).flatMap { try? JSONDecoder.multidoc.decode(DeviceFile.self, from: $0) }
    }

    public func saveDevice(_ file: DeviceFile) throws(EngineError) {
        do {
            try AtomicFile.write(try JSONEncoder.multidoc.encode(file), to: deviceFileURL)
        } catch {
            throw EngineError.io(deviceFileURL.path, "\(error)")
        }
    }

    /// Every local document record.
    public func records() -> [LocalDocumentRecord] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: documentsDirectory.path)) ?? []
        let decoder = JSONDecoder.multidoc
        return names.compactMap(DocumentID.init).compactMap { id in
            guard let data = try? AtomicFile.read(recordURL(id)) else { return nil }
            return try? decoder.decode(LocalDocumentRecord.self, from: data)
        }
    }

    /// How many documents have a record, without reading them (the daemon's status, per pass).
    public func recordCount() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: documentsDirectory.path)) ?? []
        return names.compactMap(DocumentID.init).filter { access(recordURL($0).path, F_OK) == 0 }.count
    }

    public func record(_ id: DocumentID) -> LocalDocumentRecord? {
        guard let data = try? AtomicFile.read(recordURL(id)) else { return nil }
        return try? JSONDecoder.multidoc.decode(LocalDocumentRecord.self, from: data)
    }

    /// Writes a record (atomically; `durable`: flushed to the disk before it returns).
    public func save(_ record: LocalDocumentRecord, durable: Bool = true) throws(EngineError) {
        do {
            try AtomicFile.makeDirectory(documentDirectory(record.id))
            // Into the file a spare document folder brings (SpareStores), when it is there.
            try AtomicFile.write(
                try JSONEncoder.multidoc.encode(record), to: recordURL(record.id), durability: durable ? .durable : .none, usingSpare: true)
        } catch {
            throw EngineError.io(recordURL(record.id).path, "\(error)")
        }
    }
}

/// `device.json`: what a device root remembers about itself.
public struct DeviceFile: Codable, Sendable, Equatable {
    public var id: DeviceID
    public var model: String
    /// The container identity this device last synced with.
    public var containerID: UUID?
    /// That container's format (absent: 1, as in files written before format 2).
    public var containerFormat: Int?
    /// The signing root this device trusts for that container (absent: unsigned, as far as it
    /// knows). Remembered the first time it sees the container signed; never replaced by what
    /// the container says later.
    public var signingRoot: SigningRoot?
    /// What this device last re-sealed its own files for: 1 signed, 2 encrypted (absent: never).
    public var resealed: Int?

    /// What this device writes while it cannot look at the container: what it last saw there.
    /// The container's identity comes with format 1 too: a save of a text that is already a
    /// sequence is written in format 2 whatever the device saw (``Sync/Replicator``).
    public var logFormat: LogFormat {
        LogFormat(version: (containerFormat ?? 1) >= 2 ? 2 : 1, container: containerID)
    }
}

/// `Documents/<uuid>/document.json`: what this device knows of one document.
public struct LocalDocumentRecord: Codable, Sendable, Equatable {
    public var id: DocumentID
    public var name: DocumentName
    public var store: StoreKind
    public var origin: DocumentOrigin
    public var location: DocumentLocation
    public var createdAt: Date
    public var createdBy: DeviceID
    /// The container identity the document was shared under (nil for local documents, and in
    /// records of earlier versions). A device adopting a reset container keeps in the cloud
    /// only what was shared under the identity it adopts.
    public var container: UUID?
    /// The name of the store's folder once the document was renamed (nil: its name, as before
    /// any rename). A rename changes `name` only: moving the folder under a store that another
    /// process had open split SQLite's files and raced with saves, and a record written in
    /// between pointed at a folder that was gone.
    public var folder: DocumentName? = nil

    /// The folder the store lives in.
    public var storeFolder: DocumentName { folder ?? name }
}

extension JSONEncoder {
    static var multidoc: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

extension JSONDecoder {
    static var multidoc: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
