import Foundation
import Model
import Storage
import Sync
import Synchronization
import Testing
import TestSupport

@Suite struct PowerLossTests {
    let doc = DocumentID(Fixed.uuid(0x90E))
    let format2 = LogFormat(version: 2, container: Fixed.uuid(7))

    func device(_ n: Int, _ name: String, _ harness: SyncHarness, volume: PowerLossVolume, baselineThreshold: Int = 100) -> SyncDevice {
        SyncDevice(
            n, name: name, container: harness.container, provider: volume.provider, kind: .sqlite, folder: harness.folder.url,
            clock: harness.clock, baselineThreshold: baselineThreshold, format: format2)
    }

    /// Devices A and B on `harness`, each on a volume of its own: A made the document with
    /// the text "one", and B imported it.
    func twoDevices(_ harness: SyncHarness) throws -> (a: SyncDevice, b: SyncDevice, volumeA: PowerLossVolume, volumeB: PowerLossVolume) {
        let volumeA = PowerLossVolume(), volumeB = PowerLossVolume()
        let a = device(1, "A", harness, volume: volumeA), b = device(2, "B", harness, volume: volumeB)
        try a.create(doc, name: "Power", text: "one", now: harness.clock.now())
        try b.importPending(doc)
        return (a, b, volumeA, volumeB)
    }

    /// B imports A's saves, the power goes: B is back where it was and imports them again, each
    /// once. A save B makes after an import keeps that import through a power loss.
    @Test func anImportUndoneByAPowerLossIsImportedAgainAndASaveKeepsWhatItWasMadeOn() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let (a, b, volumeA, volumeB) = try twoDevices(harness)
        // A checkpoint (or any synced commit) since: "one" is durable on B.
        try b.store(doc).sync()
        try a.edit(doc, text: "one two")
        try a.edit(doc, text: "one two three")
        #expect(try b.importPending(doc).imported.count == 2)
        #expect(try b.text(doc) == "one two three")

        volumeB.powerLoss()
        #expect(try b.text(doc) == "one", "the imports were synced after all")
        let again = try b.importPending(doc)
        #expect(again.imported.count == 2)
        #expect(try b.text(doc) == "one two three")
        #expect(try b.importPending(doc).imported.isEmpty)

