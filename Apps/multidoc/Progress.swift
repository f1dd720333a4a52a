#if canImport(Glibc)
import Glibc
#endif
import Engine
import Foundation
import Model
import Synchronization

/// A progress line on stderr for long sync passes (a first sync of many documents, a large
/// backlog): shown only when stderr is a terminal, only once a pass has run for half a second,
/// at most ten times a second, and erased when the pass ends, so short commands and scripts
/// see nothing.
final class TerminalProgress: Sendable {
    private struct State {
        var shown = false
        var lastDraw: ContinuousClock.Instant?
    }

    private let started = ContinuousClock.now
    private let enabled: Bool
    private let state = Mutex(State())

    init(enabled: Bool = isatty(STDERR_FILENO) == 1) {
        self.enabled = enabled
    }

    func update(_ progress: SyncProgress) {
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

    func finish() {
        guard enabled, state.withLock({ $0.shown }) else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}

/// What a command's pass looks at: everything (`sync`, `list`), or what changed in the
/// container as a whole plus one document (`refresh`: the other verbs).
enum CommandPass {
    case full
    /// A full pass that previews the documents it discovers instead of importing them (their
    /// stores wait until a command needs them): `list`.
    case listing
    case refresh(DocumentID?)
    /// One document only (after a command changed it: ships what it saved).
    case document(DocumentID)
}

/// A sync pass before or after a command, with a progress line for the terminal (see
/// ``TerminalProgress``). A container of a newer format stops the command (exit 8): this build
/// can neither read nor safely write it. A missing or refused container does not: documents
/// keep working locally, and the pass's report says why.
/// A command's passes around the document it names: learns cheaply what is new, resolves the
/// name, and brings that document up to date (each pass's warnings held for the end).
func resolveFresh(_ document: String, in library: DocumentLibrary, json: Bool) async throws -> LocalDocumentRecord {
    reportSync(try await syncPass(library, json: json, .refresh(nil)), json: json)
    let record = try await library.resolve(document)
    reportSync(try await syncPass(library, json: json, .refresh(record.id)), json: json)
    return record
}

func syncPass(_ library: DocumentLibrary, json: Bool, _ scope: CommandPass = .full) async throws -> SyncReport {
    let progress = TerminalProgress(enabled: !json && isatty(STDERR_FILENO) == 1)
    defer { progress.finish() }
    let report: SyncReport
    switch scope {
    case .full: report = await library.sync(progress: { progress.update($0) })
    case .listing: report = await library.sync(firstImports: .whenNeeded, progress: { progress.update($0) })
    case .refresh(let id): report = await library.refresh(id, progress: { progress.update($0) })
    case .document(let id): report = await library.sync(documents: [id])
    }
    // A container of a newer format, or one that does not exist and never did here: the
    // command stops (exit 8 or 7) rather than work locally as if the drive were away.
    if let error = report.containerError {
        switch error {
        case .containerFormat, .containerMissing: throw error
        default: break
        }
    }
    return report
}
