import FileIO
import Foundation
import Model
import Storage
import Sync

/// One row of the master table.
public struct DocumentSummary: Sendable, Equatable, Codable {
    public var id: DocumentID
    public var name: String
    public var state: DocumentState
    public var origin: DocumentOrigin
    public var location: DocumentLocation
    public var store: StoreKind
    /// False until the first import of a discovered document completes (the seed's grey cell).
    public var viewable: Bool
    /// How much of what the container holds is in this device's store (0 for a preview).
    public var downloadPercent: Int
    public var modified: Date?
    /// Why the document is in an error state, if it is.
    public var problem: String?
    /// Where the document is in its life on this device (Docs/STATES.md): the one value the
    /// other fields agree with.
    public var life: DocumentLife

    /// Read from the container into memory only (a `list` on a device joining many documents):
    /// viewable while the container is there, not downloaded.
    public var previewed: Bool { life == .previewed }
}

/// The detail inspector's view of one document.
public struct DocumentDetail: Sendable, Equatable {
    public var summary: DocumentSummary
    public var text: String
    public var modified: Date?
    public var graph: ObjectGraph
    /// With CopyContainerOnSegue on: why the container could not be copied, if it could not.
    public var containerCopyProblem: String?
}

/// What happened in the library, for front ends to show (the seed's notifications).
/// A document a pass found quiet: nothing to import, ship or report, with what the master
/// table shows of it and the stamps of its container folders and local store files then. While
/// the stamps stay the same, passes and the list skip it without opening its store. Kept in
/// the ``DocumentCatalog``, so that a new process (a CLI command) skips quiet documents too.
struct QuietMark: Sendable, Equatable {
    var stamps: [FileStamp]
    /// The device folders among the container stamps (listed again only when `logs/` changes).
    var devices: [DeviceID]
    var applied: [DeviceID: UInt64]
    var viewable: Bool
    var modified: Date?
    /// The lowest sequence of this device's logs still in the container (0: none): when the
    /// registry changes, such a document may have logs to prune.
    var ownLogs: UInt64
    /// What the mark stands for: ``DocumentLife/downloaded`` (a store here with every log the
    /// container held), or ``DocumentLife/previewed`` (the container's logs read into memory, no
    /// local store yet: see ``FirstImports/whenNeeded``; `applied` is then empty).
    var life: DocumentLife = .downloaded

    var changeStamps: Container.ChangeStamps { Container.ChangeStamps(stamps: stamps, devices: devices) }
}

extension QuietMark {
    /// A mark of a downloaded document, or with `preview` of a previewed one.
    init(
        stamps: [FileStamp], devices: [DeviceID], applied: [DeviceID: UInt64], viewable: Bool, modified: Date?, ownLogs: UInt64,
        preview: Bool
    ) {
        self.init(
            stamps: stamps, devices: devices, applied: applied, viewable: viewable, modified: modified, ownLogs: ownLogs,
            life: preview ? .previewed : .downloaded)
    }
}

/// When a full pass makes the local store of a document it discovered.
public enum FirstImports: Sendable, Equatable {
    /// Now: the pass imports every discovered document (the daemon, the TUI, `multidoc sync`).
    case now
    /// When something first needs the document: opening it, a command about it, or a pass that
    /// imports now. Until then a pass previews it (reads its logs into memory, writes nothing
    /// but its record), so the master table says truthfully whether it is viewable: a device
    /// joining thousands of documents creates no store and waits on no disk flush to list them.
    case whenNeeded
}

/// How far a sync pass is: documents done of those it looks at, and logs imported so far.
public struct SyncProgress: Sendable, Equatable {
    public var done: Int
    public var total: Int
    public var importedLogs: Int

    public init(done: Int, total: Int, importedLogs: Int) {
        self.done = done
        self.total = total
        self.importedLogs = importedLogs
    }
}

