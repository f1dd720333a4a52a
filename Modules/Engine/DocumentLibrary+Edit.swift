import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import Text

// Reading and editing a document: its detail, texts edited by position or whole, saves and their commits.
extension DocumentLibrary {
    /// Details of one document (honours CopyContainerOnSegue when `segue` is true). The copy is
    /// for a bug report and never keeps the document from opening: when it fails, the detail
    /// says why in `containerCopyProblem`.
    public func detail(_ id: DocumentID, segue: Bool = false) async throws -> DocumentDetail {
        guard let record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        var copyProblem: String?
        if segue, settings.copyContainerOnSegue {
            do {
                try copyContainer(to: root.copyOfContainerURL)
            } catch {
                copyProblem = "CopyContainerOnSegue: the container was not copied: \(error)"
                logger.warning("container not copied", metadata: ["error": "\(error)"])
            }
        }
        let document = try await open(record)
        let contents = try document.read()
        // A document whose first log has not been imported has no text: shown empty, it would
        // look like a document someone emptied.
        guard let entry = contents.graph.textEntry else { throw EngineError.notViewableYet(record.name.rawValue) }
        let summary = await summary(of: record)
        return DocumentDetail(
            summary: summary, text: entry.text, modified: entry.modified, graph: contents.graph, containerCopyProblem: copyProblem)
    }

    /// Replaces the document's text (and its `modified` date), saving and shipping it.
    public func setText(_ id: DocumentID, _ text: String) async throws {
        try await editText(id) { _ in text }
    }

    /// The `modified` date of a save, in whole milliseconds: a date that survives the trip
    /// through a log (seconds since 1970 as a JSON number) and back unchanged, so the writer and
    /// its peers hold the same graph. A finer date came back one rounding step off on peers.
    func modifiedNow() -> Date {
        Date(timeIntervalSince1970: (configuration.now().timeIntervalSince1970 * 1000).rounded() / 1000)
    }

    /// Appends to the document's text. The text is read inside the save's transaction, so
    /// appends from several processes of this device all land (none overwrites another).
    /// An empty suffix is still a save (its `modified` date), with no look at the text.
    public func appendText(_ id: DocumentID, _ suffix: String) async throws {
        try await editText(id, .append(suffix)) { _ in "" }
    }

    /// Inserts `text` at `position`, counted in Unicode scalars from the start of the text as it
    /// is inside the save's transaction.
    /// - Throws: ``EngineError/outOfRange(document:detail:)`` past the end of the text.
    public func insertText(_ id: DocumentID, _ text: String, at position: Int) async throws {
        guard position >= 0 else { return try await outOfRange(id, "cannot insert at \(position)") }
        // Empty: still a save (its `modified` date), refused past the end, with no look at the text.
        try await editText(id, .insert(text, at: position)) { Self.pastTheEnd("cannot insert at \(position)", $0) }
    }

    /// Deletes `length` Unicode scalars from `position`.
    /// - Throws: ``EngineError/outOfRange(document:detail:)`` for a range past the end.
    public func deleteText(_ id: DocumentID, at position: Int, length: Int) async throws {
        let (end, overflow) = position.addingReportingOverflow(length)
        guard position >= 0, length >= 0, !overflow else { return try await outOfRange(id, "cannot delete \(length) at \(position)") }
        let detail = { (count: Int) in Self.pastTheEnd("cannot delete \(length) at \(position)", count) }
        // Nothing to remove (length 0): still a save (its `modified` date), refused past the end.
        try await editText(id, .delete(position..<end), outOfRange: detail)
    }

    /// How an edit past the end of a text of `count` Unicode scalars is refused.
    static func pastTheEnd(_ what: String, _ count: Int) -> String {
        "\(what): the text has \(count) characters (Unicode scalars)"
    }

    /// Refuses an edit whose position no text has, naming the document and the text's length.
    func outOfRange(_ id: DocumentID, _ what: String) async throws {
        let document = try await openEditable(id)
        let count = (try document.read().graph.textEntry?.text.unicodeScalars.count) ?? 0
        throw EngineError.outOfRange(document: document.record.name.rawValue, detail: Self.pastTheEnd(what, count))
    }

    /// Saves edits of the text at known places as one save (and its `modified` date), each
    /// counted in the text as the edits before it left it: what a front end that knows where
    /// the cursor is, or a replayed trace, hands over instead of the whole text.
    /// - Throws: ``EngineError/outOfRange(document:detail:)`` for an edit past the end (nothing
    ///   is saved).
    public func editText(_ id: DocumentID, _ edits: [TextEdit.Kind]) async throws {
        try await editText(id, edits) { Self.pastTheEnd("an edit reaches past the end", $0) }
    }

