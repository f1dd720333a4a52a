import Engine
import Foundation
import Model
import Sync
import Testing
import TestSupport

/// The daemon's event coalescing, without processes.
@Suite struct SyncLoopTests {
    let container = URL(fileURLWithPath: "/tmp/container")

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
                for sequence in 1...50 { loop.noteContainer(logEvent(sequence.isMultiple(of: 2) ? one : two, sequence), root: container) }
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
            batch.add(.changed(base.appendingPathComponent(path)), container: container, ignoring: me)
        }
        #expect(batch.isEmpty)
        batch.add(.changed(base.appendingPathComponent("logs/\(peer)/0000000000000001.log")), container: container, ignoring: me)
        #expect(batch.target == [doc])
        var other = ChangeBatch()
        other.add(.changed(base.appendingPathComponent("info-\(peer).json")), container: container, ignoring: me)
        other.add(.changed(base.appendingPathComponent("baselines/\(peer)-9.json")), container: container, ignoring: me)
        #expect(other.target == [doc])
    }

    @Test func aFullPassRequestWinsOverTargetedHints() async {
        let loop = SyncLoop()
        var targets: [Set<DocumentID>?] = []
        await loop.run { batch in
            targets.append(batch.target)
            switch targets.count {
            case 1:
                loop.noteContainer(logEvent(DocumentID(Fixed.uuid(1)), 1), root: container)
                loop.requestFullPass()
            case 2:
                loop.noteContainer(.rescan, root: container)
            default:
                loop.finish()
            }
        }
        #expect(targets.count == 3)
        #expect(targets.allSatisfy { $0 == nil })
    }

    @Test func changesInTheDevicesDocumentsTargetTheirDocument() async {
        let loop = SyncLoop()
        let documents = URL(fileURLWithPath: "/tmp/root/Documents")
        let one = DocumentID(Fixed.uuid(1))
        var targets: [Set<DocumentID>?] = []
        await loop.run { batch in
            targets.append(batch.target)
            switch targets.count {
            case 1:
                loop.noteDocuments(.changed(documents.appendingPathComponent("\(one)/Notes/store.sqlite")), root: documents)
                loop.noteDocuments(.changed(documents.appendingPathComponent("\(one)")), root: documents)
            case 2:
                loop.noteDocuments(.changed(documents.appendingPathComponent("copyOfCloudContainer/x")), root: documents)
            default:
                loop.finish()
            }
        }
        #expect(targets.count == 3)
        #expect(targets.dropFirst().first == [one])
        #expect(targets.last == .some(nil), "a change outside any document's folder asks for a full pass")
    }

    @Test func finishBeforeRunRunsNothing() async {
        let loop = SyncLoop()
        loop.finish()
        #expect(await loop.run { _ in } == 0)
        #expect(loop.isFinished)
    }
}
