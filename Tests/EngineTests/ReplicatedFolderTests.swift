import Engine
import Foundation
import Model
import Settings
import Storage
import Sync
import Testing
import TestSupport

/// Each device with its own container folder, and a "replication engine" that copies files
/// between them the way Syncthing does: one at a time, in any order, each first under a
/// temporary name, sometimes with conflict copies. (The real Syncthing runs in SyncthingTests.)
@Suite struct ReplicatedFolderTests {
    /// Every finished file under `folder`, relative, sorted (dot names skipped like Syncthing's own).
    static func files(in folder: URL) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        var result: [String] = []
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let path = folder.appendingPathComponent(relative).path
            guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }),
                  FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            result.append(relative)
        }
        return result.sorted()
    }

    /// Brings one file from `source` to `destination` as Syncthing does: a partial
    /// `.syncthing.<name>.tmp` first (`beforeRename` runs while it is there), then the whole
    /// file, renamed into place.
    static func deliver(_ relative: String, from source: URL, to destination: URL, beforeRename: () async -> Void) async throws {
        let data = try Data(contentsOf: source.appendingPathComponent(relative))
        let target = destination.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = target.deletingLastPathComponent().appendingPathComponent(".syncthing.\(target.lastPathComponent).tmp")
        try data.prefix(data.count / 2).write(to: temporary)
        await beforeRename()
        try data.write(to: temporary)
        try FileManager.default.moveItem(at: temporary, to: target)  // rename(2), as Syncthing does
    }

    /// Copies what either folder lacks into the other (no deletions), in sorted order.
    static func mirror(_ left: URL, _ right: URL) throws {
        for (from, to) in [(left, right), (right, left)] {
            for relative in files(in: from) where !FileManager.default.fileExists(atPath: to.appendingPathComponent(relative).path) {
                let target = to.appendingPathComponent(relative)
                try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: from.appendingPathComponent(relative), to: target)
            }
        }
    }

    @Test(arguments: [EngineHarness.Backend.memory, .sqlite])
    func twoReplicasSeededApartAgreeOnOneIdentityAndLoseNothing(backend: EngineHarness.Backend) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let left = harness.folder.appending("replica-A"), right = harness.folder.appending("replica-B")
        for folder in [left, right] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let asked = Heard()
        let a = try harness.device("A", backend: backend, container: left) { asked.append($0); return .adoptNew }
        let b = try harness.device("B", backend: backend, container: right) { asked.append($0); return .adoptNew }
        // Each seeds its empty replica and creates a document before seeing the other's files.
        let fromA = try await a.create(), fromB = try await b.create()
        await a.sync()
        await b.sync()
        let identities = [try Container(root: left).identity(), try Container(root: right).identity()]
        #expect(identities[0]?.containerID != identities[1]?.containerID)

        try Self.mirror(left, right)
        await a.sync()
        await b.sync()
        let onLeft = try Container(root: left).identity(), onRight = try Container(root: right).identity()
        #expect(onLeft == onRight)
        #expect(onLeft?.containerID == identities.compactMap { $0?.containerID }.min { $0.uuidString < $1.uuidString })
        #expect(asked.paths.isEmpty, "a seeding race is settled quietly, not asked about: \(asked.paths)")
        #expect(Self.files(in: left).filter(ContainerFiles.isConflictCopy).isEmpty)

        // Both documents on both devices, and edits still travel both ways.
        for library in [a, b] {
            #expect(Set(await library.list().map(\.id)) == [fromA.id, fromB.id])
        }
        try await b.appendText(fromA.id, " +B")
        try await a.appendText(fromB.id, " +A")
        try Self.mirror(left, right)
        await a.sync()
        await b.sync()
        #expect(try await a.detail(fromA.id).text.hasSuffix(" +B"))
        #expect(try await b.detail(fromB.id).text.hasSuffix(" +A"))
    }

    @Test(arguments: 0..<4)
    func filesArrivingOneByOneInAnyOrderNeverShowAPartialOrOlderState(seed: UInt64) async throws {
        let harness = try EngineHarness()
        defer { harness.folder.remove() }
        let left = harness.folder.appending("replica-A"), right = harness.folder.appending("replica-B")
        for folder in [left, right] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let asked = Heard()
        let a = try harness.device("A", container: left) { asked.append($0); return .adoptNew }
        let b = try harness.device("B", container: right) { asked.append($0); return .adoptNew }
        await b.sync()  // B has seeded its own replica before anything arrives

        let document = try await a.create()
        var texts = [try await a.detail(document.id).text]
        for index in 1...12 {
            try await a.setText(document.id, "edit \(index)")
            texts.append("edit \(index)")
        }
        var generator = SeededGenerator(seed: seed)
        var order = Self.files(in: left)
        order.shuffle(using: &generator)

        var lastSeen = -1
        func check() async throws {
            let report = await b.sync()
            #expect(report.quarantined.isEmpty, "\(report.quarantined)")
            #expect(report.problems.isEmpty, "\(report.problems)")
            guard let summary = await b.list().first(where: { $0.id == document.id }), summary.viewable else { return }
            let text = try await b.detail(document.id).text
            let index = try #require(texts.firstIndex(of: text), "B shows a text A never saved: \(text)")
            #expect(index >= lastSeen, "B went back from \(texts[lastSeen]) to \(text)")
            lastSeen = index
        }
        for relative in order {
            try await Self.deliver(relative, from: left, to: right) { try? await check() }
            try await check()
        }
        #expect(lastSeen == texts.count - 1)
        #expect(asked.paths.isEmpty)

        // A conflict copy (never made by multidoc's own writes) is reported, not imported.
        let log = Container(root: right).logURL(document.id, device: a.identity.id, sequence: 13)
        var copy = try Data(contentsOf: log)
        copy = Data(String(decoding: copy, as: UTF8.self).replacingOccurrences(of: "edit 12", with: "conflicting").utf8)
        try copy.write(to: log.deletingLastPathComponent().appendingPathComponent("0000000000000013.sync-conflict-20240101-120000-ABCDEF7.log"))
        let report = await b.sync()
        #expect(report.quarantined.contains { $0.url.lastPathComponent.contains("sync-conflict") })
        #expect(try await b.detail(document.id).text == "edit 12")
    }
}


final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ path: String) { lock.withLock { list.append(path) } }
    var paths: [String] { lock.withLock { list } }
}