    /// Saves one edit of the text at a known place (and its `modified` date): operations made
    /// from the position, no whole text read or diffed. `outOfRange` words the refusal of an
    /// edit past the end, given the text's length.
    func editText(_ id: DocumentID, _ kind: TextEdit.Kind, outOfRange: (Int) -> String) async throws {
        try await editText(id, [kind], outOfRange: outOfRange)
    }

    func editText(_ id: DocumentID, _ kinds: [TextEdit.Kind], outOfRange: (Int) -> String) async throws {
        let document = try await openEditable(id)
        let name = document.record.name.rawValue
        let modified = modifiedNow()
        do {
            try save(to: document) { graph in
                guard let entry = graph.textEntry else {
                    throw EngineError.notViewableYet(name)
                }
                return ([.update(entry.id, attributes: [Entity.TextEntry.modified: .date(modified)])],
                        kinds.map { TextEdit(object: entry.id, attribute: Entity.TextEntry.text, $0) })
            }
        } catch TextError.positionOutOfRange(_, let count) {
            throw EngineError.outOfRange(document: name, detail: outOfRange(count))
        }
    }

    /// Saves text the user edited from `original` (the TUI's detail). A peer's append saved
    /// meanwhile is kept rather than overwritten (``Text/TextMerge``, a three-way merge).
    @discardableResult
    public func saveEditedText(_ id: DocumentID, _ text: String, editedFrom original: String) async throws -> TextMerge.Outcome {
        var outcome = TextMerge.Outcome.mine
        try await editText(id) { current in
            let merged = TextMerge.merge(original: original, mine: text, current: current)
            outcome = merged.outcome
            return merged.text
        }
        return outcome
    }

    /// Saves what the user did to the text since it read `original`, handed over as `edits` at
    /// their places (the TUI's editor): when the text is still `original` inside the save's
    /// transaction, the edits are saved as they are, with no whole text diffed; when a peer's
    /// save came in meanwhile, `text` is merged three ways as ``saveEditedText(_:_:editedFrom:)``
    /// does. Edits that do not add up to `text` are not trusted: `text` is diffed instead.
    @discardableResult
    public func saveEditedText(_ id: DocumentID, _ text: String, editedFrom original: String, edits: [TextEdit.Kind]) async throws -> TextMerge.Outcome {
        guard Self.edits(edits, turn: original, into: text) else { return try await saveEditedText(id, text, editedFrom: original) }
        let document = try await openEditable(id)
        let name = document.record.name.rawValue
        let modified = modifiedNow()
        var outcome = TextMerge.Outcome.mine
        try save(to: document) { graph in
            guard let entry = graph.textEntry else {
                throw EngineError.notViewableYet(name)
            }
            let stamp = Change.update(entry.id, attributes: [Entity.TextEntry.modified: .date(modified)])
            if entry.text == original {
                return ([stamp], edits.map { TextEdit(object: entry.id, attribute: Entity.TextEntry.text, $0) })
            }
            let merged = TextMerge.merge(original: original, mine: text, current: entry.text)
            outcome = merged.outcome
            return ([.update(entry.id, attributes: [Entity.TextEntry.text: .string(merged.text), Entity.TextEntry.modified: .date(modified)])], [])
        }
        return outcome
    }

    /// Whether `edits`, applied in order, turn `original` into `text`: checked in Unicode
    /// scalars before a save trusts them, so an editor's slip costs a diff, never the text.
    static func edits(_ edits: [TextEdit.Kind], turn original: String, into text: String) -> Bool {
        var scalars = Array(original.unicodeScalars)
        for edit in edits {
            switch edit {
            case .append(let suffix): scalars.append(contentsOf: suffix.unicodeScalars)
            case .insert(let inserted, let position):
                guard position >= 0, position <= scalars.count else { return false }
                scalars.insert(contentsOf: inserted.unicodeScalars, at: position)
            case .delete(let range):
                guard range.lowerBound >= 0, range.upperBound <= scalars.count else { return false }
                scalars.removeSubrange(range)
            }
        }
        return scalars.elementsEqual(text.unicodeScalars)
    }

    /// Replaces the text with `edit(current text)` in one transaction.
    func editText(_ id: DocumentID, _ edit: (String) -> String) async throws {
        try await editText(id) { current, _ in edit(current) }
    }

