import Engine
import Foundation
import Model
import Settings

/// `multidoc settings`: one setting, its value and where the value came from (documented
/// field names).
public struct SettingRow: Encodable, Sendable {
    public var key: String
    public var value: String
    public var source: String
    public var environment: String
    public var summary: String

    /// `masked`: the value as listings show it (a secret that is set reads `(set)`); `settings
    /// get` asks for it whole.
    public init(_ entry: ResolvedSetting, masked: Bool = true) {
        key = entry.key.rawValue
        value = masked ? entry.shown : entry.value.description
        source = entry.source.rawValue
        environment = entry.key.environmentName
        summary = entry.key.summary
    }

    /// The table of `settings list`, header first.
    public static func table(_ rows: [SettingRow]) -> [[String]] {
        [["KEY", "VALUE", "SOURCE", "DESCRIPTION"]] + rows.map { [$0.key, $0.value, $0.source, $0.summary] }
    }

    /// The value typed for `key`, as the settings file keeps it: a container is remembered as an
    /// absolute path, since later commands may run anywhere.
    /// - Throws: ``SettingsError`` when the value is not one `key` takes.
    public static func value(_ typed: String, for key: SettingKey) throws -> SettingValue {
        let parsed = try key.parse(typed)
        if key == .container, case .text(let path) = parsed, !path.isEmpty { return .text(absolutePath(path)) }
        return parsed
    }
}

extension UseCloudChange {
    /// The change in words (`settings set UseCloud`): where the document went, or why it stayed.
    public var lines: [String] {
        (movedTo.map { ["  \(name) → \($0.rawValue)"] } ?? []) + (problem.map { ["  \(name): \($0)"] } ?? [])
    }
}
