import Foundation
import Model
import Storage
@testable import Sync
import Testing
import TestSupport

/// A real container, mutated step by step the way careless peers, replication engines and
/// people mutate one: files truncated, bytes flipped, garbage written, files deleted, copied
/// under another device's name, dated in the year 2400, replaced by folders or by huge sparse
/// files, numbers pushed to their maximum. Two writers go on saving and two readers import after
/// every step. After every step:
/// - nothing traps (a trap ends the test process);
/// - no device's applied count goes back, and each writer still has every save it made;
/// - the two readers, which read the same files at the same moments, hold the same graph
///   whenever they applied the same logs;
/// - whatever an import refused (a quarantined file, a gap) `container verify` names too.
///
/// Seeded: `MULTIDOC_MUTATION_SEED=<n>` replays one run.
@Suite struct ContainerMutationTests {
    static var seeds: [UInt64] {
        if let seed = ProcessInfo.processInfo.environment["MULTIDOC_MUTATION_SEED"].flatMap(UInt64.init) { return [seed] }
        return Array(1...16)
    }

    @Test(arguments: seeds)
    func aContainerMutatedStepByStepNeverTrapsOrSplitsReaders(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let harness = try SyncHarness()
        defer { harness.folder.remove() }
        let doc = DocumentID(Fixed.uuid(0xD0C))
        let writers = [harness.device(1, "A"), harness.device(2, "B")]
        let readers = [harness.device(3, "C"), harness.device(4, "D")]
        for device in writers + readers { try device.replicator.registerIfMissing() }
        try writers[0].create(doc, name: "Mutated", text: "start", now: harness.clock.now())
        var saves = [0, 0]
        saves[0] = 1
        var lastApplied: [String: [DeviceID: UInt64]] = [:]
        let container = Container(root: harness.container)

        for step in 0..<40 {
            let context = "seed \(seed) step \(step)"
            harness.clock.advance(0.01)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let index = Int.random(in: 0..<2, using: &random)
                let writer = writers[index]
                let store = try writer.store(doc)
                defer { store.close() }
                _ = try? writer.replicator.importPending(doc, into: store)
                try writer.replicator.commit(
                    [.insert(ObjectID("note-\(index)-\(saves[index])"), entity: "Note", attributes: ["n": .int(Int64(step))])],
                    document: doc, to: store, ship: true)
                saves[index] += 1
                // A slot taken by a mutated file keeps the save in the outbox: allowed, and said.
                do { try writer.replicator.flush(doc, in: store) } catch let error as SyncError { _ = error }
            default:
                mutate(container: harness.container, device: writers.map(\.identity.id), using: &random)
            }

            // Writers still have every save they made.
            for (index, writer) in writers.enumerated() {
                let store = try writer.store(doc)
                let contents = try store.read()
                store.close()
                #expect((contents.sync.applied[writer.identity.id] ?? 0) == UInt64(saves[index]), "\(context): \(writer.identity.name)")
            }
            // Readers import the same files at the same moment.
            var reports: [ImportReport] = []
            var graphs: [ObjectGraph] = []
            var applied: [[DeviceID: UInt64]] = []
            for reader in readers {
                let store = try reader.store(doc)
                defer { store.close() }
                do {
                    reports.append(try reader.replicator.importPending(doc, into: store))
                } catch let error as SyncError {
                    _ = error
                    reports.append(ImportReport())
                } catch let error as StoreError {
                    Issue.record("\(context): a reader's store failed: \(error)")
                }
                let contents = try store.read()
                graphs.append(contents.graph)
                applied.append(contents.sync.applied)
            }
            for (name, map) in zip(readers.map(\.identity.name), applied) {
                for (device, count) in lastApplied[name] ?? [:] {
                    #expect((map[device] ?? 0) >= count, "\(context): \(name) went back on \(device)")
                }
                lastApplied[name] = map
            }
            if applied[0] == applied[1] {
                #expect(graphs[0] == graphs[1], "\(context): the readers applied the same logs and disagree")
            }
            let refused = reports.contains { !$0.quarantined.isEmpty || $0.waitingForGap }
            if refused {
                let verification = container.verify()
                #expect(!verification.problems.isEmpty || !verification.waiting.isEmpty,
                        "\(context): an import refused something that verify does not name: \(reports.flatMap(\.quarantined).map(\.description))")
            }
        }
    }

    /// One random mutation of one file of the container.
    private func mutate(container: URL, device: [DeviceID], using random: inout SeededGenerator) {
        let files = (FileManager.default.enumerator(at: container, includingPropertiesForKeys: [.isRegularFileKey])?.allObjects as? [URL] ?? [])
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
            .sorted { $0.path < $1.path }
        guard !files.isEmpty else { return }
        let file = files[Int.random(in: 0..<files.count, using: &random)]
        let bytes = (try? Data(contentsOf: file)) ?? Data()
        let manager = FileManager.default
        switch Int.random(in: 0..<10, using: &random) {
        case 0:
            try? bytes.prefix(Int.random(in: 0...max(0, bytes.count), using: &random)).write(to: file)
        case 1:
            var flipped = bytes
            if !flipped.isEmpty {
                let at = Int.random(in: 0..<flipped.count, using: &random)
                flipped[at] ^= UInt8.random(in: 1...255, using: &random)
            }
            try? flipped.write(to: file)
        case 2:
            try? Data((0..<Int.random(in: 0..<512, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }).write(to: file)
        case 3:
            try? manager.removeItem(at: file)
        case 4:
            // The file again where another writer's next log would go (or beside itself).
            let folder = file.deletingLastPathComponent()
            if folder.deletingLastPathComponent().lastPathComponent == "logs" {
                let other = device[Int.random(in: 0..<device.count, using: &random)]
                let target = folder.deletingLastPathComponent().appendingPathComponent(other.description)
                try? manager.createDirectory(at: target, withIntermediateDirectories: true)
                let next = (Container.sequences(in: target).max() ?? 0) + 1
                try? bytes.write(to: target.appendingPathComponent(String(format: "%016llu.log", next)))
            }
        case 5:
            let far = Date(timeIntervalSince1970: 13_569_465_600)  // 2400-01-01
            try? manager.setAttributes([.modificationDate: far], ofItemAtPath: file.path)
            try? manager.setAttributes([.modificationDate: far], ofItemAtPath: file.deletingLastPathComponent().path)
        case 6:
            try? manager.removeItem(at: file)
            try? manager.createDirectory(at: file, withIntermediateDirectories: false)
        case 7:
            if let handle = try? FileHandle(forWritingTo: file) {
                try? handle.truncate(atOffset: 40 * 1024 * 1024)
                try? handle.close()
            }
        default:
            // Every number pushed to the largest a JSON reader may see.
            let text = String(decoding: bytes, as: UTF8.self)
            let pushed = text.replacingOccurrences(of: #":\s*[0-9]+"#, with: ":18446744073709551615", options: .regularExpression)
            try? Data(pushed.utf8).write(to: file)
        }
    }
}

extension Container {
    /// The log sequences in a device's log folder (test helper).
    static func sequences(in folder: URL) -> [UInt64] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).compactMap(sequence(fromLogName:))
    }
}
