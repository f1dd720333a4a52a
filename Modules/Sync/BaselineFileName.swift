import Model

/// The name of a baseline in `documents/<uuid>/baselines/`: its writer, the number of logs it
/// covers, and an extension that says what the file holds. A binary baseline (format 2,
/// ``Baseline/envelope(container:)``) is `<writer>-<coverage>.baseline`; a JSON one (format 1,
/// and binary ones older builds wrote under that name) is `<writer>-<coverage>.json`. Readers
/// take both; a writer names a file by what it writes.
public struct BaselineFileName: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// What the file holds, as its extension says.
    public enum Form: String, Sendable, Hashable, CaseIterable {
        /// `.baseline`: an envelope around the binary payload.
        case binary = "baseline"
        /// `.json`: JSON, bare or in an envelope (format 1; also what older builds named their
        /// binary baselines, which readers tell apart by the first bytes).
        case json
    }

    /// The device that wrote it (the only one that replaces or removes it).
    public var writer: DeviceID
    /// How many logs it covers, summed over devices (``Baseline/coverage``).
    public var coverage: UInt64
    /// What it holds, as its extension says.
    public var form: Form

    /// The name of `writer`'s baseline covering `coverage` logs, in `form`.
    public init(writer: DeviceID, coverage: UInt64, form: Form) {
        self.writer = writer
        self.coverage = coverage
        self.form = form
    }

    /// Reads a baseline's file name.
    /// - Throws: ``BaselineNameError`` naming the name and what is wrong with it: no writer's
    ///   UUID before the dash, no number after it, or an extension that is neither `.baseline`
    ///   nor `.json`.
    public init(parsing name: String) throws(BaselineNameError) {
        guard let dot = name.lastIndex(of: ".") else { throw BaselineNameError(name: name, reason: "it has no extension") }
        guard let form = Form(rawValue: String(name[name.index(after: dot)...])) else {
            throw BaselineNameError(name: name, reason: "its extension is neither .baseline nor .json")
        }
        let stem = name[..<dot]
        guard let dash = stem.lastIndex(of: "-") else { throw BaselineNameError(name: name, reason: "it has no `-` before its coverage") }
        guard let writer = DeviceID(String(stem[..<dash])) else {
            throw BaselineNameError(name: name, reason: "it does not start with its writer's UUID")
        }
        let digits = stem[stem.index(after: dash)...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let coverage = UInt64(digits) else {
            throw BaselineNameError(name: name, reason: "its coverage is not a whole number")
        }
        self.init(writer: writer, coverage: coverage, form: form)
    }

    /// The name, or nil for a name that is not a baseline's.
    public static func parse(_ name: String) -> BaselineFileName? { try? BaselineFileName(parsing: name) }

    /// `<writer>-<coverage>.<baseline|json>`.
    public var description: String { "\(writer)-\(coverage).\(form.rawValue)" }

    /// By writer, then coverage, then form.
    public static func < (lhs: BaselineFileName, rhs: BaselineFileName) -> Bool {
        (lhs.writer, lhs.coverage, lhs.form.rawValue) < (rhs.writer, rhs.coverage, rhs.form.rawValue)
    }
}

/// A file name in `baselines/` that is not a baseline's.
public struct BaselineNameError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name refused.
    public let name: String
    /// What is wrong with it.
    public let reason: String

    public var description: String { "\(name) is not a baseline's name (`<writer>-<coverage>.baseline`): \(reason)" }
}
