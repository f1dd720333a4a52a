import Engine
import Foundation

// The commands that keep syncing until they are stopped: `multidoc sync --watch` and
// `multidoc inspect`. LiveSync does the work; these say when it ends.

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
}
