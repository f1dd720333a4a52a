import Engine
import Foundation

// What a command does with the library beyond one verb: keep syncing until stopped (`sync
// --watch`, `inspect`; LiveSync does the work, these say when it ends), or bring every
// document in line with a changed UseCloud.

extension DocumentLibrary {
    /// Syncs live until the process is interrupted, handing every event to `each`
    /// (`sync --watch`).
    public nonisolated func watch(_ each: @escaping @Sendable (LibraryEvent) -> Void) async throws {
        let events = await self.events()
        let printer = Task {
            for await event in events { each(event) }
        }
        defer { printer.cancel() }
        try await LiveSync(library: self).run()
    }

    /// Inspects `document` and syncs live (`inspect`): with EnablePing on, peers' changes are
    /// answered with pings; `startPing` sends the first one now. Ends after `rounds` pings (nil:
    /// when interrupted). Returns the pings sent and answered.
    public nonisolated func inspectLive(_ document: String, rounds: Int?, startPing: Bool) async throws -> (sent: Int, answered: Int) {
        await sync()
        let record = try await resolve(document)
        await inspect(record.id, rounds: rounds)
        if startPing { try await self.startPing() }
        try await LiveSync(library: self) { _ in
            guard rounds != nil else { return .goOn }
            return await self.pingFinished ? .stop : .goOn
        }.run()
        return await pingCounts
    }

    /// Brings every document in line with UseCloud as now in force (`settings set UseCloud`):
    /// a pass, the moves (`choice` for each cloud document when it went off), a pass that ships
    /// them. Returns what became of each document moved.
    public nonisolated func applyUseCloudNow(_ choice: MoveToLocalChoice) async -> [UseCloudChange] {
        await sync()
        let moved = await applyUseCloud { _ in choice }
        await sync()
        return moved
    }
}
