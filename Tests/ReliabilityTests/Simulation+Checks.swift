import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import Sync
import TestSupport

// Convergence and checks: the devices synced until they agree, then held to the oracle.
extension Simulation {
    /// Stops the faults, delivers everything, and lets every device sync until nothing changes.
    func converge(maxRounds: Int = 60) async {
        transport.faultsEnabled = false
        transport.offline = []
        for round in 1...maxRounds {
            let before = transport.changesNoticed
            transport.flush()
            var busy = false
            for device in devices {
                let report = await sync(device)
                if report.importedLogs > 0 || report.exportedLogs > 0 || !report.discovered.isEmpty || !report.removed.isEmpty {
                    busy = true
                }
            }
            transport.flush()
            if !busy, transport.isQuiet, transport.changesNoticed == before {
                figures.convergenceRounds = round
                return
            }
        }
        fail("no quiet state after \(maxRounds) rounds of delivery and sync")
    }

    /// Every device against the oracle and against each other.
    func check() async {
        await checkAgreement()
        await checkOracle()
    }

    /// The devices against each other, whatever happened: the same cloud documents (UUIDs and
    /// names) with the same graphs, nothing in an error state, and nothing left quarantined.
    func checkAgreement() async {
        var reference: (device: String, rows: [DocumentID: String])?
        var graphs: [DocumentID: ObjectGraph] = [:]
        for device in devices {
            let rows = await device.library.list()
            for row in rows where row.problem != nil || row.state.contains(.savingError) {
                fail("\(device.name): \(row.name) (\(row.id)) is in error: \(row.problem ?? "saving error")")
            }
            let cloud = Dictionary(rows.filter { $0.location == .cloud }.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
            if let reference {
                if reference.rows != cloud {
                    fail("\(device.name) lists cloud documents \(cloud.sorted { $0.key < $1.key }.map { "\($0.value)=\($0.key)" }), "
                        + "\(reference.device) lists \(reference.rows.sorted { $0.key < $1.key }.map { "\($0.value)=\($0.key)" })")
                }
            } else {
                reference = (device.name, cloud)
            }
            for id in cloud.keys.sorted() {
                do {
                    let graph = try await device.library.detail(id).graph
                    if let other = graphs[id] {
                        if other != graph { fail("\(device.name): \(id)'s graph differs from another device's") }
                    } else {
                        graphs[id] = graph
                    }
                } catch {
                    fail("\(device.name): cannot open \(id): \(error)")
                }
            }
            let report = await device.library.sync()
            for file in report.quarantined { fail("\(device.name): still quarantined after convergence: \(file)") }
            for problem in report.problems { fail("\(device.name): problem after convergence: \(problem)") }
        }
    }

    /// Every device against the oracle: each successful save is there unless a later write (by
    /// stamp) replaced it or its document was deleted; deleted documents stay deleted.
    func checkOracle() async {
        let expectedCloud = oracle.cloudDocuments
        /// The text the first device showed for each merged document: every device must agree.
        var mergedTexts: [DocumentID: (device: String, text: String)] = [:]
        for device in devices {
            let rows = await device.library.list()
            let cloudIDs = Set(rows.filter { $0.location == .cloud }.map(\.id))
            for document in expectedCloud where !cloudIDs.contains(document.id) {
                fail("\(device.name) lacks cloud document \(document.id) (\(document.name.text))")
                figures.lost += 1
            }
            for id in cloudIDs where !expectedCloud.contains(where: { $0.id == id }) {
                let why = oracle.deleted.contains(id) ? "deleted, but back (zombie)" : "unknown to the oracle"
                fail("\(device.name) lists cloud document \(id): \(why)")
            }
            let localIDs = Set(rows.filter { $0.location == .local }.map(\.id))
            let expectedLocal = oracle.localDocuments(on: device.index)
            if localIDs != Set(expectedLocal.map(\.id)) {
                fail("\(device.name) local documents \(localIDs.sorted()) != expected \(expectedLocal.map(\.id))")
            }
            for document in expectedCloud + expectedLocal {
                guard let row = rows.first(where: { $0.id == document.id }) else { continue }
                do {
                    let detail = try await device.library.detail(document.id)
                    if row.name != document.name.text {
                        fail("\(device.name): \(document.id) is named \(row.name.debugDescription), expected \(document.name.text.debugDescription)")
                        figures.lost += 1
                    }
                    if !document.exact {
                        if let first = mergedTexts[document.id], first.text != detail.text {
                            fail("\(device.name): \(document.id) shows \(detail.text.debugDescription), \(first.device) \(first.text.debugDescription): merged texts differ\n" + history(document.id))
                            figures.lost += 1
                        }
                        mergedTexts[document.id] = mergedTexts[document.id] ?? (device.name, detail.text)
                    }
                    if (document.exact && detail.text != document.text.text) || detail.modified != document.text.modified {
                        let shown = detail.modified.map { "\($0.timeIntervalSince1970)" } ?? "nil"
                        let expected = document.text.modified.map { "\($0.timeIntervalSince1970)" } ?? "nil"
                        fail("\(device.name): \(document.id) shows \(detail.text.debugDescription) modified \(shown), expected \(document.text.text.debugDescription) modified \(expected) (\(document.text.stamp))\n" + history(document.id))
                        figures.lost += 1
                    }
                } catch {
                    fail("\(device.name): cannot open \(document.id): \(error)")
                }
            }
        }
        for id in oracle.deleted {
            for device in devices {
                if device.records.contains(where: { $0.id == id }) { fail("\(device.name) still holds deleted \(id)") }
                let leftover = Container(root: device.container).documentDirectory(id)
                if FileManager.default.fileExists(atPath: leftover.path) {
                    fail("\(device.name)'s container still has documents/\(id) after it was deleted")
                }
            }
        }
    }

    /// The one-line summary printed per seed (what Docs/RELIABILITY.md says the simulation checks).
    func summary(seconds: Double) -> String {
        let operations = figures.operations.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let faults = FaultKind.allCases.map { "\($0.rawValue)=\(transport.faults[$0] ?? 0)" }.joined(separator: " ")
        let backends = devices.map { "\($0.backend.rawValue)\($0.fastSave ? "" : "/slow")" }.joined(separator: ",")
        return "simulation seed=\(seed) devices=\(devices.count) [\(backends)] steps=\(figures.steps) "
            + "deliveries=\(transport.deliveries) faults{\(faults)} ops{\(operations)} failedOps=\(figures.failedOperations) "
            + "quarantineReports=\(figures.quarantinedReports) rounds=\(figures.convergenceRounds) "
            + "documents=\(oracle.documents.count) deleted=\(oracle.deleted.count) lost=\(figures.lost) "
            + "failures=\(failures.count) time=\(String(format: "%.1f", seconds))s"
    }
}
