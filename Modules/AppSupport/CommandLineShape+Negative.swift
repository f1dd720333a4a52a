import Foundation

extension CommandLineShape {
    /// Options whose values are numbers that must not be negative, each with the places
    /// (0 for its first value, 1 for its second) that hold such a number: `["--delete": [0, 1]]`.
    public typealias NonNegativeOptions = [String: Set<Int>]

    /// The one line for a negative number given to an option of `options` (`bad value '-1' for
    /// --at; it must not be negative`), or nil when there is none before a `--`.
    ///
    /// ArgumentParser reads `-1` as an option, so such a command line fails to parse with
    /// "missing value" or "unknown option": this names the real mistake instead.
    public static func negativeValue(in arguments: [String], options: NonNegativeOptions) -> String? {
        guard !options.isEmpty else { return nil }
        // The option the next value belongs to, and which of its values that is.
        var current: (name: String, place: Int)?
        for word in arguments {
            if word == "--" { return nil }
            if word.hasPrefix("--") {
                let parts = word.split(separator: "=", maxSplits: 1).map(String.init)
                let name = parts.first ?? word
                if parts.count == 2 {
                    if isNegativeNumber(parts[1]), options[name]?.contains(0) == true { return message(parts[1], name) }
                    current = (name, 1)
                } else {
                    current = (name, 0)
                }
            } else if isNegativeNumber(word) {
                if let option = current, options[option.name]?.contains(option.place) == true { return message(word, option.name) }
                current = current.map { ($0.name, $0.place + 1) }
            } else if word.hasPrefix("-"), word.count > 1 {
                current = nil
            } else {
                current = current.map { ($0.name, $0.place + 1) }
            }
        }
        return nil
    }

    /// `-1`, `-0.5`, `-.5`: a minus sign and a number.
    static func isNegativeNumber(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word.count > 1 else { return false }
        let digits = word.dropFirst()
        return digits.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") } && digits.contains(where: \.isNumber)
            && digits.filter { $0 == "." }.count <= 1
    }

    private static func message(_ value: String, _ option: String) -> String {
        "bad value '\(value)' for \(option); it must not be negative"
    }
}
