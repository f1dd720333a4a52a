import Foundation
import Testing
import TestSupport

// Container files damaged during the day, and the heal at its end that brings every device back.
extension Day {
    // MARK: Damage

    func damageAFile() {
        let documentsFolder = container.appendingPathComponent("documents")
        var candidates: [(url: URL, weight: Int)] = []
        for url in regularFiles(under: documentsFolder) {
            let name = url.lastPathComponent
            if name.hasSuffix(".log") { candidates.append((url, 3)) } else if name.hasPrefix("info-") { candidates.append((url, 1)) }
        }
        for url in regularFiles(under: container.appendingPathComponent("tombstones")) { candidates.append((url, 2)) }
        for url in regularFiles(under: container.appendingPathComponent("devices")) { candidates.append((url, 1)) }
        candidates = candidates.filter { damaged[relative($0.url)] == nil }
        let total = candidates.reduce(0) { $0 + $1.weight }
        guard total > 0 else { log("damage: nothing to damage"); return }
        var pick = Int.random(in: 0..<total, using: &random)
        guard let chosen = candidates.first(where: { pick -= $0.weight; return pick < 0 })?.url else { return }
        let damage = Damage.allCases.randomElement(using: &random) ?? .flipBits
        guard let done = Damage.apply(damage, to: chosen, using: &random) else { log("damage: could not damage \(relative(chosen))"); return }
        let path = relative(chosen)
        damaged[path] = done
        log("damage: \(path): \(done)")
        let parts = path.split(separator: "/").map(String.init)
        if parts.first == "documents", parts.count >= 3 {
            let document = documents[parts[1]]
            if parts[2] == "logs", parts.count >= 5 {
                damagedLogs.append((parts[1], parts[3], step))
            } else {
                document?.infoDamaged = true
            }
        } else if parts.first == "tombstones", let uuid = parts.last?.split(separator: ".").first {
            documents[String(uuid)]?.tombstoneDamaged = true
        }
    }

    func relative(_ url: URL) -> String {
        let base = container.standardizedFileURL.path
        let path = url.standardizedFileURL.path
        return path.hasPrefix(base + "/") ? String(path.dropFirst(base.count + 1)) : path
    }

    // MARK: Heal

    /// Whether a line of `container verify` is about the damaged file at `path` (an info file's
    /// damage is named as its document folder's).
    func names(_ problem: String, _ path: String) -> Bool {
        if problem.contains(path) { return true }
        let parts = path.split(separator: "/")
        return parts.count == 3 && parts[2].hasPrefix("info-") && problem.contains("\(parts[0])/\(parts[1]):")
    }

    /// Everything back to normal as a user would bring it: daemons stopped, the container back,
    /// clocks right, damaged files the container's check names removed, `container repair`, and
    /// `sync` on every device until a round changes nothing.
    func heal() async throws {
        log("heal")
        for device in devices {
            try await stopDaemon(device, SIGTERM, because: "heal")
            device.partition = nil
            try mount(device)
            device.clockOffset = nil
        }
        for device in devices {
            let sync = try await multidoc(device, ["sync"])
            // The way out the message gives: a device that had nothing shared took the folder
            // in the container's place for its container; it comes back with `adopt`, and shares
            // again what it made meanwhile.
            if sync.stderr.contains("multidoc container adopt") {
                adoptions += 1
                let adopt = try await multidoc(device, ["container", "adopt"])
                log("\(device.name): sync said \(sync.stderr.prefix(300)); container adopt → \(adopt.ending)")
                let rows = (try await multidoc(device, ["list", "--json"]).json() as? [[String: Any]]) ?? []
                for row in rows where row["location"] as? String == "local" {
                    guard let uuid = (row["uuid"] as? String)?.lowercased() else { continue }
                    let move = try await multidoc(device, ["move-to-cloud", uuid, "--json"])
                    let moved = ((move.json() as? [String: Any])?["uuid"] as? String)?.lowercased()
                    log("\(device.name): move-to-cloud \(uuid.prefix(8)) → \(move.ending)\(moved.map { " as \($0.prefix(8))" } ?? "")")
                    if let moved, moved != uuid { aliases[uuid] = moved }
                }
            }
        }
        // The container's check names the damaged files; a user removes them (nobody can repair
        // a damaged log by hand) and asks each device to repair what they leave missing.
        let verify = try await multidoc(devices[0], ["container", "verify", "--json"])
        let problems = ((verify.json() as? [String: Any])?["problems"] as? [String]) ?? []
        log("verify before removing damaged files: \(problems.count) problems")
        var removed: [String] = []
        for path in damaged.keys.sorted() where problems.contains(where: { names($0, path) }) {
            try? FileManager.default.removeItem(at: container.appendingPathComponent(path))
            removed.append(path)
            detected.insert(path)
        }
        let unnoticed = damaged.keys.filter { !detected.contains($0) && FileManager.default.fileExists(atPath: container.appendingPathComponent($0).path) }
        if !unnoticed.isEmpty { log("damaged files that pass every check: \(unnoticed.sorted())") }
        // Every format 2 log carries a checksum: a damaged one is always named.
        for path in unnoticed.sorted() where path.hasPrefix("documents/") && path.hasSuffix(".log") {
            fail("damaged log \(path) (\(damaged[path] ?? "?")) passes `container verify`")
        }
        for problem in problems where !damaged.keys.contains(where: { names(problem, $0) }) {
            log("verify named a file the test did not damage: \(problem)")
        }
        log("removed \(removed.count) damaged files: \(removed)")
        if !removed.isEmpty {
            for device in devices {
                let repair = try await multidoc(device, ["container", "repair", "--json"])
                log("\(device.name): container repair → \(repair.ending) \(repair.stdout.prefix(300))")
            }
        }
        var previous: [String] = []
        for round in 1...8 {
            healRounds = round
            var moved = 0
            for device in devices {
                let sync = try await multidoc(device, ["sync", "--json"])
                if !sync.ok { log("\(device.name): heal sync → \(sync.ending): \(sync.stderr.prefix(500))") }
                if let report = sync.json() as? [String: Any] {
                    for key in ["importedLogs", "exportedLogs", "discovered", "removed"] {
                        if let number = report[key] as? Int { moved += number } else if let array = report[key] as? [Any] { moved += array.count }
                    }
                }
            }
            var lists: [String] = []
            for device in devices { lists.append(try await multidoc(device, ["list", "--json"]).stdout) }
            log("heal round \(round): \(moved) logs/documents moved")
            if moved == 0, lists == previous { break }
            previous = lists
            if round == 8 { fail("the devices still changed after 8 rounds of sync") }
        }
    }
}
