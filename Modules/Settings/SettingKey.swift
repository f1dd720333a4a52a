import Foundation

/// The settings a device has: the seed's four switches (Settings.bundle), UseCloud, the device
/// name, the container folder, the storage backend for new documents and SQLite's journal mode, and the optional Syncthing nudge (API address,
/// API key, folder ID, or Syncthing's config.xml to read them from), and the daemon's local API.
public enum SettingKey: String, CaseIterable, Sendable, Codable {
    case fastSave = "FastSave"
    case enablePing = "EnablePing"
    case copyContainerOnSegue = "CopyContainerOnSegue"
    case attemptErrorRecovery = "AttemptErrorRecovery"
    case useCloud = "UseCloud"
    case deviceName = "DeviceName"
    case container = "Container"
    case store = "Store"
    case journal = "Journal"
    case syncthingAddress = "SyncthingAddress"
    case syncthingKey = "SyncthingKey"
    case syncthingFolder = "SyncthingFolder"
    case syncthingConfig = "SyncthingConfig"
    case localAPI = "LocalAPI"

    /// What values the key takes.
    public enum Kind: Sendable, Equatable {
        case bool
        case text
        case choice([String])
        /// Text that may be unset: the empty text, typed as `none` (or an empty string).
        case optionalText
        /// An HTTP address (`http://host:port`, `https://…`, or `host:port`), or unset.
        case optionalAddress
        /// `off`, `on` (the default port), or a TCP port number (0: any free port).
        case offOrPort
    }

    public var kind: Kind {
        switch self {
        case .fastSave, .enablePing, .copyContainerOnSegue, .attemptErrorRecovery, .useCloud: .bool
        case .deviceName: .text
        case .store: .choice(["sqlite", "json"])
        case .journal: .choice(["wal", "rollback"])
        case .syncthingAddress: .optionalAddress
        case .container, .syncthingKey, .syncthingFolder, .syncthingConfig: .optionalText
        case .localAPI: .offOrPort
        }
    }

    /// Whether the value is a secret that listings should not print in full (the API key).
    public var isSecret: Bool { self == .syncthingKey }

    /// The registered default, in force even when no settings file was ever written
    /// (seed 001 lost its `FastSave = YES` default exactly there).
    /// `DeviceName`'s default is the host name, supplied by the caller.
    public func defaultValue(hostName: String) -> SettingValue {
        switch self {
        case .fastSave: .bool(true)
        case .enablePing: .bool(false)
        case .copyContainerOnSegue: .bool(false)
        case .attemptErrorRecovery: .bool(false)
        case .useCloud: .bool(true)
        case .deviceName: .text(hostName)
        case .store: .text("sqlite")
        case .journal: .text("wal")
        case .container, .syncthingAddress, .syncthingKey, .syncthingFolder, .syncthingConfig: .text("")
        case .localAPI: .text("off")
        }
    }

    /// The environment variable that overrides the file: `MULTIDOC_FAST_SAVE` and so on.
    public var environmentName: String {
        var result = "MULTIDOC_"
        for (index, character) in rawValue.enumerated() {
            if character.isUppercase, index > 0 { result.append("_") }
            result.append(contentsOf: character.uppercased())
        }
        return result
    }

    /// One line on what the setting does.
    public var summary: String {
        switch self {
        case .fastSave: "ship each save's log before the save returns (off: coalesce and ship on an autosave interval)"
        case .enablePing: "answer a peer's change to the inspected document with a ping (latency measurement)"
        case .copyContainerOnSegue: "copy the container into Documents/copyOfCloudContainer when a document's detail opens"
        case .attemptErrorRecovery: "move a damaged store aside and rebuild it from the container"
        case .useCloud: "ship documents through the shared container (off: keep them local)"
        case .deviceName: "the name this device shows to peers and in new documents"
        case .container: "the shared container folder this device syncs through (none: documents stay on this device)"
        case .store: "storage backend for new documents: sqlite or json"
        case .journal: "SQLite journal mode: wal (default, faster commits) or rollback (seed 004's choice)"
        case .syncthingAddress: "Syncthing's API address (http://127.0.0.1:8384) to ask for a scan of each file written (none: no nudge)"
        case .syncthingKey: "Syncthing's API key (none: read it from SyncthingConfig)"
        case .syncthingFolder: "ID of the Syncthing folder holding the container (none: found in SyncthingConfig)"
        case .syncthingConfig: "path of Syncthing's config.xml: address, key and folder not set otherwise are read from it"
        case .localAPI: "multidocd's HTTP API and web page on 127.0.0.1: off, on (port \(Self.defaultLocalAPIPort)) or a port (0: any free port)"
        }
    }

