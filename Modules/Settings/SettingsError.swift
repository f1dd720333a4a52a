import Model

/// A setting that cannot be read or set, in words a user can act on.
public enum SettingsError: Error, Equatable, Sendable, CustomStringConvertible {
    case unknownKey(String)
    case badValue(key: SettingKey, value: String, expected: [String])
    /// A bad value that came from an environment variable (named, so the user knows where to look).
    case badEnvironmentValue(variable: String, key: SettingKey, value: String, expected: [String])
    /// The settings file exists but is not a settings file this build can read.
    case damagedFile(path: String, detail: String)
    case unwritable(path: String, detail: String)

    public var description: String {
        switch self {
        case .unknownKey(let key):
            "unknown setting '\(key)'"
                + Suggestions.phrase(Suggestions.closest(to: key, among: SettingKey.allCases.map(\.rawValue)))
                + " (valid keys: \(SettingKey.allCases.map(\.rawValue).joined(separator: ", ")))"
        case .badValue(let key, let value, let expected):
            "bad value '\(value)' for \(key.rawValue); expected \(expected.joined(separator: ", "))"
        case .badEnvironmentValue(let variable, let key, let value, let expected):
            "bad value '\(value)' for \(key.rawValue) in the environment variable \(variable); expected \(expected.joined(separator: ", "))"
        case .damagedFile(let path, let detail):
            "settings file \(path) is damaged (\(detail)); fix or remove it, it was left as it is"
        case .unwritable(let path, let detail):
            "cannot write settings file \(path): \(detail)"
        }
    }
}