public enum LibraryEvent: Sendable, Equatable {
    case documentAdded(DocumentSummary)
    case documentRemoved(DocumentID, name: String)
    /// Objects changed in memory (before a save).
    case objectsDidChange(DocumentID, ChangeSummary)
    case didSave(DocumentID, ChangeSummary)
    /// Changes from a peer were imported (NSPersistentStoreDidImportUbiquitousContentChanges).
    case didImport(DocumentID, ChangeSummary, from: [String])
    case becameViewable(DocumentID)
    case downloadProgress(DocumentID, percent: Int)
    case cloudAvailability(available: Bool, detail: String)
    case containerChanged(String)
    case quarantined(String)
    case recovered(DocumentID, report: String)
    case failure(String)
}

/// How a ubiquitous document becomes local (seed 004's three choices).
public enum MoveToLocalChoice: String, Sendable, CaseIterable, Codable {
    /// Keep a local copy and remove it from the cloud: peers drop it.
    case removeCloud = "remove-cloud"
    /// Keep a local copy and leave the cloud copy: the local one becomes a separate document.
    case keepCloud = "keep-cloud"
    /// Change nothing: keep using the cloud.
    case keepUsingCloud = "keep-using-cloud"
}

/// What the front end answers when the container's identity changed (the seed's
/// `coreDataStackManagerShouldUseUbiquitousStore:` delegate).
public enum ContainerChangeDecision: Sendable {
    /// Adopt the new container: documents found there are synced; cloud documents not found
    /// there are kept as local documents (nothing is lost).
    case adoptNew
    /// Stay local: the device neither reads nor writes this container. Its cloud documents keep
    /// working here and keep their saves in their outboxes; syncing resumes when the container
    /// it knew is back, or when the user adopts the new one (`multidoc container adopt`).
    case stayLocal
}

/// Something a sync pass could not do. Typed, so a front end can say what to run about it
/// without reading its words: ``wayOut`` is what gets out of a stuck state, and
/// ``description``, the line front ends print, ends with it.
public enum SyncProblem: Sendable, Hashable, CustomStringConvertible {
    /// `yyyy-MM-dd HH:mm:ssZ` (UTC), for a time inside a problem's line.
    static func utc(_ date: Date) -> String {
        var formatter = Date.ISO8601FormatStyle(timeZone: .gmt)
        formatter = formatter.dateSeparator(.dash).timeSeparator(.colon).dateTimeSeparator(.space)
        return formatter.format(date)
    }

    /// The pass did not sync with the container at all: it is missing or unreadable, or of a
    /// newer format (also in ``SyncReport/containerError``).
    case container(EngineError)
    /// The container's identity changed and this device stays local: its saves wait in their
    /// outboxes until the container it knew is back or the user runs `multidoc container adopt`.
    case containerChanged(String, wayOut: WayOut)
    /// One document could not be synced; the others went on.
    case document(name: String, detail: String)
    /// A document found in the container could not be given a local copy.
    case discovery(name: String, detail: String)
    /// A cloud document missing from a newly adopted container, kept here as a local document.
    case keptLocal(name: String)
    /// This device's progress could not be written to the container's registry.
    case registration(String)
    /// A document waits behind a log missing from the container for longer than a replication
    /// engine takes to deliver one: lost, most likely. The same gap is the same problem on every
    /// pass (the daemon logs it once).
    case stalled(name: String, gap: LogGap)
    /// A log waits for another device's log it was made on, missing from the container for
    /// longer than a replication engine takes to deliver one.
    case waitingForPeer(name: String, wait: DependencyWait)
    /// A document's saves could not be shipped into the container (read-only, full, a file
    /// where its folder belongs): they wait in its outbox and are shipped by a later pass, but
    /// no peer has them yet. `wayOut`: what lets them ship (another copy of this root took
    /// their slots: a new identity; otherwise a container that takes writes again).
    case unshipped(name: String, detail: String, wayOut: WayOut)
    /// The container is signed and this device is not admitted: its saves wait.
    case notAdmitted(String)
    /// The container is encrypted and this device does not hold its key.
    case locked(String)
    /// This device's clock and its peers' differ by more than ``ContainerBounds/maximumClockLead``.
    /// Nothing waits for it (stamps are applied as written on every device); said so the wrong
    /// clock is set right.
    case clock(ClockSkew)
    /// The container's identity files say an older format (`found`) than this device has seen
    /// it at (`seen`): a format file was damaged or removed. The device keeps writing the
    /// format it has seen; `multidoc container upgrade` writes the format file again.
    case formatKept(seen: Int, found: Int)
    /// This device met the signed container for the first time and trusts its root from now on
    /// (`admitted`: each admitted device and its fingerprint). Shown so the user compares the
    /// root's fingerprint with a device that synced there before; `multidoc container trust`
    /// pins another.
    case firstContact(root: String, admitted: [String])

