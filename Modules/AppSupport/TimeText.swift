#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Dates as the front ends print them, formatted by hand from `gmtime_r`/`localtime_r`: a
/// `DateFormatter` made per date cost a millisecond, and `list` prints thousands of them.
public enum TimeText {
    /// `yyyy-MM-ddTHH:mm:ssZ` in UTC for the whole second at or before `date` (what
    /// `JSONEncoder.DateEncodingStrategy.iso8601` writes).
    public static func iso8601(_ date: Date) -> String {
        guard let parts = parts(date, utc: true) else { return ISO8601DateFormatter().string(from: date) }
        return "\(day(parts))T\(time(parts))Z"
    }

    /// `yyyy-MM-dd HH:mm:ss` in the local time zone (the master table and the inspector).
    public static func local(_ date: Date) -> String {
        guard let parts = parts(date, utc: false) else { return iso8601(date) }
        return "\(day(parts)) \(time(parts))"
    }

    /// The calendar fields of the whole second at or before `date`; nil for a date no `tm`
    /// holds (a record from elsewhere may say anything).
    private static func parts(_ date: Date, utc: Bool) -> tm? {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, abs(seconds) < 1e15 else { return nil }
        var time = time_t(seconds)
        var parts = tm()
        let converted = utc ? gmtime_r(&time, &parts) : localtime_r(&time, &parts)
        return converted == nil ? nil : parts
    }

    private static func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private static func day(_ parts: tm) -> String {
        let year = Int(parts.tm_year) + 1900
        let yearText = year >= 0 && year < 10_000 ? String(repeating: "0", count: 4 - String(year).count) + String(year) : String(year)
        return "\(yearText)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))"
    }

    private static func time(_ parts: tm) -> String { "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))" }
}