    /// Finds a key by name, ignoring case, `-` and `_` (`fast-save`, `FASTSAVE`, `FastSave`).
    public static func named(_ name: String) throws(SettingsError) -> SettingKey {
        let wanted = Self.normalize(name)
        guard let key = allCases.first(where: { Self.normalize($0.rawValue) == wanted }) else {
            throw SettingsError.unknownKey(name)
        }
        return key
    }

    private static func normalize(_ name: String) -> String {
        name.lowercased().filter { $0 != "-" && $0 != "_" }
    }

    /// Parses a value typed by a person or read from the environment.
    public func parse(_ text: String) throws(SettingsError) -> SettingValue {
        switch kind {
        case .bool:
            switch text.lowercased() {
            case "1", "true", "yes", "on": return .bool(true)
            case "0", "false", "no", "off": return .bool(false)
            default: throw SettingsError.badValue(key: self, value: text, expected: SettingValue.boolSpellings)
            }
        case .text:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, trimmed.utf8.count <= 255,
                  !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw SettingsError.badValue(key: self, value: text, expected: ["a non-empty name of at most 255 bytes without control characters"])
            }
            return .text(trimmed)
        case .choice(let choices):
            let lowered = text.lowercased()
            guard choices.contains(lowered) else {
                throw SettingsError.badValue(key: self, value: text, expected: choices)
            }
            return .text(lowered)
        case .optionalText:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.lowercased() == "none" { return .text("") }
            guard trimmed.utf8.count <= 4096,
                  !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw SettingsError.badValue(key: self, value: text, expected: ["none", "text of at most 4096 bytes without control characters"])
            }
            return .text(trimmed)
        case .optionalAddress:
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.lowercased() == "none" { return .text("") }
            guard let address = Self.normalizedAddress(trimmed) else {
                throw SettingsError.badValue(key: self, value: text, expected: ["none", "http://HOST:PORT", "https://HOST:PORT", "HOST:PORT"])
            }
            return .text(address)
        case .offOrPort:
            let lowered = text.trimmingCharacters(in: .whitespaces).lowercased()
            switch lowered {
            case "off", "no", "false", "none", "": return .text("off")
            case "on", "yes", "true": return .text(String(Self.defaultLocalAPIPort))
            default:
                guard lowered.count <= 5, let port = Int(lowered), (0...65_535).contains(port) else {
                    throw SettingsError.badValue(key: self, value: text, expected: ["off", "on", "a port from 0 to 65535"])
                }
                return .text(String(port))
            }
        }
    }

    /// The local API's port when `LocalAPI` is `on`.
    public static let defaultLocalAPIPort = 7_471

    /// `host:port` becomes `http://host:port`; a trailing `/` goes. Nil unless the result is an
    /// http or https address with a host.
    static func normalizedAddress(_ text: String) -> String? {
        var address = text.contains("://") ? text : "http://" + text
        while address.hasSuffix("/") { address.removeLast() }
        guard let url = URL(string: address), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty, url.path.isEmpty || url.path == "/", url.query == nil else { return nil }
        return address
    }
}

/// A setting's value.
public enum SettingValue: Hashable, Sendable, CustomStringConvertible {
    case bool(Bool)
    case text(String)

    static let boolSpellings = ["on", "off", "true", "false", "yes", "no", "1", "0"]

    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var textValue: String? { if case .text(let value) = self { value } else { nil } }

    public var description: String {
        switch self {
        case .bool(let value): value ? "on" : "off"
        case .text(let value): value.isEmpty ? "none" : value
        }
    }
}

import Foundation