    /// What gets out of the state this problem names, when something does.
    public var wayOut: WayOut? {
        switch self {
        case .containerChanged(_, let wayOut): wayOut
        case .stalled(_, let gap): .repair(writer: gap.device)
        case .waitingForPeer(_, let wait): .syncOn(wait.waitsFor)
        case .unshipped(_, _, let wayOut): wayOut
        case .locked: .unlock
        case .clock(let skew): skew.wayOut
        case .container, .document, .discovery, .keptLocal, .registration, .notAdmitted, .formatKept, .firstContact: nil
        }
    }

    public var description: String {
        wayOut.map { "\(summary); \($0)" } ?? summary
    }

    /// The problem without its way out.
    public var summary: String {
        switch self {
        case .container(let error): error.description
        case .containerChanged(let detail, _): detail + "; staying local"
        case .document(let name, let detail): "\(name): \(detail)"
        case .discovery(let name, let detail): "cannot create a local copy of \(name): \(detail)"
        case .keptLocal(let name): "\(name) is not in the new container; kept as a local document"
        case .registration(let detail): detail
        case .stalled(let name, let gap):
            "\(name) waits for \(gap), missing from the container while log \(gap.nextPresent) is there"
                + (gap.since.map { " (since \(Self.utc($0)))" } ?? "")
        case .waitingForPeer(let name, let wait):
            "\(name) waits: \(wait)" + (wait.since.map { " (since \(Self.utc($0)))" } ?? "")
                + "; that device's later saves of it wait too"
        case .unshipped(let name, let detail, _): "\(name): saves not shipped, kept in its outbox: \(detail)"
        case .notAdmitted(let detail), .locked(let detail): detail
        case .clock(let skew): skew.description
        case .firstContact(let root, let admitted):
            "first contact with this signed container: its root's fingerprint is \(root) (admitted: \(admitted.joined(separator: ", "))); compare it with `multidoc device list` on a device that synced here before, and if it differs run `multidoc container trust FINGERPRINT` with the right one"
        case .formatKept(let seen, let found):
            "the container's identity files say format \(found), but this device has seen it at format \(seen) and keeps writing format \(seen) "
                + "(a format file was damaged or removed); run `multidoc container upgrade` to write it again"
        }
    }
}

/// How this device's clock and its peers' disagree (``ClockReading``s off by more than
/// ``ContainerBounds/maximumClockLead``), and whose clock that makes wrong: this device's when
/// two or more peers agree with each other against it, one peer's when the others agree with
/// this device, either of two when there is one peer to compare with.
public struct ClockSkew: Sendable, Hashable, CustomStringConvertible {
    public enum Whose: Sendable, Hashable {
        /// Every peer (two or more) reads alike, and this device's clock is off from them.
        case thisDevice
        /// This peer's clock is off from this device's and the other peers'.
        case peer(String)
        /// The one peer there is reads off from this device: one of the two clocks is wrong.
        case either(String)
    }

    public let whose: Whose
    /// Seconds this device's clock reads ahead of the wrong one's, or of the peers' (negative: behind).
    public let seconds: Int64
    /// The peers compared with, by name.
    public let peers: [String]

