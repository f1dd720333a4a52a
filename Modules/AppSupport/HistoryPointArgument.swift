import ArgumentParser
import Engine
import Foundation

/// `--at` and `--to`: a save's number from `multidoc history` (`12` or `#12`), or a time — ISO
/// 8601 (`2026-11-23T21:00:00Z`), or local `2026-11-23 21:00[:05]`, or a local day
/// `2026-11-23` (its start).
public struct HistoryPointArgument: ExpressibleByArgument, Sendable {
    public let point: HistoryPoint

    public init?(argument: String) {
        guard let point = Self.parse(argument) else { return nil }
        self.point = point
    }

    public static var defaultCompletionKind: CompletionKind { .default }

    static func parse(_ text: String) -> HistoryPoint? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let number = trimmed.hasPrefix("#") ? String(trimmed.dropFirst()) : trimmed
        if !number.isEmpty, number.allSatisfy(\.isASCII), let save = UInt64(number) { return .save(save) }
        let iso = ISO8601DateFormatter()
        if let date = iso.date(from: trimmed) { return .time(date) }
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = iso.date(from: trimmed) { return .time(date) }
        let local = DateFormatter()
        local.locale = Locale(identifier: "en_US_POSIX")
        local.timeZone = .current
        for format in ["yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd"] {
            local.dateFormat = format
            if let date = local.date(from: trimmed) { return .time(date) }
        }
        return nil
    }
}
