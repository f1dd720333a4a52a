import AppSupport
import Engine
import Foundation
import Settings
import TerminalUI

extension TUIApp {
    /// The seed's four switches plus UseCloud.
    static let switches: [SettingKey] = [.fastSave, .enablePing, .copyContainerOnSegue, .attemptErrorRecovery, .useCloud]

    func drawSettings() {
        let settings = model.settings
        drawTitle("Settings — \(device.setup.settingsFile.url.path)")
        for (index, key) in Self.switches.enumerated() {
            let entry = settings.entries[key]
            let on = settings.bool(key)
            let source = entry.map { "(\($0.source.rawValue))" } ?? ""
            let line = 2 + index * 2
            let text = " [\(on ? "x" : " ")] " + TextWidth.pad(key.rawValue, to: 22) + TextWidth.pad(on ? "on" : "off", to: 4) + source
            terminal.drawBar(text, line: line, style: index == settingsCursor ? [.reverse] : (on ? [.bold] : []))
            terminal.draw("     " + key.summary, line: line + 1, column: 0, style: [.dim])
        }
        let info = 3 + Self.switches.count * 2
        terminal.draw(" Device \(settings.deviceName) · new documents use \(settings.store) · a flag or MULTIDOC_* variable wins over the file", line: info, column: 0, style: [.dim])
        drawKeys("↑↓ choose  space/Enter toggle  Esc back  ? keys  q quit")
    }

    func handleSettings(_ key: Key) async {
        if await handleCommon(key) { return }
        switch key {
        case .up, .character("k"): settingsCursor = max(0, settingsCursor - 1)
        case .down, .character("j"): settingsCursor = min(Self.switches.count - 1, settingsCursor + 1)
        case .character(" "), .enter:
            await model.toggle(Self.switches[settingsCursor])
        case .escape, .left, .backspace, .character("b"):
            screen = .master
        default:
            break
        }
    }

    // MARK: Latencies

    func drawLatencies() {
        let (_, columns) = terminal.size, latencySamples = model.latencySamples
        drawTitle("Sync latencies — \(latencySamples.count) sample\(latencySamples.count == 1 ? "" : "s")")
        var line = 2
        func section(_ title: String, _ values: [Double]) {
            terminal.draw(" " + title, line: line, column: 0, style: [.bold])
            line += 1
            guard let stats = LatencyStatistics(milliseconds: values) else {
                terminal.draw("   no samples", line: line, column: 0, style: [.dim])
                line += 2
                return
            }
            terminal.draw(String(format: "   count %d   p50 %@   p99 %@   min %@   max %@", stats.count,
                                 Self.ms(stats.p50Ms), Self.ms(stats.p99Ms), Self.ms(stats.minMs), Self.ms(stats.maxMs)), line: line, column: 0)
            line += 1
            terminal.draw("   " + LatencyReport.sparkline(values, width: max(10, columns - 6)), line: line, column: 0, style: [.accent])
            line += 2
        }
        section("One-way (import finished − peer's commit)", latencySamples.map(\.oneWayMs))
        section("Round trip (my ping → peer's answer)", latencySamples.compactMap(\.roundTripMs))
        if latencySamples.isEmpty {
            terminal.draw(" Open a document that peers edit (with EnablePing on, they answer each other) to record samples.", line: line, column: 0, style: [.dim])
        } else {
            terminal.draw(" Latest", line: line, column: 0, style: [.bold])
            for sample in latencySamples.suffix(max(0, terminal.size.lines - line - 3)).reversed() {
                line += 1
                terminal.draw("   \(TimeText.local(sample.at))  from \(sample.fromName)  \(Self.ms(sample.oneWayMs))" + (sample.roundTripMs.map { "  round trip \(Self.ms($0))" } ?? ""), line: line, column: 0)
            }
        }
        drawKeys("r reload  Esc back  ? keys  q quit")
    }

    func handleLatencies(_ key: Key) {
        switch key {
        case .character("q"), .character("Q"): quitRequested = true
        case .character("?"): screenBeforeHelp = screen; screen = .help
        case .character("r"): model.loadLatencies()
        case .escape, .left, .backspace, .character("b"): screen = .master
        default: break
        }
    }

    static func ms(_ value: Double) -> String {
        value >= 1000 ? String(format: "%.2f s", value / 1000) : String(format: "%.1f ms", value)
    }

    // MARK: Help

    func drawHelp() {
        drawTitle("Keys")
        let rows: [(String, String)] = [
            ("Documents", ""),
            ("  ↑ ↓ j k, PgUp PgDn", "choose a document"),
            ("  + or n", "add a document (TestDoc<N>)"),
            ("  Enter", "open its detail (dim rows wait for their first import)"),
            ("  d", "delete it, after y to confirm"),
            ("  s / l / t", "settings / sync latencies / trash (Enter restores)"),
            ("  r", "sync now (it also runs on container changes and every few seconds)"),
            ("Detail", ""),
            ("  e or Enter", "edit the text; Esc or F2 saves and leaves edit mode"),
            ("  p", "send a ping (EnablePing on)"),
            ("  Esc", "back to the documents"),
            ("Anywhere", ""),
            ("  ?", "this help; any key closes it"),
            ("  q", "quit (not while editing)"),
        ]
        for (index, row) in rows.enumerated() {
            let heading = row.1.isEmpty
            terminal.draw(" " + TextWidth.pad(row.0, to: 22) + row.1, line: 2 + index, column: 0, style: heading ? [.bold] : [])
        }
        drawKeys("any key closes this help")
    }
}
