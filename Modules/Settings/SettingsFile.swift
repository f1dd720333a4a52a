import FileIO
import Foundation

/// The per-device settings file: `settings.json` in the device root, human-readable JSON with
/// sorted keys. Only keys the user set are written; the rest keep their registered defaults.
public struct SettingsFile: Sendable {
    public static let fileName = "settings.json"

    public let url: URL

    public init(deviceRoot: URL) {
        self.url = deviceRoot.appendingPathComponent(Self.fileName, isDirectory: false)
    }

    /// The values in the file. A missing file is an empty set of values, not an error.
    /// - Throws: ``SettingsError/damagedFile(path:detail:)`` if the file is not a JSON object of
    ///   known keys with valid values. The file is never reset.
    public func read() throws(SettingsError) -> [SettingKey: SettingValue] {
        let data: Data
        do {
            data = try AtomicFile.read(url)
        } catch {
            if error.isMissing { return [:] }
            throw .damagedFile(path: url.path, detail: error.description)
        }
        let raw: [String: FileValue]
        do {
            raw = try JSONDecoder().decode([String: FileValue].self, from: data)
        } catch {
            let detail = (try? JSONSerialization.jsonObject(with: data)) == nil
                ? "not valid JSON" : "expected a JSON object of settings with true/false or text values"
            throw .damagedFile(path: url.path, detail: detail)
        }
        var values: [SettingKey: SettingValue] = [:]
        for (name, value) in raw {
            guard let key = SettingKey(rawValue: name) else {
                throw .damagedFile(path: url.path, detail: "unknown key '\(name)'")
            }
            switch (key.kind, value) {
            case (.bool, .bool(let flag)):
                values[key] = .bool(flag)
            case (_, .text(let text)):
                do { values[key] = try key.parse(text) } catch { throw .damagedFile(path: url.path, detail: error.description) }
            default:
                throw .damagedFile(path: url.path, detail: "wrong type for \(name)")
            }
        }
        return values
    }

    /// Replaces the file atomically with `values`.
    public func write(_ values: [SettingKey: SettingValue]) throws(SettingsError) {
        var object: [String: Any] = [:]
        for (key, value) in values {
            switch value {
            case .bool(let flag): object[key.rawValue] = flag
            case .text(let text): object[key.rawValue] = text
            }
        }
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            try AtomicFile.makeDirectory(url.deletingLastPathComponent())
            try AtomicFile.write(data + Data("\n".utf8), to: url)
        } catch {
            throw .unwritable(path: url.path, detail: "\(error)")
        }
    }

    /// Sets one key, keeping the others.
    public func set(_ key: SettingKey, to value: SettingValue) throws(SettingsError) {
        var values = try read()
        values[key] = value
        try write(values)
    }
}

private enum FileValue: Decodable {
    case bool(Bool)
    case text(String)
    /// A number, array, object or null: never valid, reported by key.
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let text = try? container.decode(String.self) {
            self = .text(text)
        } else {
            self = .other
        }
    }
}
