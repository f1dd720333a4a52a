/// A key read from the terminal.
public enum Key: Equatable, Sendable {
    case character(Unicode.Scalar)
    case enter, escape, backspace, delete, tab
    case up, down, left, right, home, end, pageUp, pageDown
    case function(Int)
    case resize
    case other(Int32)
}

/// Text attributes the screens use; the terminal maps them to curses attributes and colours.
public struct Style: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let bold = Style(rawValue: 1 << 0)
    public static let dim = Style(rawValue: 1 << 1)
    public static let reverse = Style(rawValue: 1 << 2)
    public static let underline = Style(rawValue: 1 << 3)
    public static let title = Style(rawValue: 1 << 4)
    public static let error = Style(rawValue: 1 << 5)
    public static let good = Style(rawValue: 1 << 6)
    public static let accent = Style(rawValue: 1 << 7)
}
