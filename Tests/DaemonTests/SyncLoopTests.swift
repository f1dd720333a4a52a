import Engine
import Foundation
import Model
import Sync
import Testing
import TestSupport

/// The daemon's event coalescing, without processes.
@Suite struct SyncLoopTests {
    let container = URL(fileURLWithPath: "/tmp/container")
    var view: Container { Container(root: container) }

    func logEvent(_ id: DocumentID, _ sequence: Int) -> ContainerWatcher.Event {
        .changed(container.appendingPathComponent("documents/\(id)/logs/device/\(sequence).log"))
    }

    @Test func hintsDuringAPassBecomeOneMorePass() async {
        let loop = SyncLoop()
        let one = DocumentID(Fixed.uuid(1)), two = DocumentID(Fixed.uuid(2))
        var batches: [ChangeBatch] = []
        let passes = await loop.run { batch in
            batches.append(batch)
            if batches.count == 1 {
                for sequence in 1...50 { loop.noteContainer(logEvent(sequence.isMultiple(of: 2) ? one : two, sequence), container: view) }
            } else {
                loop.finish()
            }
        }
        #expect(passes == 2)
        #expect(batches.first?.target == nil, "the first pass is a full pass")
        #expect(batches.last?.target == [one, two])
    }

    /// This device's own logs, info file and baselines never need importing here: a pass for
    /// them found nothing and held the next peer's log back.
    @Test func ownFilesAreNotPassesButPeersFilesAre() {
        let me = Fixed.device(1), peer = Fixed.device(2)
        let doc = DocumentID(Fixed.uuid(7))
        let base = container.appendingPathComponent("documents/\(doc)")
        var batch = ChangeBatch()
        for path in ["logs/\(me)/0000000000000003.log", "logs/\(me)", "info-\(me).json", "baselines/\(me)-3.json"] {
            batch.add(.changed(base.appendingPathComponent(path)), container: view, ignoring: me)
        }
        #expect(batch.isEmpty)
        batch.add(.changed(base.appendingPathComponent("logs/\(peer)/0000000000000001.log")), container: view, ignoring: me)
        #expect(batch.target == [doc])
        var other = ChangeBatch()
        other.add(.changed(base.appendingPathComponent("info-\(peer).json")), container: view, ignoring: me)
        other.add(.changed(base.appendingPathComponent("baselines/\(peer)-9.json")), container: view, ignoring: me)
        #expect(other.target == [doc])
    }

    /// A peer's document folder made ahead (`documents/.spare-<device>/…`) is no pass at all,
    /// whatever lies in it: readers skip it, and a full pass for each one made was a full pass
    /// on every device after every `new`.
    @Test func whatLiesBelowADotFolderIsNoPass() {
        let me = Fixed.device(1), peer = Fixed.device(2)
        var batch = ChangeBatch()
        for path in [".spare-\(peer)", ".spare-\(peer)/logs", ".spare-\(peer)/logs/\(peer)", ".spare-\(peer).building/logs/\(peer)/0000000000000001.log"] {
            batch.add(.changed(container.appendingPathComponent("documents/\(path)")), container: view, ignoring: me)
        }
        #expect(batch.isEmpty)
        #expect(batch.target == [])
    }

    /// A peer's log is an arrival its pass can import alone; a writer's temporary file is no
    /// pass at all (its rename is reported next); any other file of the document makes the
    /// document's pass a whole one.
    @Test func arrivedLogsAreKeptApartFromOtherChanges() {
        let me = Fixed.device(1), peer = Fixed.device(2)
        let logs = DocumentID(Fixed.uuid(7)), mixed = DocumentID(Fixed.uuid(8))
        var batch = ChangeBatch()
        batch.add(.changed(container.appendingPathComponent("documents/\(logs)/logs/\(peer)/.tmp-0000000000000004.log.12.34")), container: view, ignoring: me)
        batch.add(.changed(container.appendingPathComponent("documents/\(logs)/logs/\(peer)/.syncthing.0000000000000004.log.tmp")), container: view, ignoring: me)
        batch.add(.changed(container.appendingPathComponent("tombstones/.tmp-\(logs).\(peer).json.12.34")), container: view, ignoring: me)
        #expect(batch.isEmpty, "temporary files start no pass, not even a full one for a tombstone on its way")
        batch.add(.changed(container.appendingPathComponent("documents/\(logs)/logs/\(peer)/0000000000000004.log")), container: view, ignoring: me)
        batch.add(.changed(container.appendingPathComponent("documents/\(logs)/logs/\(peer)/0000000000000005.log")), container: view, ignoring: me)
        batch.add(.changed(container.appendingPathComponent("documents/\(mixed)/logs/\(peer)/0000000000000002.log")), container: view, ignoring: me)
        batch.add(.changed(container.appendingPathComponent("documents/\(mixed)/info-\(peer).json")), container: view, ignoring: me)
        batch.add(.changed(container.appendingPathComponent("documents/\(mixed)/logs/\(peer)/0000000000000003.log (conflict copy)")), container: view, ignoring: me)
        #expect(batch.target == [logs, mixed])
        #expect(batch.arrivals == [logs: [peer: [4, 5]]], "the document with an info file gets the whole pass")
    }

    @Test func aFullPassRequestWinsOverTargetedHints() async {
        let loop = SyncLoop()
        var targets: [Set<DocumentID>?] = []
        await loop.run { batch in
            targets.append(batch.target)
            switch targets.count {
            case 1:
                loop.noteContainer(logEvent(DocumentID(Fixed.uuid(1)), 1), container: view)
                loop.requestFullPass()
            case 2:
                loop.noteContainer(.rescan, container: view)
            default:
                loop.finish()
            }
        }
        #expect(targets.count == 3)
        #expect(targets.allSatisfy { $0 == nil })
    }

    /// A tombstone or identity this device wrote is its own write too: no pass. A peer's is a
    /// full pass (every document may be concerned).
    @Test func ownTombstonesAndIdentityAreNotPassesButPeersAre() {
        let me = Fixed.device(1), peer = Fixed.device(2)
        let doc = DocumentID(Fixed.uuid(7))
        var batch = ChangeBatch()
        batch.add(.changed(container.appendingPathComponent("tombstones/\(doc).\(me).json")), container: view, ignoring: me)
        batch.add(.changed(container.appendingPathComponent("identity/\(me).json")), container: view, ignoring: me)
        batch.add(.changed(container.appendingPathComponent("devices/\(peer).json")), container: view, ignoring: me)
        #expect(batch.isEmpty, "own tombstones and identity, and any registry file, start no pass")
        batch.add(.changed(container.appendingPathComponent("tombstones/\(doc).\(peer).json")), container: view, ignoring: me)
        #expect(batch.target == nil, "a peer's tombstone asks for a full pass")
    }

    @Test func aNotedDocumentIsATargetedPass() async {
        let loop = SyncLoop()
        let one = DocumentID(Fixed.uuid(1))
        var targets: [Set<DocumentID>?] = []
        await loop.run { batch in
            targets.append(batch.target)
            if targets.count == 1 { loop.note(one) } else { loop.finish() }
        }
        #expect(targets == [nil, [one]])
    }

    @Test func finishBeforeRunRunsNothing() async {
        let loop = SyncLoop()
        loop.finish()
        #expect(await loop.run { _ in } == 0)
        #expect(loop.isFinished)
    }
}
