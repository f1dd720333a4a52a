import Foundation
import Model
import Storage
import Testing

/// What a document's text history keeps (`multidoc history`, `show --at`, `revert`): the last
/// 1,000 saves, and any save of the last 30 days.
@Suite struct TextHistoryTests {
    static let device = DeviceID(UUID(uuid: (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)))

    static func save(_ id: UInt64, at time: Date) -> TextSave {
        TextSave(
            id: id, object: ObjectID("entry"), attribute: "text", device: device, deviceName: "A", sequence: id, committedAt: time,
            added: 1, removed: 0, undo: [TextUndo(at: 0, length: 1, text: "")])
    }

    @Test func savesOfTheLastThirtyDaysAreAllKeptPastTheThousand() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let history = (1...1_200).map { Self.save(UInt64($0), at: now.addingTimeInterval(Double($0))) }
        #expect(TextSave.kept(history) == history)
    }

    @Test func onlyOlderSavesBeyondTheLastThousandGo() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let old = now.addingTimeInterval(-31 * 86_400)
        // Saves 1, 3 and 1,001 are older than 30 days; only 1 and 3 are beyond the last 1,000.
        let history = (1...1_005).map { Self.save(UInt64($0), at: [1, 3, 1_001].contains($0) ? old : now) }
        let kept = TextSave.kept(history)
        #expect(kept.map(\.id) == history.map(\.id).filter { $0 != 1 && $0 != 3 })
        #expect(TextSave.kept(Array(history.prefix(1_000))).count == 1_000)
    }
}
