import Engine
import FileIO
import Foundation

/// What the daemon of a root says of itself (Docs/DAEMON.md), as `multidoc status` shows it.
public enum DaemonStatusText {
    /// The status file of the daemon running on `root`, or nil when none runs: the status file
    /// of a killed daemon stays behind, so the lock tells whether one runs.
    public static func running(_ root: DeviceRoot) -> [String: Any]? {
        var daemonRunning = false
        if FileManager.default.fileExists(atPath: root.daemonLockURL.path), let lock = try? FileLock(url: root.daemonLockURL) {
            daemonRunning = (try? lock.tryLock(.shared)) == false
            lock.unlock()
        }
        let statusData = daemonRunning ? try? AtomicFile.readRewritten(root.daemonStatusURL) : nil
        return statusData.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    /// The daemon's status file in words, one fact a line.
    public static func lines(_ status: [String: Any], now: Date) -> [String] {
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