    /// What the readings say, or nil when no clock is off.
    public static func judge(_ readings: [ClockReading]) -> [ClockSkew] {
        let off = readings.filter(\.isOff)
        guard !off.isEmpty else { return [] }
        if readings.count == 1, let only = readings.first {
            return [ClockSkew(whose: .either(only.name), seconds: only.offset, peers: [only.name])]
        }
        let sameWay = off.allSatisfy { $0.offset > 0 } || off.allSatisfy { $0.offset < 0 }
        if off.count == readings.count, sameWay {
            // The nearest of them: this device is at least that far off.
            let nearest = off.min { $0.offset.magnitude < $1.offset.magnitude }?.offset ?? 0
            return [ClockSkew(whose: .thisDevice, seconds: nearest, peers: readings.map(\.name))]
        }
        return off.map { ClockSkew(whose: .peer($0.name), seconds: $0.offset, peers: [$0.name]) }
    }

    public var description: String {
        let span = ContainerBounds.describe(seconds: Double(seconds.magnitude))
        let direction = seconds > 0 ? "ahead of" : "behind"
        switch whose {
        case .thisDevice:
            return "this device's clock reads \(span) \(direction) every peer's (\(peers.joined(separator: ", "))): its saves are stamped off by that much"
        case .peer(let name):
            return "device \(name)'s clock reads \(span) \(seconds > 0 ? "behind" : "ahead of") this device's and the other peers': its saves are stamped off by that much"
        case .either(let name):
            return "this device's clock reads \(span) \(direction) device \(name)'s: one of the two clocks is wrong, and its device's saves are stamped off by that much"
        }
    }

    /// Setting the wrong clock right.
    public var wayOut: WayOut {
        switch whose {
        case .thisDevice: .setClock(device: nil, orThisOne: false)
        case .peer(let name): .setClock(device: name, orThisOne: false)
        case .either(let name): .setClock(device: name, orThisOne: true)
        }
    }
}

/// What one sync pass did.
/// One ``Model/Conflict`` in one document, with the writers' names where the pass knows them.
public struct ConflictReport: Sendable, Equatable, Encodable, CustomStringConvertible {
    public var document: String
    public var attribute: String
    public var kept: String
    public var keptBy: String
    public var overwritten: String
    public var overwrittenBy: String

    public var description: String {
        "\(document): \(attribute) kept \(kept) from \(keptBy), overwrote \(overwritten) from \(overwrittenBy)"
    }
}

public struct SyncReport: Sendable, Equatable {
    public var cloudAvailable = true
    public var discovered: [String] = []
    public var removed: [String] = []
    public var importedLogs = 0
    /// Of `importedLogs`, those imported as the watcher saw them arrive, without listing their
    /// document's folders (``DocumentLibrary/sync(documents:arrivals:firstImports:progress:)``).
    public var importedOnArrival = 0
    public var exportedLogs = 0
    /// Container files the pass would not trust, each with why.
    public var quarantined: [QuarantinedFile] = []
    public var problems: [SyncProblem] = []
    /// Documents a full pass skipped because nothing changed since it last found them quiet.
    public var skippedQuiet = 0
    /// Values last-writer-wins decided between devices that had not seen each other's write
    /// (texts merge and are never here): what was kept and what was overwritten, by whom.
    public var conflicts: [ConflictReport] = []
    /// Why the pass did not sync with the container at all, when that is so: it is missing or
    /// unreadable (``EngineError/containerUnavailable(_:)``), of a newer format
    /// (``EngineError/containerFormat(_:)``), or refused after its identity changed.
    public var containerError: EngineError?

    /// The documents whose saves could not be shipped (``SyncProblem/unshipped(name:detail:)``).
    public var unshipped: [String] {
        problems.compactMap { if case .unshipped(let name, _, _) = $0 { name } else { nil } }
    }

    public init() {}
}
