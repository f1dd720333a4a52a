import Foundation
import Testing
import TestSupport

// The oracle: after the heal, every device shows the same documents and texts, every acknowledged edit once.
extension Day {
    func judge() async throws {
        // Every device lists the same documents under the same names.
        var listed: [String: [String: String]] = [:]
        for device in devices {
            let list = try await multidoc(device, ["list", "--json"])
            guard list.ok, let rows = list.json() as? [[String: Any]] else {
                fail("\(device.name): list after the heal → \(list.ending): \(list.stderr)")
                continue
            }
            var byUUID: [String: String] = [:]
            for row in rows {
                if let uuid = (row["uuid"] as? String)?.lowercased() { byUUID[uuid] = row["name"] as? String ?? "?" }
                if let problem = row["problem"] { fail("\(device.name) lists \(row["name"] ?? "?") with a problem: \(problem)") }
            }
            listed[device.name] = byUUID
        }
        let reference = listed[devices[0].name] ?? [:]
        for device in devices.dropFirst() where listed[device.name] != reference {
            let mine = listed[device.name] ?? [:]
            for uuid in Set(mine.keys).union(reference.keys).sorted() where mine[uuid] != reference[uuid] {
                fail("document \(uuid.prefix(8)) is listed as \(reference[uuid].map { "'\($0)'" } ?? "nothing") on \(devices[0].name), "
                     + "\(mine[uuid].map { "'\($0)'" } ?? "nothing") on \(device.name)")
            }
        }
        // Every document's text is the same everywhere.
        var texts: [String: String] = [:]
        for uuid in reference.keys.sorted() {
            for device in devices {
                let show = try await multidoc(device, ["show", uuid, "--json"])
                guard show.ok, let text = (show.json() as? [String: Any])?["text"] as? String else {
                    // A device the damage left listing nothing of it has nothing to show: the listing's cause.
                    fail("\(device.name): show \(uuid.prefix(8)) after the heal → \(show.ending): \(show.stderr)")
                    continue
                }
                if let other = texts[uuid], other != text {
                    fail("document \(uuid.prefix(8)) ('\(reference[uuid] ?? "")') differs: \(devices[0].name) has '\(other)', \(device.name) has '\(text)'")
                } else {
                    texts[uuid] = text
                }
            }
        }
        // Documents: those the test knows are there unless deleted; named as someone named them.
        for (old, new) in aliases { texts[old] = texts[new] }
        for uuid in documentOrder {
            guard let document = documents[uuid] else { continue }
            let uuid = aliases[uuid] ?? uuid
            if let name = reference[uuid] {
                if !document.removedBy.isEmpty {
                    fail("document \(uuid.prefix(8)) was deleted (rm acknowledged on \(document.removedBy)) but is listed as '\(name)'")
                }
                if !document.names.contains(name) { fail("document \(uuid.prefix(8)) is named '\(name)', never one of \(document.names)") }
            } else if !document.removeAttempted {
                if document.infoDamaged {
                    log("document \(uuid.prefix(8)) is gone; its info file was damaged")
                } else {
                    fail("document \(uuid.prefix(8)) ('\(document.names.last ?? "")') vanished: nobody deleted it")
                }
            }
        }
        let unknown = Set(reference.keys).subtracting(documentOrder.map { aliases[$0] ?? $0 })
        if unknown.count > killedCreates {
            fail("\(unknown.count) documents nobody made (only \(killedCreates) creates or restores were killed): \(unknown.sorted().map { $0.prefix(8) })")
        }
        // Every acknowledged edit once, nothing twice, each device's appends in order.
        for marker in markers {
            guard let text = texts[marker.document], let document = documents[marker.document] else { continue }
            let count = occurrences(marker.text, in: text)
            if count > 1 {
                fail("'\(marker.text)' (\(marker.device), step \(marker.step)) is \(count) times in \(marker.document.prefix(8)): '\(text)'")
            }
            guard marker.acknowledged, count == 0 else { continue }
            let writer = devices.first { $0.name == marker.device }?.id ?? ""
            let damagedAfter = damagedLogs.contains { $0.document == marker.document && $0.device == writer && $0.step > marker.step }
            if damagedAfter || document.infoDamaged || document.tombstoneDamaged {
                toleratedMissing += 1
            } else {
                fail("'\(marker.text)' (\(marker.device), step \(marker.step), acknowledged) is missing from \(marker.document.prefix(8)): '\(text)'")
            }
        }
        for device in devices {
            for uuid in documentOrder {
                guard let text = texts[uuid] else { continue }
                let mine = markers.filter { $0.device == device.name && $0.document == uuid && $0.appended }.sorted { $0.step < $1.step }
                let places = mine.compactMap { text.range(of: $0.text)?.lowerBound }
                if places != places.sorted() {
                    fail("\(device.name)'s appends to \(uuid.prefix(8)) are out of the order it made them: \(mine.map(\.text)) in '\(text)'")
                }
            }
        }
        // The container checks clean, or names only files the test damaged.
        let verify = try await multidoc(devices[0], ["container", "verify", "--json"])
        let problems = ((verify.json() as? [String: Any])?["problems"] as? [String]) ?? []
        let unexplained = problems.filter { problem in !damaged.keys.contains { names(problem, $0) } }
        if !unexplained.isEmpty { fail("container verify after the heal: \(unexplained)") }
        if verify.json() == nil { fail("container verify --json → \(verify.ending): \(verify.stderr)") }
    }
}
