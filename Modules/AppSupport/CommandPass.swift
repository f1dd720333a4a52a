import Engine
import Foundation
import Model
import Sync

/// What a command's pass looks at: everything (`sync`, `list`), or what changed in the
/// container as a whole plus one document (`refresh`: the other verbs).
public enum CommandPass: Sendable {
    case full
    /// A full pass that previews the documents it discovers instead of importing them (their
    /// stores wait until a command needs them): `list`.
    case listing
    case refresh(DocumentID?)
    /// One document only (after a command changed it: ships what it saved).
    case document(DocumentID)
}

/// A command's passes around the document it names: learns cheaply what is new, resolves the
/// name, and brings that document up to date (each pass's warnings held for the end).
public func resolveFresh(_ document: String, in library: DocumentLibrary, json: Bool) async throws -> LocalDocumentRecord {
    reportSync(try await syncPass(library, json: json, .refresh(nil)), json: json)
    let record = try await library.resolve(document)
    reportSync(try await syncPass(library, json: json, .refresh(record.id)), json: json)
    return record
}

/// A sync pass before or after a command, with a progress line for the terminal (see
/// ``TerminalProgress``). A container of a newer format stops the command (exit 8): this build
/// can neither read nor safely write it. A missing or refused container does not: documents
/// keep working locally, and the pass's report says why.
public func syncPass(_ library: DocumentLibrary, json: Bool, _ scope: CommandPass = .full) async throws -> SyncReport {
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

/// Holds a pass's warnings until the command ends (``PassWarnings``), which drops the one that
/// repeats the command's error. A failure of a document named in `shown` is left out: the
/// command gives that document's problem in its own words.
public func reportSync(_ report: SyncReport, json: Bool, shown: Set<String> = []) {
    guard !json else { return }
    for file in report.quarantined { PassWarnings.pending.add(file.description) }
    for problem in report.problems {
        if case .document(let name, _) = problem, shown.contains(name) { continue }
        PassWarnings.pending.add(problem.description)
    }
}

/// `list`'s warnings: the pass's, and each damaged document's problem as its row has it, one
/// warning per problem (the pass's failure to open a damaged store is that same problem).
public func reportListing(_ report: SyncReport, _ documents: [DocumentSummary], json: Bool) {
    guard !json else { return }
    let troubled = documents.compactMap { document in document.problem.map { (document.name, $0) } }
    reportSync(report, json: json, shown: Set(troubled.map(\.0)))
    for (name, problem) in troubled { PassWarnings.pending.add("\(name): \(problem)") }
}

/// Two documents may share a name (as on two devices that named theirs alike); say so when a
/// command just made it happen, since commands that name it then need a UUID prefix.
public func warnIfNameShared(_ name: String, _ library: DocumentLibrary) async {
    let candidates: [(name: String, id: String)]
    do {
        _ = try await library.resolve(name)
        return
    } catch {
        guard case .ambiguousName(_, let found) = error else { return }
        candidates = found
    }
    PassWarnings.pending.add(
        "\(candidates.count) documents are now named '\(name)'; name them by UUID prefix ("
            + candidates.map { String($0.id.prefix(8)) }.joined(separator: ", ") + ") or rename one")
}
