/// Where a setting's value came from. Precedence, highest first: flag, environment, file, default.
public enum SettingSource: String, Sendable, Codable, CaseIterable {
    case flag
    case environment
    case file
    case `default`
}

/// One setting with its value and where the value came from.
public struct ResolvedSetting: Sendable, Equatable {
    public let key: SettingKey
    public let value: SettingValue
    public let source: SettingSource

    /// The value as listings, logs and status lines show it: a secret that is set reads
    /// `(set)`, never its text. The one place secrets are masked.
    public var shown: String {
        key.isSecret && value != .text("") ? "(set)" : value.description
    }
}

/// The settings in force for one device, resolved from flags, environment, file and defaults.
public struct ResolvedSettings: Sendable, Equatable {
    public let entries: [SettingKey: ResolvedSetting]

    /// Resolves every key.
    /// - Parameters:
    ///   - flags: values given on the command line (already parsed).
    ///   - environment: the process environment; `MULTIDOC_*` variables are read from it.
    ///   - file: the values in the settings file.
    ///   - hostName: the default device name.
    /// - Throws: ``SettingsError/badEnvironmentValue(variable:key:value:expected:)`` for a bad environment value.
    public init(
        flags: [SettingKey: SettingValue] = [:],
        environment: [String: String] = [:],
        file: [SettingKey: SettingValue] = [:],
        hostName: String
    ) throws(SettingsError) {
        var entries: [SettingKey: ResolvedSetting] = [:]
        for key in SettingKey.allCases {
            if let value = flags[key] {
                entries[key] = ResolvedSetting(key: key, value: value, source: .flag)
            } else if let raw = environment[key.environmentName] {
                do {
                    entries[key] = ResolvedSetting(key: key, value: try key.parse(raw), source: .environment)
                } catch .badValue(_, let value, let expected) {
                    throw .badEnvironmentValue(variable: key.environmentName, key: key, value: value, expected: expected)
                }
            } else if let value = file[key] {
                entries[key] = ResolvedSetting(key: key, value: value, source: .file)
            } else {
                entries[key] = ResolvedSetting(key: key, value: key.defaultValue(hostName: hostName), source: .default)
            }
        }
        self.entries = entries
    }

    /// Every setting, in the order of ``SettingKey/allCases``.
    public var all: [ResolvedSetting] { SettingKey.allCases.compactMap { entries[$0] } }

    /// Every setting as `Key=value`, secrets masked (``ResolvedSetting/shown``), for one log line.
    public func logLine(withSources: Bool = false) -> String {
        all.map { "\($0.key.rawValue)=\($0.shown)" + (withSources ? "(\($0.source.rawValue))" : "") }.joined(separator: " ")
    }

    public subscript(key: SettingKey) -> SettingValue {
        entries[key]?.value ?? key.defaultValue(hostName: "localhost")
    }

    public func bool(_ key: SettingKey) -> Bool { self[key].boolValue ?? false }

    public var fastSave: Bool { bool(.fastSave) }
    public var enablePing: Bool { bool(.enablePing) }
    public var copyContainerOnSegue: Bool { bool(.copyContainerOnSegue) }
    public var attemptErrorRecovery: Bool { bool(.attemptErrorRecovery) }
    public var useCloud: Bool { bool(.useCloud) }
    public var deviceName: String { self[.deviceName].textValue ?? "localhost" }
    public var store: String { self[.store].textValue ?? "sqlite" }
    /// The daemon's local API port (0: any free port), nil when the API is off.
    public var localAPIPort: Int? { self[.localAPI].textValue.flatMap { Int($0) } }
    /// An optional text setting (the Syncthing ones): nil when unset.
    public func optionalText(_ key: SettingKey) -> String? {
        guard let text = self[key].textValue, !text.isEmpty else { return nil }
        return text
    }
}
