#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Engine
import Synchronization

/// A progress line on stderr for long sync passes (a first sync of many documents, a large
/// backlog): shown only when stderr is a terminal, only once a pass has run for half a second,
/// at most ten times a second, and erased when the pass ends, so short commands and scripts
/// see nothing.
public final class TerminalProgress: Sendable {
    private struct State {
        var shown = false
        var lastDraw: ContinuousClock.Instant?
    }

    private let started = ContinuousClock.now
    private let enabled: Bool
    private let state = Mutex(State())

    /// `enabled`: draw at all (off for `--json` and when stderr is not a terminal).
    public init(enabled: Bool = isatty(STDERR_FILENO) == 1) {
        self.enabled = enabled
    }

    /// Draws the line for `progress`, when it is due.
    public func update(_ progress: SyncProgress) {
        guard enabled else { return }
        let now = ContinuousClock.now
        guard now - started > .milliseconds(500) else { return }
        let draw = state.withLock { state -> Bool in
            if let last = state.lastDraw, now - last < .milliseconds(100), progress.done < progress.total { return false }
            state.lastDraw = now
            state.shown = true
            return true
        }
        guard draw else { return }
        let percent = progress.total > 0 ? progress.done * 100 / progress.total : 100
        let line = "\r\u{1B}[Ksyncing: \(progress.done)/\(progress.total) documents (\(percent)%), \(progress.importedLogs) logs imported"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Erases the line, if one was drawn.
    public func finish() {
        guard enabled, state.withLock({ $0.shown }) else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
