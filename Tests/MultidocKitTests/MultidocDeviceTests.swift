import Foundation
import Model
import MultidocKit
import Testing
import TestSupport

/// Two devices on one container, in process, through the public API only (as an app sees it).
@Suite struct MultidocDeviceTests {
    let folder: TemporaryDirectory
    var container: URL { folder.appending("container") }

    init() throws {
        folder = try TemporaryDirectory("kit")
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
    }

    func device(_ name: String) async throws -> MultidocDevice {
        try await MultidocDevice.open(root: folder.appending(name), container: container, settings: ["DeviceName": name])
    }

    /// Waits for the first change `matching` says yes to, up to a bound (never a checked figure).
    func next(_ changes: AsyncStream<DocumentChange>, _ matching: @escaping @Sendable (DocumentChange) -> Bool) async -> DocumentChange? {
        await withTaskGroup(of: DocumentChange?.self) { group in
            group.addTask {
                for await change in changes where matching(change) { return change }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(20))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    @Test func editsByPositionTravelAndChangesSayWhatPeersDid() async throws {
        defer { folder.remove() }
        let a = try await device("A"), b = try await device("B")
        let changes = await b.changes()
        await b.startSyncing()

        let notes = try await a.create(named: "Notes")
        let discovered = await next(changes) { if case .discovered(let document) = $0 { document.id == notes.id } else { false } }
        #expect(discovered != nil)

        try await a.replace(0..<(try await a.text(notes.id)).unicodeScalars.count, with: "hello", in: notes.id)
        try await a.insert(" world", at: 5, in: notes.id)
        try await a.delete(0..<1, in: notes.id)
        _ = await b.syncNow()
        #expect(try await b.text(notes.id) == "ello world")
        #expect(try await b.history(notes.id).last?.device == "A")

        try await a.rename(notes.id, to: "Letters")
        let renamed = await next(changes) { if case .renamed(notes.id, _, "Letters") = $0 { true } else { false } }
        #expect(renamed == .renamed(notes.id, from: "Notes", to: "Letters"))
        #expect(try await b.document("Letters").id == notes.id)

        try await a.delete(notes.id)
        let deleted = await next(changes) { if case .deleted(notes.id, _) = $0 { true } else { false } }
        #expect(deleted != nil)
        let restored = try await a.restore("Letters")
        #expect(restored.id != notes.id)

        await a.close()
        await b.close()
    }

    /// A document says where it is in its life: made here, or synced to a peer, it is downloaded.
    @Test func aDocumentSaysItsLife() async throws {
        defer { folder.remove() }
        let a = try await device("A"), b = try await device("B")
        let notes = try await a.create(named: "Notes")
        #expect(notes.life == .downloaded)
        _ = await b.syncNow()
        let there = try #require(await b.documents().first { $0.id == notes.id })
        #expect(there.life == .downloaded && there.downloadPercent == 100)
        await a.close()
        await b.close()
    }

    @Test func mistakesAreTypedErrorsWithTheirKind() async throws {
        defer { folder.remove() }
        let a = try await device("A")
        let notes = try await a.create(named: "Notes")
        await #expect(throws: MultidocError.self) { try await a.document("Nothing") }
        do {
            try await a.insert("x", at: 10_000, in: notes.id)
            Issue.record("an insert past the end was taken")
        } catch {
            #expect(error.kind == .invalid)
            #expect(error.underlying != nil)
        }
        do {
            _ = try await a.text(UUID())
            Issue.record("a text of no document was read")
        } catch {
            #expect(error.kind == .notFound)
        }
        do {
            _ = try await MultidocDevice.open(root: folder.appending("C"), container: container, settings: ["FastSave": "maybe"])
            Issue.record("a bad setting was taken")
        } catch {
            #expect(error.kind == .invalid)
        }
        await a.close()
    }
}
