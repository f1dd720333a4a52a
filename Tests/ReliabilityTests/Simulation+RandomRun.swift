import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import TestSupport

// The random run: each step one operation on one device, picked by the seed.
extension Simulation {
    func randomText() -> String {
        let words = ["alpha", "beta", "gamma", "delta", "ε", "日本", "🙂", "x"]
        return (0..<Int.random(in: 1...4, using: &random)).map { _ in words.randomElement(using: &random) ?? "x" }
            .joined(separator: " ") + " #\(figures.steps)"
    }

    /// One random step: a user action (or a sync, a restart) on a random device, then one
    /// transport tick and a little time.
    func randomStep() async throws {
        figures.steps += 1
        clock.advance(Double(Int.random(in: 1...400, using: &random)) / 1000)
        try await randomOperation(on: devices[Int.random(in: 0..<devices.count, using: &random)])
        transport.step()
    }

    private func randomOperation(on device: SimDevice) async throws {
        let records = device.records
        let cloud = records.filter { $0.location == .cloud }
        let local = records.filter { $0.location == .local }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<8 where records.count < 14:
            await create(device, name: random.chance(0.3) ? "Shared \(Int.random(in: 1...3, using: &random))" : nil)
        case 0..<40:
            // Edits favour the first few documents, so several devices write the same one.
            if let record = pick(records, hot: true) {
                await edit(device, record.id, text: randomText())
            } else {
                await create(device)
            }
        case 40..<46:
            // Concurrent edits: several devices save the same document before any sync.
            guard let record = pick(cloud, hot: true) else { return }
            figures.count("concurrentEdits")
            for other in devices where random.chance(0.7) && other.records.contains(where: { $0.id == record.id }) {
                await edit(other, record.id, text: randomText())
            }
        case 46..<70:
            figures.count("sync")
            _ = await sync(device)
        case 70..<75:
            guard let record = pick(records, hot: false) else { return }
            let name = random.chance(0.5) ? "Renamed \(figures.steps)" : "Shared \(Int.random(in: 1...3, using: &random))"
            await rename(device, record.id, to: name)
        case 75..<78:
            guard let record = pick(records, hot: false) else { return }
            await delete(device, record.id)
        case 78..<82:
            guard let record = pick(cloud, hot: false) else { return }
            await moveToLocal(device, record.id, choice: random.chance(0.5) ? .keepCloud : .removeCloud)
        case 82..<87:
            guard let record = pick(local, hot: false) else { return }
            await moveToCloud(device, record.id)
        case 87..<91:
            figures.count("restart")
            try await device.restart()
            note(device, "restart")
        case 91..<94:
            figures.count("flushAll")
            await device.library.flushAll()
        default:
            figures.count("idle")
        }
    }

    private func pick(_ records: [LocalDocumentRecord], hot: Bool) -> LocalDocumentRecord? {
        guard !records.isEmpty else { return nil }
        if hot, random.chance(0.6) { return records[Int.random(in: 0..<min(2, records.count), using: &random)] }
        return records[Int.random(in: 0..<records.count, using: &random)]
    }
}