        // B's own save is synced, and with it the import it was made on.
        try a.edit(doc, text: "one two three four")
        try b.importPending(doc)
        try b.edit(doc, text: "one two three four five")
        volumeB.powerLoss()
        #expect(try b.text(doc) == "one two three four five")
        // A's saves were synced when made: nothing of A's is lost either.
        volumeA.powerLoss()
        try a.importPending(doc)
        #expect(try a.text(doc) == "one two three four five")
    }

    /// The number of a process that has exited.
    func exitedProcess() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    /// A save's log is synced under its temporary name and renamed into its slot without a
    /// sync of the folder: a power loss may undo the rename with the commit. The device's next
    /// pass puts the log in its slot and imports it, and peers read it as they would have. A
    /// log whose process still runs is that process's to place, and left where it is.
    @Test func aSaveWhoseRenameAPowerLossUndidIsPutInItsSlotAtTheNextPass() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        var (a, b, volumeA, _) = try twoDevices(harness)
        try a.editWritingAhead(doc, text: "one two")
        let container = Container(root: harness.container)
        let slot = container.logURL(doc, device: a.identity.id, sequence: 2)
        let folder = slot.deletingLastPathComponent()
        #expect(try a.text(doc) == "one two")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["0000000000000001.log", "0000000000000002.log"])

        // What the power loss leaves: the log under the name it was synced by, the commit undone.
        let running = folder.appendingPathComponent(".tmp-0000000000000002.log.\(ProcessInfo.processInfo.processIdentifier).17", isDirectory: false)
        try FileManager.default.moveItem(at: slot, to: running)
        volumeA.powerLoss()
        #expect(try a.text(doc) == "one")
        harness.clock.advance(1)
        let restarted = harness.clock.now()
        a.replicator.bootedAt = { restarted }
        #expect(try a.importPending(doc).imported.isEmpty, "its process runs: the log is its to place")
        #expect(FileManager.default.fileExists(atPath: running.path))

        let unplaced = folder.appendingPathComponent(".tmp-0000000000000002.log.\(try exitedProcess()).17", isDirectory: false)
        try FileManager.default.moveItem(at: running, to: unplaced)
        // Never a log without an info file: with the document's info files gone (a new
        // document's, whose rename the power loss undid), the log stays where it is.
        let documentFolder = container.documentDirectory(doc)
        let infos = try FileManager.default.contentsOfDirectory(atPath: documentFolder.path).filter { $0.hasPrefix("info-") }
        #expect(!infos.isEmpty)
        let away = harness.folder.appending("infos-away")
        try FileManager.default.createDirectory(at: away, withIntermediateDirectories: true)
        for name in infos { try FileManager.default.moveItem(at: documentFolder.appendingPathComponent(name), to: away.appendingPathComponent(name)) }
        #expect(try a.importPending(doc).imported.isEmpty)
        #expect(FileManager.default.fileExists(atPath: unplaced.path))
        for name in infos { try FileManager.default.moveItem(at: away.appendingPathComponent(name), to: documentFolder.appendingPathComponent(name)) }
        #expect(try a.importPending(doc).imported.count == 1)
        #expect(try a.text(doc) == "one two")
        #expect(!FileManager.default.fileExists(atPath: unplaced.path))
        #expect(try b.importPending(doc).imported.count == 1)
        #expect(try b.text(doc) == "one two")
        try a.editWritingAhead(doc, text: "one two three")
        #expect(container.logSequences(doc, device: a.identity.id) == [1, 2, 3])
        try b.importPending(doc)
        #expect(try b.text(doc) == "one two three")
    }

    /// A killed process's save, left under its temporary name since the machine started, had
    /// not returned: it is removed, not put in its slot (its outbox ships it if it committed).
    /// Of two logs left for one slot before a power loss, the later goes in: the earlier is a
    /// killed process's save that never committed, whose number the next save took.
    @Test func aKilledProcesssSaveIsRemovedAndOfTwoForOneSlotTheLaterGoesIn() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let volume = PowerLossVolume()
        var a = device(1, "A", harness, volume: volume)
        try a.create(doc, name: "Power", text: "one", now: harness.clock.now())
        let container = Container(root: harness.container)
        let slot = container.logURL(doc, device: a.identity.id, sequence: 2)
        let folder = slot.deletingLastPathComponent()
        let dead = try exitedProcess()
        // The killed process's save: written, never committed.
        try a.editWritingAhead(doc, text: "one (killed)")
        let killed = folder.appendingPathComponent(".tmp-0000000000000002.log.\(dead).1", isDirectory: false)
        try FileManager.default.moveItem(at: slot, to: killed)
        volume.powerLoss()
        harness.clock.advance(1)
        // The save that took its number, its rename undone by a power loss.
        try a.editWritingAhead(doc, text: "one two")
        let acknowledged = folder.appendingPathComponent(".tmp-0000000000000002.log.\(dead).2", isDirectory: false)
        try FileManager.default.moveItem(at: slot, to: acknowledged)
        volume.powerLoss()
        harness.clock.advance(1)
        let restarted = harness.clock.now()

        a.replicator.bootedAt = { .distantPast }
        #expect(try a.importPending(doc).imported.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: killed.path) && !FileManager.default.fileExists(atPath: acknowledged.path), "made since the machine started")
        #expect(container.logSequences(doc, device: a.identity.id) == [1])

        // The same two, left before the machine started.
        try a.editWritingAhead(doc, text: "one (killed)")
        try FileManager.default.moveItem(at: slot, to: killed)
        volume.powerLoss()
        harness.clock.advance(1)
        try a.editWritingAhead(doc, text: "one two")
        try FileManager.default.moveItem(at: slot, to: acknowledged)
        volume.powerLoss()
        a.replicator.bootedAt = { restarted.addingTimeInterval(10) }
        #expect(try a.importPending(doc).imported.count == 1)
        #expect(try a.text(doc) == "one two")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["0000000000000001.log", "0000000000000002.log"])
    }

    /// Only a log of this device goes into its slot: a copy of a log already in its slot is
    /// removed, and a file under such a name that is no log of this device (damaged, or
    /// another device's) stays where it is and is never imported. An empty file made ahead for
    /// a save's log whose process is gone is removed.
    @Test func aLogLeftUnderItsTemporaryNameGoesInItsSlotOnlyWhenItIsThisDevicesLog() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let volume = PowerLossVolume()
        var a = device(1, "A", harness, volume: volume)
        let b = device(2, "B", harness, volume: PowerLossVolume())
        try a.create(doc, name: "Power", text: "one", now: harness.clock.now())
        try b.importPending(doc)
        try b.editWritingAhead(doc, text: "one, two")
        harness.clock.advance(1)
        let restarted = harness.clock.now()
        a.replicator.bootedAt = { restarted }
        let container = Container(root: harness.container)
        let folder = container.logURL(doc, device: a.identity.id, sequence: 1).deletingLastPathComponent()
        let dead = try exitedProcess()
        let copy = folder.appendingPathComponent(".tmp-0000000000000001.log.\(dead).2", isDirectory: false)
        try FileManager.default.copyItem(at: container.logURL(doc, device: a.identity.id, sequence: 1), to: copy)
        let damaged = folder.appendingPathComponent(".tmp-0000000000000002.log.\(dead).2", isDirectory: false)
        try Data("not a log".utf8).write(to: damaged)
        let othersLog = folder.appendingPathComponent(".tmp-0000000000000003.log.\(dead).2", isDirectory: false)
        try FileManager.default.copyItem(at: container.logURL(doc, device: b.identity.id, sequence: 1), to: othersLog)
        // Files made ahead for a save's log: one a killed process left, one of a running process.
        let orphan = folder.appendingPathComponent(".tmp-standby.\(dead).7", isDirectory: false)
        let running = folder.appendingPathComponent(".tmp-standby.\(ProcessInfo.processInfo.processIdentifier).7", isDirectory: false)
        try Data().write(to: orphan)
        try Data().write(to: running)

        #expect(try a.importPending(doc).imported.count == 1, "B's save only")
        #expect(!FileManager.default.fileExists(atPath: copy.path))
        #expect(FileManager.default.fileExists(atPath: damaged.path))
        #expect(FileManager.default.fileExists(atPath: othersLog.path))
        #expect(!FileManager.default.fileExists(atPath: orphan.path), "its process is gone")
        #expect(FileManager.default.fileExists(atPath: running.path))
        #expect(container.logSequences(doc, device: a.identity.id) == [1])
        #expect(try a.text(doc) == "one, two")
    }

    /// A save whose log reached the container is not synced in the store (the log is its one
    /// durable step). A power loss undoes the commit; with the container there, the device's
    /// next save imports its own log first, and nothing is lost or applied twice.
    @Test func aSaveUndoneByAPowerLossComesBackFromItsLog() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let volumeA = PowerLossVolume(), volumeB = PowerLossVolume()
        let a = device(1, "A", harness, volume: volumeA), b = device(2, "B", harness, volume: volumeB)
        try a.create(doc, name: "Power", text: "one", now: harness.clock.now())
        try a.edit(doc, text: "one two", durable: false)
        volumeA.powerLoss()
        #expect(try a.text(doc) == "one", "the save's commit was not synced")
        #expect(try a.importPending(doc).imported.count == 1, "its log brings it back")
        try a.edit(doc, text: "one two three", durable: false)
        #expect(try a.text(doc) == "one two three")
        try b.importPending(doc)
        #expect(try b.text(doc) == "one two three")
        #expect(Container(root: harness.container).logSequences(doc, device: a.identity.id) == [1, 2, 3])
    }

    /// The same power loss, but the container is away when the device starts again: its next
    /// save takes the lost save's number. When the container is back, the lost save (its log is
    /// there) is taken back and the new one is numbered after it: both survive, on every device.
    @Test(arguments: [" three", " 3", " and then three more words", "\nthree"])
    func aSaveMadeWithoutTheContainerAfterAPowerLossIsNumberedAfterTheLostOne(typedLater: String) throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        var (a, b, volumeA, _) = try twoDevices(harness)
        try a.edit(doc, text: "one two", durable: false)
        volumeA.powerLoss()
        harness.clock.advance(1)
        let restarted = harness.clock.now()
        a.replicator.bootedAt = { restarted }
        // The container is away: the save is synced and waits in the outbox, numbered 2 again.
        try a.edit(doc, text: "one" + typedLater, ship: false)
        // (Log 1 is back in the outbox too: clearing it was not synced; it ships as the same bytes.)
        #expect(try a.store(doc).read().sync.outbox.keys.max() == 2)
        let shipped = try a.flush(doc)
        #expect(!shipped.contains { $0.lastPathComponent == "0000000000000002.log" }, "the lost save's log stays as it was")
        #expect(shipped.contains { $0.lastPathComponent == "0000000000000003.log" })
        #expect(try a.store(doc).read().sync.outbox.isEmpty)
        let applied = try #require(try a.store(doc).read().sync.applied[a.identity.id])
        #expect(applied >= 3)
        // Both saves are kept, in the order they were typed: the one taken back first.
        let text = try a.text(doc) ?? ""
        #expect(text == "one two" + typedLater)
        #expect(try b.importPending(doc).imported.count == Int(applied) - 1)
        #expect(try b.text(doc) == text)
        // The renumbering was synced: another power loss keeps it.
        volumeA.powerLoss()
        #expect(try a.text(doc) == text)
    }

    /// A log of this device made since the machine started was not undone by a power loss: it
    /// is another copy of the root saving. The waiting save stays in the outbox with the error
    /// that says so (`multidoc device new-identity` gives the copy its own identity).
    @Test func aCollidingLogMadeSinceTheMachineStartedIsNotTakenBack() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let volumeA = PowerLossVolume()
        var a = device(1, "A", harness, volume: volumeA)
        try a.create(doc, name: "Power", text: "one", now: harness.clock.now())
        a.replicator.bootedAt = { .distantPast }
        try a.edit(doc, text: "one two", durable: false)
        volumeA.powerLoss()
        try a.edit(doc, text: "one three", ship: false)
        #expect(throws: SyncError.self) { try a.flush(doc) }
        #expect(try a.store(doc).read().sync.outbox.keys.max() == 2, "the save waits in the outbox")
        #expect(try a.text(doc) == "one three")
    }

    /// The logs B's lost import needed are pruned meanwhile (B's registry entry said it had
    /// them): B builds from the baseline that let them go.
    @Test func logsPrunedAfterALostImportComeBackFromTheBaseline() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let volumeA = PowerLossVolume(), volumeB = PowerLossVolume()
        let a = device(1, "A", harness, volume: volumeA, baselineThreshold: 2)
        let b = device(2, "B", harness, volume: volumeB)
        try a.create(doc, name: "Power", text: "start", now: harness.clock.now())
        try b.importPending(doc)
        try b.store(doc).sync()
        for word in ["a", "b", "c", "d"] { try a.save(doc) { graph in [.update(ObjectID("text-\(doc)"), attributes: ["text": .string((graph.textEntry?.text ?? "") + " " + word)])] } }
        try b.importPending(doc)
        // Both say what they applied; A compacts and prunes what everyone has.
        let applied = { (device: SyncDevice) throws -> [DocumentID: [DeviceID: UInt64]] in
            let store = try device.store(doc)
            return [doc: try store.read().sync.applied]
        }
        try a.replicator.register(applied: try applied(a))
        try b.replicator.register(applied: try applied(b))
        let store = try a.store(doc)
        let report = try a.replicator.compact(doc, store: store, registry: RegistrySnapshot(a.replicator.container))
        #expect(report.baseline != nil)
        #expect(report.prunedLogs > 0)

        volumeB.powerLoss()
        #expect(try b.text(doc) == "start")
        let again = try b.importPending(doc)
        #expect(again.baselinesMerged == 1)
        #expect(try b.text(doc) == "start a b c d")
    }
}
