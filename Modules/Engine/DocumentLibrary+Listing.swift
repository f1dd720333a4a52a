import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import Text

// Listing and lookup: the records and what each front end lists.
extension DocumentLibrary {
    // MARK: Listing and lookup

    /// The master table, sorted by name.
    public func list() async -> [DocumentSummary] {
        var result: [DocumentSummary] = []
        for record in allRecords(reusingRecentCheck: true) {
            result.append(await summary(of: record))
        }
        // Natural order (TestDoc2 before TestDoc10), with keys made once (a locale-aware
        // comparison per pair took an eighth of a 10,000-document list), sorting indices (moving
        // whole summaries while sorting cost as much again).
        let keys = result.map { NaturalOrder.key($0.name) }
        let order = result.indices.sorted { lhs, rhs in
            keys[lhs] == keys[rhs] ? result[lhs].id < result[rhs].id : keys[lhs] < keys[rhs]
        }
        return order.map { result[$0] }
    }

    /// Where one document is in its life on this device: its row's life while it is listed,
    /// ``DocumentLife/trashed`` while the trash holds it, ``DocumentLife/deleted`` once this
    /// device made or applied its deletion; nil for a document it does not know (or no longer
    /// remembers: a local document out of the trash).
    public func life(of id: DocumentID) async -> DocumentLife? {
        if let record = localRecord(id) { return await summary(of: record).life }
        if trash().contains(where: { $0.id == id }) { return .trashed }
        if DeletionLedger.read(root.deletionsURL).entries.contains(where: { $0.document == id }) { return .deleted }
        return nil
    }

    /// One row of the master table: its life first, and what it shows as far as that life
    /// allows (a preview is never called downloaded, a listed document never viewable).
    func summary(of record: LocalDocumentRecord) async -> DocumentSummary {
        var summary = DocumentSummary(
            id: record.id, name: record.name.rawValue, state: .closed, origin: record.origin,
            location: record.location, store: record.store, viewable: false, downloadPercent: 0,
            modified: nil, problem: nil, life: .listed)
        if let problem = problems[record.id] {
            summary.state = [.savingError, .editingDisabled]
            summary.problem = problem.message
            summary.life = problem.life
            return summary
        }
        let open = await handler.isOpen(record.id)
        // What is known without opening the store: a quiet mark whose stamps still hold (its
        // store files among them), or, for a discovered document not imported yet, what a
        // preview just showed (too recent for a mark).
        var known: (viewable: Bool, modified: Date?, life: DocumentLife)?
        if let mark = trustedQuietMark(record, cloud?.container, reusingRecentCheck: true) {
            known = (mark.viewable, mark.modified, mark.life)
        } else if !open, awaitsFirstImport(record) {
            guard let seen = previewed[record.id], ContinuousClock.now - seen.at < Self.recentCheck else {
                // Listed, not viewable until a preview or an import says so.
                summary.state = [.closed, .editingDisabled, .progressAvailable]
                return summary
            }
            known = (seen.viewable, seen.modified, .previewed)
        }
        if let known {
            summary.state = open ? .normal : .closed
            summary.viewable = known.viewable
            summary.modified = known.modified
            summary.life = known.life
            // A preview read the document from the container: viewable while the container is
            // there, and nothing of it on this device yet.
            summary.downloadPercent = known.life.isDownloaded ? 100 : 0
            if !known.life.isDownloaded { summary.state.insert(.progressAvailable) }
            if !summary.viewable { summary.state.insert(.editingDisabled) }
            return summary
        }
        do {
            let contents = try await handler.peek(record)
            summary.state = open ? .normal : .closed
            summary.viewable = !contents.graph.objects.isEmpty
            summary.modified = contents.graph.textEntry?.modified
            summary.life = .downloaded
            if record.location == .cloud, let replicator = cloud {
                let progress = replicator.progress(record.id, applied: contents.sync.applied)
                summary.downloadPercent = progress.percent
                if progress.percent < 100 {
                    summary.state.insert(.progressAvailable)
                    summary.life = .downloading
                }
            } else {
                summary.downloadPercent = 100
                // A local document has nothing to sync: what it shows holds while its store
                // files keep their stamps.
                if record.location == .local, !open, let stamps = quietStamps(record, nil) {
                    catalog.setQuiet(record.id, QuietMark(
                        stamps: stamps.stamps, devices: [], applied: contents.sync.applied, viewable: summary.viewable,
                        modified: summary.modified, ownLogs: 0))
                }
            }
            if !summary.viewable { summary.state.insert(.editingDisabled) }
        } catch let error as StoreError where error.kind == .notFound && record.origin == .discovered {
            // Its first import is making the store right now (another task of this library, or
            // another process): listed, not viewable yet, not a problem.
            summary.state = [.closed, .editingDisabled, .progressAvailable]
        } catch {
            summary.state = [.closed, .savingError, .editingDisabled]
            summary.problem = "\(error)"
            summary.life = (error as? StoreError).map(DocumentLife.failed) ?? .unreadable
        }
        return summary
    }

    /// Finds a document by name, UUID or unique UUID prefix.
    /// - Throws: ``EngineError/unknownDocument(_:)``, or ``EngineError/ambiguousName(_:candidates:)``
    ///   when several documents share the name.
    public func resolve(_ query: String) throws(EngineError) -> LocalDocumentRecord {
        // The common case without looking at every record: a UUID, or a name the catalog knows
        // for exactly one document whose record file still says so. Anything else (unknown,
        // ambiguous, a prefix, a record renamed since) looks at every record.
        if let id = DocumentID(query), let record = localRecord(id) { return record }
        // The catalog matches bytes: only an ASCII name has no other canonically equal spelling
        // (NFC and NFD), which the look at every record below compares as equal.
        if query.utf8.allSatisfy({ $0 < 0x80 }) {
            let known = catalog.candidates(named: query)
            if known.count == 1, let only = known.first, let record = localRecord(only), record.name.rawValue == query {
                return record
            }
        }
        let records = allRecords()
        if let id = DocumentID(query), let record = records.first(where: { $0.id == id }) { return record }
        let named = records.filter { $0.name.rawValue == query }
        if named.count == 1, let only = named.first { return only }
        if named.count > 1 {
            throw .ambiguousName(query, candidates: named.sorted { $0.id < $1.id }.map { ($0.name.rawValue, $0.id.description) })
        }
        let lowered = query.lowercased()
        if lowered.count >= 4, lowered.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
            let prefixed = records.filter { $0.id.description.hasPrefix(lowered) }
            if prefixed.count == 1, let only = prefixed.first { return only }
            if prefixed.count > 1 {
                throw .ambiguousName(query, candidates: prefixed.map { ($0.name.rawValue, $0.id.description) })
            }
        }
        // A record that cannot be read matches nothing, and the document it names may be the
        // one asked for: say which file is damaged rather than only that nothing matches.
        let damaged = catalog.damaged.sorted { $0.key < $1.key }
        if let (id, reason) = damaged.first(where: { DocumentID(query) == $0.key }) ?? damaged.first {
            let which = DocumentID(query) == id ? "it is the record of \(query)" : "no readable record matches '\(query)', and this one may be its document"
            let others = damaged.count > 1 ? " (\(damaged.count - 1) more records are damaged: 'multidoc list' names them)" : ""
            throw .damagedFile(
                root.recordURL(id).path,
                "\(reason); \(which)\(others); `multidoc sync --attempt-error-recovery on` rebuilds it from the container")
        }
        throw .unknownDocument(query, suggestions: Suggestions.closest(to: query, among: records.map(\.name.rawValue)))
    }
}
