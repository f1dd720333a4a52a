import Dispatch
import Engine
import Foundation
import Model

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
    /// answered with pings; `startPing` sends the first one now. Ends after `rounds` pings, or
    /// at SIGINT or SIGTERM (nil rounds: only then), so the caller still prints what it counted.
    /// `started` is told the document's name once a signal ends the command this way.
    public nonisolated func inspectLive(
        _ document: String, rounds: Int?, startPing: Bool, started: @Sendable (String) -> Void = { _ in }
    ) async throws -> InspectOutput {
        let live = LiveSync(library: self) { _ in
            guard rounds != nil else { return .goOn }
            return await self.pingFinished ? .stop : .goOn
        }
        // From here a signal ends the live sync (at once, when it comes before it runs).
        let interrupts = InterruptStop { live.stop() }
        defer { interrupts.cancel() }
        await sync()
        let record = try await resolve(document)
        await inspect(record.id, rounds: rounds)
        if startPing { try await self.startPing() }
        started(record.name.rawValue)
        try await live.run()
        let counts = await pingCounts
        return InspectOutput(document: record.id.description, name: record.name.rawValue, pingsSent: counts.sent, pingsAnswered: counts.answered)
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

/// What `inspect` prints when it ends (`--json`: this object).
public struct InspectOutput: Encodable, Sendable {
    /// The inspected document's UUID.
    public var document: String
    public var name: String
    public var pingsSent: Int
    public var pingsAnswered: Int

    /// The line `inspect` prints without `--json`.
    public var line: String { "pings sent: \(pingsSent), answered: \(pingsAnswered)" }
}

/// SIGINT and SIGTERM call `stop` (the live sync ends after its pass) instead of ending the
/// process; a second one ends it at once, should the first not be enough.
struct InterruptStop {
    private let sources: [any DispatchSourceSignal]

    init(_ stop: @escaping @Sendable () -> Void) {
        let signals = [SIGINT, SIGTERM]
        let stopped = Stopped()
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                if stopped.first() { stop() } else { exit(128 + number) }
            }
            source.resume()
            return source
        }
    }

    /// Gives the signals back to their default action.
    func cancel() {
        for source in sources { source.cancel() }
        for number in [SIGINT, SIGTERM] { signal(number, SIG_DFL) }
    }

    private final class Stopped: @unchecked Sendable {
        private let lock = NSLock()
        private var done = false
        /// True the first time only.
        func first() -> Bool {
            lock.lock()
            defer { lock.unlock() }
            let was = done
            done = true
            return !was
        }
    }
}
