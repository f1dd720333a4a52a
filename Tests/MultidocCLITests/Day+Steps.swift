import Foundation
import Testing
import TestSupport

// A day's steps: documents made, edited, renamed, deleted and restored; devices cut off; daemons started and stopped.
extension Day {
    func takeStep() async throws {
        let kind = pickKind()
        let device = devices.randomElement(using: &random) ?? devices[0]
        let kill = kind.killable && random.chance(0.2)
        counts.counts[kind, default: 0] += 1
        var wasKilled = false
        switch kind {
        case .new:
            let live = liveDocuments
            let name: String
            if let shared = live.randomElement(using: &random), random.chance(0.15) {
                name = shared.names.last ?? "Notes"
            } else {
                names += 1
                name = "Doc\(names)"
            }
            wasKilled = try await create(on: device, name: name, kill: kill)
        case .append, .insertText, .insertAt, .insertEditor:
            guard let document = liveDocuments.randomElement(using: &random) else { return }
            wasKilled = try await edit(kind, document, on: device, kill: kill)
        case .rename:
            guard let document = liveDocuments.randomElement(using: &random) else { return }
            names += 1
            let name = "R\(names)"
            let run = try await multidoc(device, ["rename", document.uuid, name], kill: kill)
            log("\(device.name): rename \(document.uuid.prefix(8)) \(name) → \(run.ending)")
            if run.ending != .exited(3) { document.names.append(name) }
            wasKilled = run.ending == .killed
        case .rm:
            guard let document = liveDocuments.randomElement(using: &random) else { return }
            let run = try await multidoc(device, ["rm", document.uuid], kill: kill)
            log("\(device.name): rm \(document.uuid.prefix(8)) → \(run.ending)")
            if run.ending != .exited(3) { document.removeAttempted = true }
            if run.ok { document.removedBy.append(device.name) }
            wasKilled = run.ending == .killed
        case .restore:
            let removed = documentOrder.compactMap { documents[$0] }.filter { !$0.removedBy.isEmpty }
            guard let document = removed.randomElement(using: &random) else { return }
            // Mostly where it was deleted; sometimes a peer, whose trash may hold it too.
            let by = random.chance(0.7) ? devices.first { $0.name == document.removedBy.first } ?? device : device
            let run = try await multidoc(by, ["restore", document.uuid, "--json"], kill: kill)
            let restored = (run.json() as? [String: Any])?["uuid"] as? String
            log("\(by.name): restore \(document.uuid.prefix(8)) → \(run.ending)\(restored.map { " as \($0.prefix(8))" } ?? "")")
            if let restored, run.ok { learn(restored.lowercased(), name: (run.json() as? [String: Any])?["name"] as? String ?? "?") }
            if run.ending == .killed { killedCreates += 1 }
            wasKilled = run.ending == .killed
        case .convert:
            guard let document = liveDocuments.randomElement(using: &random) else { return }
            let to = Bool.random(using: &random) ? "sqlite" : "json"
            let run = try await multidoc(device, ["convert", document.uuid, "--to", to], kill: kill)
            log("\(device.name): convert \(document.uuid.prefix(8)) --to \(to) → \(run.ending)")
            wasKilled = run.ending == .killed
        case .sync:
            let run = try await multidoc(device, ["sync"], kill: kill)
            log("\(device.name): sync → \(run.ending)")
            wasKilled = run.ending == .killed
        case .partition:
            guard let device = devices.filter({ $0.partition == nil }).randomElement(using: &random) else { return }
            // Its daemon, if one runs, stays: a container unmounted under it.
            if random.chance(0.5) {
                device.partition = folder.appending("missing-\(device.name)")
            } else {
                let elsewhere = folder.appending("elsewhere-\(device.name)")
                try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
                device.partition = elsewhere
            }
            try mount(device)
            log("\(device.name): partitioned (its container is \(device.partition?.lastPathComponent ?? "?"))")
        case .reconnect:
            guard let device = devices.filter({ $0.partition != nil }).randomElement(using: &random) else { return }
            device.partition = nil
            try mount(device)
            log("\(device.name): reconnected")
        case .daemonStart:
            guard let device = devices.filter({ $0.daemon == nil }).randomElement(using: &random) else { return }
            try startDaemon(device)
        case .daemonStop, .daemonKill:
            guard let device = devices.filter({ $0.daemon != nil }).randomElement(using: &random) else { return }
            try await stopDaemon(device, kind == .daemonStop ? SIGTERM : SIGKILL, because: "step")
        case .skew:
            try await stopDaemon(device, SIGTERM, because: "clock skew")
            let offsets = [3600 * 24 * 365, -3600 * 24 * 365, 3600 * 24, -3600 * 24, 600, -600]
            device.clockOffset = offsets.randomElement(using: &random)
            log("\(device.name): clock off by \(device.clockOffset ?? 0) s")
        case .unskew:
            guard let device = devices.filter({ $0.clockOffset != nil }).randomElement(using: &random) else { return }
            try await stopDaemon(device, SIGTERM, because: "clock back")
            device.clockOffset = nil
            log("\(device.name): clock right again")
        case .damage:
            damageAFile()
        }
        if wasKilled { counts.kills[kind, default: 0] += 1 }
    }

