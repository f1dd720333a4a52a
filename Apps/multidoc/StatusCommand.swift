import AppSupport
import ArgumentParser
import Engine
import FileIO
import Foundation
import Model
import Settings
import Storage
import Sync

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The device's daemon and container status.")
    @OptionGroup var options: GlobalOptions

    func run() async throws {
        try await runCommand {
            let (setup, library) = try options.bootstrap()
            // What is waiting in the container first, as every command that reads state does.
            let documents = try await library.closing { library in
                var report = try await syncPass(library, json: options.json, .refresh(nil))
                // Saves stuck behind a slot another copy of this root took: a command's pass does
                // not ship them, so it would not say so.
                for problem in await library.stuckSaves() where !report.problems.contains(problem) { report.problems.append(problem) }
                reportSync(report, json: options.json)
                return await library.documentCount()
            }
            // The status file of a killed daemon stays behind; the lock tells whether one runs.
            var daemonRunning = false
            if FileManager.default.fileExists(atPath: setup.root.daemonLockURL.path),
               let lock = try? FileLock(url: setup.root.daemonLockURL) {
                daemonRunning = (try? lock.tryLock(.shared)) == false
                lock.unlock()
            }
            let statusData = daemonRunning ? try? AtomicFile.readRewritten(setup.root.daemonStatusURL) : nil
            let daemon = statusData.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
            let available = setup.container.map { Container(root: $0).isAvailable }
            if options.json {
                var object: [String: Any] = ["root": setup.root.url.path, "documents": documents, "device": setup.identity.name]
                object["container"] = setup.container?.path
                object["containerAvailable"] = available
                // `daemon`: `running`, and the daemon's status file when one runs (Docs/DAEMON.md).
                object["daemon"] = (daemon ?? [:]).merging(["running": daemon != nil]) { _, running in running }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
                return
            }
            print("device:    \(setup.identity.name) (\(setup.identity.model)) \(setup.identity.id)")
            print("root:      \(setup.root.url.path)")
            print("container: \(setup.container?.path ?? "none") \(available.map { $0 ? "(available)" : "(unavailable)" } ?? "")")
            print("documents: \(documents)")
            guard let daemon else {
                print("daemon:    not running (start it with: multidocd\(options.root.map { " --root '\($0)'" } ?? "") &)")
                return
            }
            for line in Self.daemonLines(daemon, now: Date()) { print(line) }
        }
    }
}

extension Status {
    /// The daemon's status file in words, one fact a line.
    static func daemonLines(_ status: [String: Any], now: Date) -> [String] {
        let dates = ISO8601DateFormatter()
        func ago(_ key: String) -> String? {
            guard let text = status[key] as? String, let date = dates.date(from: text) else { return nil }
            let seconds = max(0, Int(now.timeIntervalSince(date)))
            let span = seconds < 60 ? "\(seconds) s" : seconds < 3600 ? "\(seconds / 60) min" : seconds < 86_400 ? "\(seconds / 3600) h" : "\(seconds / 86_400) d"
            return "\(span) ago"
        }
        var lines: [String] = []
        let pid = (status["pid"] as? Int).map { " (pid \($0))" } ?? ""
        lines.append("daemon:    running\(pid)\(ago("startedAt").map { ", started \($0)" } ?? "")")
        let passes = status["passes"] as? Int ?? 0
        lines.append("           \(passes) \(passes == 1 ? "pass" : "passes"), last \(ago("lastSyncAt") ?? "not yet"); last import \(ago("lastImportAt") ?? "none yet")")
        if status["containerAvailable"] as? Bool == false { lines.append("           the container is unavailable to it") }
        if let error = status["lastError"] as? String { lines.append("           last problem (\(ago("lastErrorAt") ?? "")): \(error)") }
        if let inspecting = status["inspecting"] as? String {
            lines.append("           inspecting \(inspecting): \(status["pingsSent"] as? Int ?? 0) pings sent, \(status["pingsAnswered"] as? Int ?? 0) answered")
        }
        return lines
    }
}