    /// Replaces the text with `edit(current text, document name)`, which may throw to save nothing.
    func editText(_ id: DocumentID, _ edit: (String, String) throws -> String) async throws {
        let document = try await openEditable(id)
        let name = document.record.name.rawValue
        let modified = modifiedNow()
        try save(to: document) { graph in
            guard let entry = graph.textEntry else {
                throw EngineError.notViewableYet(name)
            }
            return [.update(entry.id, attributes: [
                Entity.TextEntry.text: .string(try edit(entry.text, name)), Entity.TextEntry.modified: .date(modified),
            ])]
        }
    }

    func openEditable(_ id: DocumentID) async throws -> OpenDocument {
        guard let record = localRecord(id) else { throw EngineError.unknownDocument(id.description) }
        return try await open(record)
    }

    /// Saves changes: one transaction, one log, shipped before returning when FastSave is on.
    func save(_ changes: [Change], to document: OpenDocument) throws {
        try save(to: document) { _ in changes }
    }

    /// Saves the changes `makeChanges` makes from the graph as it is inside the transaction.
    func save(to document: OpenDocument, _ makeChanges: (ObjectGraph) throws -> [Change]) throws {
        try save(to: document) { graph in (try makeChanges(graph), []) }
    }

    /// Saves changes and edits of texts at known places made from the graph inside the transaction.
    func save(to document: OpenDocument, _ makeSave: (ObjectGraph) throws -> (changes: [Change], edits: [TextEdit])) throws {
        let ship = document.record.location == .cloud && replicator != nil
        try commit(to: document, ship: ship, makeSave)
    }

    /// `durable`: whether the commit is synced; nil decides as a save does (not when its log
    /// ships at once). `writingLogAhead`: whether the log is written beside its slot while the
    /// store commits; nil decides as a save does (when its log ships at once). `peersMayHaveLogs`:
    /// false for a document made here under a new UUID, whose folders no peer can have written
    /// into yet: its first save looks for none.
    @discardableResult
    func commit(
        _ changes: [Change], to document: OpenDocument, ship: Bool, flush: Bool = true, durable: Bool? = nil, writingLogAhead: Bool? = nil,
        peersMayHaveLogs: Bool = true
    ) throws -> LocalCommit {
        try commit(to: document, ship: ship, flush: flush, durable: durable, writingLogAhead: writingLogAhead, peersMayHaveLogs: peersMayHaveLogs) { _ in
            (changes, [])
        }
    }

    @discardableResult
    func commit(
        to document: OpenDocument, ship: Bool, flush: Bool = true, durable: Bool? = nil, writingLogAhead: Bool? = nil, peersMayHaveLogs: Bool = true,
        _ makeSave: (ObjectGraph) throws -> (changes: [Change], edits: [TextEdit])
    ) throws -> LocalCommit {
        let id = document.record.id
        // One durable step per save (Docs/RELIABILITY.md): a save shipped now is acknowledged
        // once its log is in the container, so its commit is not synced; the store is synced
        // instead if the log cannot be written.
        let shipsNow = ship && flush && settings.fastSave
        let logIsTheDurableStep = shipsNow && logCanShipNow
        let logAheadTo = (writingLogAhead ?? logIsTheDurableStep) ? cloud?.container : nil
        // The log writer's thread woken as the save begins: making the log's file (0.2–0.55 ms
        // on this disk when its folders are busy) runs beside the look for peers' logs and the
        // staging, not after them.
        let standby = logAheadTo.map { StandbyWriter(container: $0, document: id, device: identity.id) }
        defer { standby?.cancel() }
        if ship, let cloud {
            // What peers saved is imported first.
            if peersMayHaveLogs {
                let stamps = stampsBeforeSave(id, in: cloud.container)
                if importedBeforeSave[id] != stamps {
                    importedBeforeSave[id] = (try? cloud.importPending(id, into: document.store)) == nil ? nil : stamps
                }
            }
            // A device that saves is registered before its first log ships: devices prune
            // their logs only once every registered device has applied them.
            try? cloud.registerIfMissing()
        }
        // The format the device file remembers (the identity check writes it there): another
        // process of this device may have seen the container, or its move to format 2, since
        // this one last looked; without the container, what the device saw last.
        let format = savedLogFormat()
        let committed: LocalCommit
        // The cache let go first: the save changes the texts in place (a text held twice is
        // copied whole).
        document.invalidate()
        do {
            committed = try Replicator.commit(
                document: id, device: identity, format: format, keys: keys, now: configuration.now, to: document.store,
                ship: ship, durable: durable ?? !logIsTheDurableStep,
                // The log's file written and synced while the store commits: the flush below puts it in place.
                writingLogAheadTo: logAheadTo, preparingNextLog: cloud?.preparesNextLog == true, standby: standby, editing: makeSave)
        } catch let error as SyncError where error.kind == .saveRefused {
            throw EngineError.saveRefused(document: document.record.name.rawValue, detail: error.detail)
        }
        document.invalidate()
        quietChecked[id] = nil
        emit(.objectsDidChange(id, ChangeSummary(updated: Set(committed.log.changes.map(\.id)))))
        emit(.didSave(id, committed.summary))
        if shipsNow {
            if !flushQuietly(document, after: committed), logIsTheDurableStep {
                do {
                    try document.store.sync()
                } catch {
                    throw EngineError.storeFailed(document: document.record.name.rawValue, detail: "the save could not be made durable: its log did not reach the container and the store could not be synced (\(error))")
                }
            }
        } else if ship {
            storeTouched.insert(id)
        }
        // The save is done and shipped: now is when the store's housekeeping can wait.
        document.store.checkpointIfDue()
        return committed
    }