    /// Points the device's container path at the container, at the folder it is partitioned to,
    /// or (partitioned to a missing folder) at nothing: the container unmounted.
    func mount(_ device: DayDevice) throws {
        let manager = FileManager.default
        try manager.createDirectory(at: device.mount.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? manager.removeItem(at: device.mount)
        let target = device.partition ?? container
        if target == container || manager.fileExists(atPath: target.path) {
            try manager.createSymbolicLink(at: device.mount, withDestinationURL: target)
        }
    }

    func learn(_ uuid: String, name: String) {
        guard documents[uuid] == nil else { return }
        documents[uuid] = DayDocument(uuid: uuid, name: name)
        documentOrder.append(uuid)
    }

    /// `new NAME`; whether it was killed.
    func create(on device: DayDevice, name: String, kill: Bool) async throws -> Bool {
        let run = try await multidoc(device, ["new", name, "--json"], kill: kill)
        let uuid = (run.json() as? [String: Any])?["uuid"] as? String
        log("\(device.name): new \(name) → \(run.ending)\(uuid.map { " \($0.prefix(8))" } ?? "")")
        if run.ok {
            if let uuid { learn(uuid.lowercased(), name: name) } else { fail("\(device.name): new \(name) said no UUID: \(run.stdout)") }
        }
        if run.ending == .killed { killedCreates += 1 }
        return run.ending == .killed
    }

    /// An edit carrying a new marker: at the end, or at a random place (`--text` with the text
    /// `show` gave, or $EDITOR); whether it was killed.
    func edit(_ kind: StepKind, _ document: DayDocument, on device: DayDevice, kill: Bool) async throws -> Bool {
        device.markers += 1
        let marker = " <\(device.name)\(device.markers)>"
        let run: Run
        switch kind {
        case .insertText, .insertAt:
            // Only while no daemon runs: nothing changes the text between `show` and `edit`.
            let show = try await multidoc(device, ["show", document.uuid, "--json"])
            guard show.ok, let text = (show.json() as? [String: Any])?["text"] as? String else {
                log("\(device.name): show \(document.uuid.prefix(8)) (for edit --text) → \(show.ending)")
                return false
            }
            var places = [text.startIndex, text.endIndex]
            var search = text.startIndex
            while let found = text.range(of: " <", range: search..<text.endIndex) {
                places.append(found.lowerBound)
                search = found.upperBound
            }
            let place = places.randomElement(using: &random) ?? text.endIndex
            if kind == .insertAt {
                // Positions count Unicode scalars.
                let position = text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: place)
                run = try await multidoc(device, ["edit", document.uuid, "--insert", String(position), marker], kill: kill)
            } else {
                var edited = text
                edited.insert(contentsOf: marker, at: place)
                run = try await multidoc(device, ["edit", document.uuid, "--text", edited], kill: kill)
            }
        case .insertEditor:
            let slot = Int.random(in: 0..<1000, using: &random)
            run = try await multidoc(device, ["edit", document.uuid], kill: kill,
                                     extra: ["EDITOR": editor.path, "DAYS_MARKER": marker, "DAYS_SLOT": String(slot)])
        default:
            run = try await multidoc(device, ["edit", document.uuid, "--append", marker], kill: kill)
        }
        log("\(device.name): \(kind.rawValue) \(document.uuid.prefix(8)) '\(marker)' → \(run.ending)")
        markers.append(Marker(text: marker, device: device.name, document: document.uuid, step: step, appended: kind == .append, acknowledged: run.ok))
        return run.ending == .killed
    }

    // MARK: Daemons

    func startDaemon(_ device: DayDevice) throws {
        device.daemonStarts += 1
        let arguments = ["--root", device.root.path, "--container", device.mount.path, "--store", device.store, "--log-level", "notice"]
        device.daemon = try Daemon(arguments: arguments, environment: launcher.environment(device.environment),
                                   log: folder.appending("multidocd-\(device.name)-\(device.daemonStarts).log"))
        log("\(device.name): multidocd started")
    }

    func stopDaemon(_ device: DayDevice, _ signal: Int32, because reason: String) async throws {
        guard let daemon = device.daemon else { return }
        device.daemon = nil
        if reason != "step" { counts.counts[.daemonStop, default: 0] += 1 }
        // Before its status file is written the daemon may not handle signals yet (SIGTERM in
        // its first ~30 ms ends it like a kill would).
        let status = (try? Data(contentsOf: device.root.appendingPathComponent("multidocd.status.json")))
            .flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        let up = (status?["pid"] as? Int).map { Int32($0) == daemon.process.processIdentifier } ?? false
        let ending = await daemon.stop(signal)
        log("\(device.name): multidocd \(signal == SIGKILL ? "SIGKILL" : "SIGTERM") (\(reason)) → \(ending)")
        if signal == SIGKILL { counts.kills[.daemonKill, default: 0] += ending == .killed ? 1 : 0 }
        if signal == SIGTERM, ending == .signalled(SIGTERM), !up {
            sigtermsBeforeUp += 1
        } else if signal == SIGTERM, ending != .exited(0) {
            fail("\(device.name): multidocd did not stop cleanly on SIGTERM (\(ending)): \(daemon.output.suffix(2000))")
        }
        if signal == SIGKILL, ending != .killed, ending != .exited(0) {
            fail("\(device.name): multidocd ended \(ending) before the SIGKILL: \(daemon.output.suffix(2000))")
        }
        if daemon.output.contains("Fatal error") { fail("\(device.name): \"Fatal error\" in multidocd's log: \(daemon.output.suffix(2000))") }
    }

    /// A daemon that ended on its own is a failure unless it ended the documented way.
    func checkDaemons() async throws {
        for device in devices {
            guard let daemon = device.daemon, !daemon.process.isRunning else { continue }
            device.daemon = nil
            let ending = await daemon.stop(nil)
            log("\(device.name): multidocd ended by itself: \(ending)")
            fail("\(device.name): multidocd ended by itself (\(ending)): \(daemon.output.suffix(2000))")
        }
    }
}
