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
        var bytes: [UInt8] = []
        appendISO8601(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ``iso8601(_:)`` appended to `bytes` (JSON rows write it in place).
    public static func appendISO8601(_ date: Date, to bytes: inout [UInt8]) {
        guard let parts = parts(date, utc: true) else {
            bytes.append(contentsOf: ISO8601DateFormatter().string(from: date).utf8)
            return
        }
        appendDay(parts, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendTime(parts, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// `yyyy-MM-dd HH:mm:ss` in the local time zone (the master table and the inspector).
    public static func local(_ date: Date) -> String {
        guard let parts = parts(date, utc: false) else { return iso8601(date) }
        var bytes: [UInt8] = []
        appendDay(parts, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendTime(parts, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
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

    /// Two digits, `0`-padded (every field but the year is below 100).
    private static func appendTwo(_ value: Int32, to bytes: inout [UInt8]) {
        let value = max(0, min(99, value))
        bytes.append(UInt8(ascii: "0") + UInt8(value / 10))
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    private static func appendDay(_ parts: tm, to bytes: inout [UInt8]) {
        let year = Int(parts.tm_year) + 1900
        let yearText = String(year)
        if year >= 0, year < 10_000 { bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: 4 - yearText.utf8.count)) }
        bytes.append(contentsOf: yearText.utf8)
        bytes.append(UInt8(ascii: "-"))
        appendTwo(parts.tm_mon + 1, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendTwo(parts.tm_mday, to: &bytes)
    }

    private static func appendTime(_ parts: tm, to bytes: inout [UInt8]) {
        appendTwo(parts.tm_hour, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendTwo(parts.tm_min, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendTwo(parts.tm_sec, to: &bytes)
    }
}