    /// Whether a save's log can go into the container as the save is made: FastSave on, and a
    /// container this device accepts, there now. The log is then the save's one durable step.
    var logCanShipNow: Bool {
        settings.fastSave && containerRefusal == nil && cloud?.container.isAvailable == true
    }

    /// The stamps of `id`'s folders a save compares with those of its last import
    /// (``importedBeforeSave``): when they match, no peer's log arrived since. This device's own
    /// log folder is stamped as it was then: only this device's saves change it, and what they
    /// saved is in the store already.
    func stampsBeforeSave(_ id: DocumentID, in container: Container) -> Container.ChangeStamps {
        let earlier = importedBeforeSave[id]
        let current = container.changeStamps(id, earlier: earlier)
        return earlier.map { current.keeping(identity.id, as: $0) } ?? current
    }

    /// The log format the device file says (version 1 without one), read again only when the
    /// file changed or was written in the last two seconds (a stamp that young may not show a
    /// rewrite), and decoded again only when its bytes changed.
    func savedLogFormat() -> LogFormat {
        let file = FileIdentity(path: root.deviceFilePath)
        if let file, let saved = deviceFileFormat, saved.file == file, !file.isRecent { return saved.format }
        let bytes = try? AtomicFile.read(root.deviceFileURL)
        if let bytes, let saved = deviceFileFormat, saved.bytes == bytes {
            deviceFileFormat = file.map { ($0, bytes, saved.format) }
            return saved.format
        }
        let format = bytes.flatMap { try? JSONDecoder.multidoc.decode(DeviceFile.self, from: $0) }?.logFormat ?? .version1
        deviceFileFormat = file.flatMap { file in bytes.map { (file, $0, format) } }
        return format
    }

    /// The peers' log folders in ``importedBeforeSave`` stamped as ``Replicator/importArrived(_:logs:into:)``
    /// found them, holding nothing after what it imported: the next save does not list the
    /// document's folders again for them. A folder not stamped before (a new device) is left
    /// to that listing.
    func restampArrived(_ id: DocumentID, _ folderStamps: [DeviceID: FileStamp]) {
        guard var stamps = importedBeforeSave[id], !folderStamps.isEmpty else { return }
        for (device, stamp) in folderStamps {
            guard let index = stamps.index(of: device) else { return }
            stamps.stamps[index] = stamp
        }
        importedBeforeSave[id] = stamps
    }

    /// Ships what is waiting in a document's outbox; a missing container only delays it.
    /// Returns whether the outbox is empty now (everything in it shipped).
    /// After `commit`, a save of the document: its outbox as the commit left it, and its log
    /// put in place from where it was written while the store committed.
    @discardableResult
    func flushQuietly(_ document: OpenDocument, after commit: LocalCommit? = nil) -> Bool {
        guard let replicator = cloud else {
            commit?.writeAhead?.discard()
            return false
        }
        do {
            if let commit {
                try replicator.flush(document.record.id, in: document.store, after: commit)
            } else {
                try replicator.flush(document.record.id, in: document.store)
            }
            return true
        } catch {
            logger.notice("log kept in the outbox until the container is back", metadata: ["name": "\(document.record.name)", "reason": "\(error)"])
            return false
        }
    }
}
