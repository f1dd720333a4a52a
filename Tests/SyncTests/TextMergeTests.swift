import Foundation
import Model
import Storage
import Sync
import Testing
import TestSupport

/// Text merges in a format 2 container: concurrent edits of one text keep both sides, in the
/// same order on every device, whatever order the logs arrive in.
@Suite struct TextMergeTests {
    let doc = DocumentID(Fixed.uuid(0xD0C))
    let format2 = LogFormat(version: 2, container: Fixed.uuid(7))

    func textID(_ document: DocumentID) -> ObjectID { ObjectID("text-\(document)") }

    /// Appends `suffix` to the text as it is inside the save's transaction (an `edit --append`).
    func append(_ device: SyncDevice, _ suffix: String) throws {
        try device.save(doc) { graph in [.update(textID(doc), attributes: ["text": .string((graph.textEntry?.text ?? "") + suffix)])] }
    }

    @Test(arguments: [SyncBackend.sqlite, .json])
    func offlineEditsOfDifferentPartsAreBothKept(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2), b = harness.device(2, "B", format: format2)
        try a.create(doc, name: "Fox", text: "The quick brown fox jumps over the lazy dog.", now: harness.clock.now())
        try b.importPending(doc)
        // Neither sees the other's save before making its own.
        try a.edit(doc, text: "The quick red fox jumps over the lazy dog.")
        try b.edit(doc, text: "The quick brown fox leaps over the lazy cat.")
        try a.importPending(doc)
        try b.importPending(doc)
        #expect(try a.text(doc) == "The quick red fox leaps over the lazy cat.")
        #expect(try b.text(doc) == "The quick red fox leaps over the lazy cat.")
        // The logs are format 2: binary, text operations, no whole text.
        let log = try Container(root: harness.container).readLog(doc, device: a.identity.id, sequence: 2)
        #expect(log.format == 2)
        #expect(log.changes.contains { $0.texts?["text"] != nil && $0.attributes?["text"] == nil })
    }

    /// A device told the container is of format 1 (a damaged format file, or a device file of
    /// an older build) saves a text that is already a sequence: the save is written as text
    /// operations in a format 2 log, so its text and its peers' hold it. As a format 1 plain
    /// value the merge rule ignored it, on every device, and the save reported success.
    @Test(arguments: [SyncBackend.sqlite, .json])
    func aTextThatIsASequenceIsSavedAsOperationsWhateverTheFormat(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2)
        var b = harness.device(2, "B", format: format2)
        try a.create(doc, name: "Notes", text: "one two", now: harness.clock.now())
        try append(a, " three")
        try b.importPending(doc)
        b.replicator.format = LogFormat(version: 1, container: format2.container)
        try append(b, " four")
        #expect(try b.text(doc) == "one two three four")
        try a.importPending(doc)
        #expect(try a.text(doc) == "one two three four")
        let log = try Container(root: harness.container).readLog(doc, device: b.identity.id, sequence: 1)
        #expect(log.format == 2)
        #expect(log.changes.contains { $0.texts?["text"] != nil && $0.attributes?["text"] == nil })
    }

    /// A save whose values the merge rule would not leave in the store (here an insert of an
    /// object deleted before) is refused, and nothing of it is committed or shipped.
    @Test(arguments: [SyncBackend.sqlite, .json])
    func aSaveTheStoreWouldNotShowIsRefusedAndCommitsNothing(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2)
        try a.create(doc, name: "Notes", text: "one", now: harness.clock.now())
        let other = ObjectID("other")
        try a.save(doc, [.insert(other, entity: Entity.textEntry, attributes: ["text": .string("x")])])
        try a.save(doc, [.delete(other)])
        let error = try #require(throws: SyncError.self) {
            try a.save(doc, [.insert(other, entity: Entity.textEntry, attributes: ["text": .string("back")])])
        }
        #expect(error.kind == .saveRefused, "\(error)")
        #expect(error.detail.contains("was deleted"), "\(error)")
        let store = try a.store(doc)
        defer { store.close() }
        let contents = try store.read()
        #expect(contents.sync.applied[a.identity.id] == 3)
        #expect(contents.sync.outbox.isEmpty)
        #expect(contents.graph.objects[other] == nil)
    }

    /// A save whose log a reader would refuse (here an attribute name past the longest name a
    /// reader takes) is refused before it commits: the writer runs the readers' decoder on
    /// every log it makes, so writer and readers share one set of limits.
    @Test(arguments: [SyncBackend.sqlite, .json])
    func aSaveWhoseLogNoReaderWouldAcceptIsRefusedAndCommitsNothing(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2)
        try a.create(doc, name: "Notes", text: "one", now: harness.clock.now())
        let name = String(repeating: "n", count: 5000)
        let error = try #require(throws: SyncError.self) {
            try a.save(doc, [.update(textID(doc), attributes: [name: .string("v")])])
        }
        #expect(error.kind == .saveRefused && error.detail.contains("no device would read its log"), "\(error)")
        let store = try a.store(doc)
        defer { store.close() }
        let contents = try store.read()
        #expect(contents.sync.applied[a.identity.id] == 1)
        #expect(contents.graph.objects[textID(doc)]?.attributes[name] == nil)
        // What it saves next is read by its peers.
        try append(a, " two")
        let b = harness.device(2, "B", format: format2)
        let report = try b.importPending(doc)
        #expect(report.quarantined.isEmpty, "\(report.quarantined)")
        #expect(try b.text(doc) == "one two")
    }

    @Test func concurrentInsertsAtOnePlaceAreKeptInTheSameOrderEverywhere() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let devices = (1...3).map { harness.device($0, "D\($0)", format: format2) }
        try devices[0].create(doc, name: "Same place", text: "start ", now: harness.clock.now())
        for device in devices.dropFirst() { try device.importPending(doc) }
        let words = ["alpha ", "bravo ", "charlie "]
        // Each appends at the end without having seen the others.
        for (index, device) in devices.enumerated() { try device.edit(doc, text: "start " + words[index]) }
        for device in devices { try device.importPending(doc) }
        let texts = try devices.map { try #require(try $0.text(doc)) }
        #expect(Set(texts).count == 1, "\(texts)")
        let text = try #require(texts.first)
        for word in words { #expect(text.components(separatedBy: word).count == 2, "\(word) once in \(text)") }
        #expect(text.hasPrefix("start "))
    }

    @Test func eightDevicesAppendingAtOnceLoseNoAppend() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let devices = (1...8).map { harness.device($0, "D\($0)", format: format2) }
        try devices[0].create(doc, name: "Pings", text: "", now: harness.clock.now())
        for device in devices.dropFirst() { try device.importPending(doc) }
        // Rounds in which every device appends before seeing anyone else's append of the round.
        for round in 0..<5 {
            for (index, device) in devices.enumerated() { try append(device, " <\(round).\(index)>") }
            for device in devices { try device.importPending(doc) }
        }
        let texts = try devices.map { try #require(try $0.text(doc)) }
        #expect(Set(texts).count == 1, "\(texts)")
        let text = try #require(texts.first)
        for round in 0..<5 {
            for index in 0..<8 { #expect(text.components(separatedBy: "<\(round).\(index)>").count == 2, "<\(round).\(index)> in \(text)") }
        }
    }

    /// A device behind a missing log appends to the text it has; its save adds, and erases
    /// nothing it has not seen (with last-writer-wins it replaced the newer text everywhere).
    @Test func aDeviceBehindAGapAppendsWithoutErasingWhatItHasNotSeen() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2), c = harness.device(3, "C", format: format2)
        try a.create(doc, name: "Gap", text: "one", now: harness.clock.now())
        try c.importPending(doc)
        try a.edit(doc, text: "one two")
        try a.edit(doc, text: "one two three")
        // Log 2 of A is on its way: C has neither 2 nor 3.
        let container = Container(root: harness.container)
        let second = container.logURL(doc, device: a.identity.id, sequence: 2)
        let away = harness.folder.appending("log-2-away")
        try FileManager.default.moveItem(at: second, to: away)
        let report = try c.importPending(doc)
        #expect(report.waitingForGap)
        #expect(try c.text(doc) == "one")
        try append(c, " and C's")
        try FileManager.default.moveItem(at: away, to: second)
        try a.importPending(doc)
        try c.importPending(doc)
        #expect(try a.text(doc) == "one two three and C's")
        #expect(try c.text(doc) == "one two three and C's")
    }

    /// Logs arrive in any order: one made on text that has not arrived waits for it (its
    /// dependencies), so a device never shows an edit without what it was made on.
    @Test func aLogWaitsForTheLogsItWasMadeOn() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2), b = harness.device(2, "B", format: format2)
        let c = harness.device(3, "C", format: format2)
        try a.create(doc, name: "Chain", text: "Hello", now: harness.clock.now())
        try b.importPending(doc)
        try c.importPending(doc)
        try a.edit(doc, text: "Hello world")
        try b.importPending(doc)
        try b.edit(doc, text: "Hello brave world")
        // C gets B's log before A's: it must wait.
        let container = Container(root: harness.container)
        let aLog = container.logURL(doc, device: a.identity.id, sequence: 2)
        let away = harness.folder.appending("a-2-away")
        try FileManager.default.moveItem(at: aLog, to: away)
        let waiting = try c.importPending(doc)
        #expect(waiting.waitingForOthers == 1)
        #expect(!waiting.isComplete)
        #expect(try c.text(doc) == "Hello")
        try FileManager.default.moveItem(at: away, to: aLog)
        try c.importPending(doc)
        #expect(try c.text(doc) == "Hello brave world")
    }

    /// A format 1 container keeps format 1: JSON logs with whole texts, last-writer-wins.
    @Test func aFormat1ContainerKeepsWholeTextLogs() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A"), b = harness.device(2, "B")
        try a.create(doc, name: "Old", text: "old", now: harness.clock.now())
        try b.importPending(doc)
        try b.edit(doc, text: "new")
        try a.importPending(doc)
        #expect(try a.text(doc) == "new")
        let data = try Data(contentsOf: Container(root: harness.container).logURL(doc, device: b.identity.id, sequence: 1))
        #expect(String(decoding: data.prefix(1), as: UTF8.self) == "{")
        let log = try TransactionLog.decode(data, document: doc, device: b.identity.id, sequence: 1)
        #expect(log.changes.allSatisfy { $0.texts == nil })
    }

    /// A format 2 log survives the trip through bytes, and `container dump` shows it.
    @Test func aBinaryLogRoundTripsAndDumpsAsJSON() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2)
        try a.create(doc, name: "Dump", text: "héllo 🙂", now: harness.clock.now())
        let container = Container(root: harness.container)
        let url = container.logURL(doc, device: a.identity.id, sequence: 1)
        let data = try Data(contentsOf: url)
        let log = try TransactionLog.decode(data, document: doc, device: a.identity.id, sequence: 1)
        #expect(try log.encoded(container: Fixed.uuid(7)) == data)
        let dump = try #require(try JSONSerialization.jsonObject(with: Container.dump(fileAt: url)) as? [String: Any])
        #expect(dump["format"] as? Int == 2)
        #expect(dump["kind"] as? String == "log")
        let text = String(decoding: try Container.dump(fileAt: url), as: UTF8.self)
        #expect(text.contains("héllo 🙂"), "\(text)")
        #expect(text.contains("\"insert\""))
        // Any other file dumps too; a file that is neither format says so.
        let garbage = harness.folder.appending("garbage")
        try Data("not a container file".utf8).write(to: garbage)
        #expect(throws: SyncError.self) { try Container.dump(fileAt: garbage) }
    }

    /// Where last-writer-wins still decides (any attribute but a text), both devices are told
    /// which value was kept and which was overwritten, and by whom; texts merge and are never
    /// reported.
    @Test func concurrentWritesOfAnAttributeAreReportedOnBothDevices() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2), b = harness.device(2, "B", format: format2)
        try a.create(doc, name: "Titles", text: "text", now: harness.clock.now())
        try b.importPending(doc)
        for (device, title) in [(a, "from A"), (b, "from B")] {
            try device.save(doc, [.update(textID(doc), attributes: ["title": .string(title), "text": .string("text " + title)])])
        }
        let onA = try a.importPending(doc).summary.conflicts
        let onB = try b.importPending(doc).summary.conflicts
        #expect(onA.count == 1, "\(onA)")
        #expect(onB.count == 1, "\(onB)")
        #expect(onA.first?.attribute == "title")
        // The same decision on both: B's save was stamped later.
        for conflict in onA + onB {
            #expect(conflict.kept == .string("from B") && conflict.keptBy == b.identity.id, "\(conflict)")
            #expect(conflict.lost == .string("from A") && conflict.lostBy == a.identity.id, "\(conflict)")
        }
        #expect(try a.text(doc) == b.text(doc))
        // A later write that saw the other is no conflict.
        try a.edit(doc, text: "text again")
        try a.save(doc, [.update(textID(doc), attributes: ["title": .string("settled")])])
        #expect(try b.importPending(doc).summary.conflicts.isEmpty)
    }

    /// Every save of a text is in the store's history with what undoes it, so each earlier
    /// text can be rebuilt from the current one (both backends keep it).
    @Test(arguments: [SyncBackend.sqlite, .json])
    func theHistoryRebuildsEveryEarlierText(backend: SyncBackend) throws {
        let harness = try SyncHarness(backend)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2), b = harness.device(2, "B", format: format2)
        let texts = ["draft", "a first draft", "a first draft, with more", "a second draft, with more 🙂", "short"]
        try a.create(doc, name: "History", text: texts[0], now: harness.clock.now())
        for text in texts.dropFirst() { try a.edit(doc, text: text) }
        try b.importPending(doc)
        for device in [a, b] {
            let store = try device.store(doc)
            let contents = try store.read()
            store.close()
            let history = contents.sync.history
            #expect(history.count == texts.count, "\(history.map(\.id))")
            #expect(history.map(\.sequence) == Array(1...UInt64(texts.count)))
            var text = try #require(contents.graph.textEntry?.text)
            for (index, save) in history.enumerated().reversed() {
                #expect(text == texts[index])
                text = try #require(save.undone(text))
            }
            #expect(text == "")
        }
    }

    /// A device that applied part of a peer's logs before the peer pruned them (it had not
    /// registered, so the peer did not wait for it) goes on from the baseline instead of
    /// waiting forever for logs that are gone.
    @Test func aDeviceBehindPrunedLogsGoesOnFromTheBaseline() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", baselineThreshold: 1, format: format2), c = harness.device(3, "C", format: format2)
        try a.create(doc, name: "Pruned", text: "one", now: harness.clock.now())
        try c.importPending(doc)
        try a.edit(doc, text: "one two")
        try a.edit(doc, text: "one two three")
        // A writes a baseline and prunes with only itself registered.
        try a.replicator.register(applied: [doc: [a.identity.id: 3]])
        let store = try a.store(doc)
        let compaction = try a.replicator.compact(doc, store: store, registry: RegistrySnapshot(Container(root: harness.container)))
        store.close()
        #expect(compaction.prunedLogs == 3)
        #expect(Container(root: harness.container).logSequences(doc, device: a.identity.id).isEmpty)
        let report = try c.importPending(doc)
        #expect(report.baselinesMerged == 1)
        #expect(try c.text(doc) == "one two three")
    }

    /// A log that claims to be made after a log that is not there (lost, or a lie) waits, is
    /// named by the import and by verify, and stops only its own device's later logs.
    @Test func aLogMadeAfterAMissingLogWaitsAndIsNamed() throws {
        let harness = try SyncHarness(.memory)
        defer { harness.folder.remove() }
        let a = harness.device(1, "A", format: format2), b = harness.device(2, "B", format: format2)
        let c = harness.device(3, "C", format: format2)
        try a.create(doc, name: "Waits", text: "base", now: harness.clock.now())
        try b.importPending(doc)
        try c.importPending(doc)
        // B's next log claims it was made after log 99 of a device that never wrote one.
        let ghost = DeviceID(Fixed.uuid(0x6057))
        var lie = try Container(root: harness.container).readLog(doc, device: a.identity.id, sequence: 1)
        lie = TransactionLog(format: 2, document: doc, device: b.identity.id, sequence: 1, stamp: Stamp(wall: lie.stamp.wall + 1, counter: 0, device: b.identity.id),
                             committedAt: lie.committedAt, deviceName: "B", changes: [])
        lie.dependencies = [ghost: 99]
        _ = try Container(root: harness.container).writeLog(try lie.encoded(container: Fixed.uuid(7)), document: doc, device: b.identity.id, sequence: 1)
        try a.edit(doc, text: "base and more")
        let report = try c.importPending(doc)
        #expect(report.waitingForOthers == 1)
        #expect(report.dependencyWaits.map(\.waitsFor) == [ghost])
        #expect(try c.text(doc) == "base and more", "A's logs are not held up")
        let verification = Container(root: harness.container).verify()
        #expect(verification.waiting.contains { $0.reason.contains("log 99 of device \(ghost)") }, "\(verification.waiting)")
    }
}
