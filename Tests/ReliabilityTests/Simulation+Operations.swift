import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import TestSupport

// The simulation's operations, each one a user action on one device, checked against the oracle as it goes.
extension Simulation {
    func contents(_ device: SimDevice, _ id: DocumentID) async throws -> StoreContents {
        try await device.library.withDocument(id) { try $0.read() }
    }

    /// The stamped text value a device holds for a document.
    func textValue(_ contents: StoreContents) -> Oracle.Value? {
        guard let entry = contents.graph.textEntry,
              let stamp = contents.sync.stamps[entry.id]?[Entity.TextEntry.text] else { return nil }
        return Oracle.Value(stamp: stamp, text: entry.text, modified: entry.modified)
    }

    func nameValue(_ contents: StoreContents) -> Oracle.Value? {
        guard let name = contents.graph.carriedName,
              let stamp = contents.sync.stamps[ObjectID.seed("document-info")]?[Entity.DocumentInfo.name] else { return nil }
        return Oracle.Value(stamp: stamp, text: name, modified: nil)
    }

    @discardableResult
    func create(_ device: SimDevice, name: String? = nil) async -> DocumentID? {
        figures.count("create")
        do {
            let summary = try await device.library.create(name: try name.map { try DocumentName($0) })
            let contents = try await contents(device, summary.id)
            guard let text = textValue(contents), let name = nameValue(contents) else {
                fail("\(device.name): created \(summary.id) without text or name")
                return nil
            }
            oracle.add(.init(id: summary.id, localOn: summary.location == .cloud ? nil : device.index, text: text, name: name))
            note(device, "create \(summary.id) \(name.text.debugDescription) \(summary.location) text@\(text.stamp)")
            return summary.id
        } catch {
            note(device, "create failed: \(error)")
            figures.failedOperations += 1
            return nil
        }
    }

    func edit(_ device: SimDevice, _ id: DocumentID, text: String) async {
        figures.count("edit")
        // What the device had applied before the save (read only from a document it can show:
        // opening one that is not viewable yet would change what the run does).
        let viewable = await device.library.list().first { $0.id == id }?.viewable ?? false
        let before = viewable ? try? await contents(device, id) : nil
        do {
            try await device.library.setText(id, text)
        } catch {
            // Not viewable yet, or deleted meanwhile: the save did not return success.
            note(device, "edit \(id) failed: \(error)")
            figures.failedOperations += 1
            return
        }
        do {
            let contents = try await contents(device, id)
            guard let value = textValue(contents), value.text == text else {
                fail("\(device.name): a save to \(id) returned success but the store shows \(textValue(contents)?.text ?? "nothing")")
                figures.lost += 1
                return
            }
            let identity = device.library.identity.id
            oracle.saved(
                text: value, in: id, save: (identity, contents.sync.applied[identity] ?? 0),
                applied: before?.sync.applied ?? [:])
            note(device, "edit \(id) \(text.debugDescription) @\(value.stamp)")
        } catch {
            fail("\(device.name): cannot read \(id) right after saving it: \(error)")
        }
    }

    func rename(_ device: SimDevice, _ id: DocumentID, to name: String) async {
        figures.count("rename")
        do {
            try await device.library.rename(id, to: try DocumentName(name))
        } catch {
            note(device, "rename \(id) failed: \(error)")
            figures.failedOperations += 1
            return
        }
        do {
            let contents = try await contents(device, id)
            guard let value = nameValue(contents), value.text == name else {
                fail("\(device.name): a rename of \(id) to \(name) returned success but the store shows \(nameValue(contents)?.text ?? "nothing")")
                figures.lost += 1
                return
            }
            oracle.renamed(id, to: value)
            note(device, "rename \(id) \(name.debugDescription) @\(value.stamp)")
        } catch {
            fail("\(device.name): cannot read \(id) right after renaming it: \(error)")
        }
    }

    func delete(_ device: SimDevice, _ id: DocumentID) async {
        figures.count("delete")
        let location = device.records.first { $0.id == id }?.location
        do {
            try await device.library.delete(id)
        } catch {
            note(device, "delete \(id) failed: \(error)")
            figures.failedOperations += 1
            return
        }
        note(device, "delete \(id) (\(location.map { "\($0)" } ?? "?"))")
        if location == .cloud { oracle.deleteFromCloud(id) } else { oracle.removeLocal(id) }
    }

    func moveToLocal(_ device: SimDevice, _ id: DocumentID, choice: MoveToLocalChoice) async {
        figures.count("moveToLocal.\(choice.rawValue)")
        let before: StoreContents
        do {
            before = try await contents(device, id)
        } catch {
            figures.failedOperations += 1
            return
        }
        // A document not downloaded yet has nothing to keep locally; the user waits.
        guard textValue(before) != nil, nameValue(before) != nil else { return }
        let merged = oracle.documents[id]?.everMerged ?? false
        let newID: DocumentID
        do {
            newID = try await device.library.moveToLocal(id, choice: choice)
        } catch {
            note(device, "moveToLocal \(id) \(choice.rawValue) failed: \(error)")
            figures.failedOperations += 1
            return
        }
        note(device, "moveToLocal \(id) \(choice.rawValue) -> \(newID) text@\(textValue(before)?.stamp.description ?? "-")")
        if choice == .removeCloud { oracle.deleteFromCloud(id) }
        guard newID != id else { return }
        // The local copy holds what this device had: every value must be one really saved.
        guard let text = textValue(before), let name = nameValue(before) else {
            fail("\(device.name): moved \(id) to local before it was viewable")
            return
        }
        if !merged, !oracle.isKnownText(text.text, stamp: text.stamp) {
            fail("\(device.name): \(id) held text \(text.text.debugDescription) that no save wrote\n" + history(id))
        }
        oracle.add(.init(id: newID, localOn: device.index, text: text, name: name))
    }

    func moveToCloud(_ device: SimDevice, _ id: DocumentID) async {
        figures.count("moveToCloud")
        do {
            let newID = try await device.library.moveToCloud(id)
            oracle.moveToCloud(id, as: newID)
            note(device, "moveToCloud \(id) -> \(newID)")
        } catch {
            note(device, "moveToCloud \(id) failed: \(error)")
            figures.failedOperations += 1
        }
    }

    func sync(_ device: SimDevice) async -> SyncReport {
        let report = await device.library.sync()
        figures.quarantinedReports += report.quarantined.count
        if !report.discovered.isEmpty || !report.removed.isEmpty || !report.problems.isEmpty {
            note(device, "sync discovered \(report.discovered) removed \(report.removed) problems \(report.problems)")
        }
        return report
    }
}
