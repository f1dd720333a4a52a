import Foundation
import Settings
import Testing

@Suite struct SettingsResolutionTests {
    @Test func registeredDefaultsApplyWithoutAFile() throws {
        let settings = try ResolvedSettings(hostName: "hosty")
        #expect(settings.fastSave == true)
        #expect(settings.enablePing == false)
        #expect(settings.copyContainerOnSegue == false)
        #expect(settings.attemptErrorRecovery == false)
        #expect(settings.useCloud == true)
        #expect(settings.deviceName == "hosty")
        #expect(settings.all.allSatisfy { $0.source == .default })
    }

    @Test func precedenceIsFlagThenEnvironmentThenFileThenDefault() throws {
        let settings = try ResolvedSettings(
            flags: [.fastSave: .bool(true)],
            environment: ["MULTIDOC_FAST_SAVE": "0", "MULTIDOC_ENABLE_PING": "on"],
            file: [.fastSave: .bool(false), .enablePing: .bool(false), .useCloud: .bool(false)],
            hostName: "h"
        )
        #expect(settings.entries[.fastSave]?.source == .flag)
        #expect(settings.fastSave == true)
        #expect(settings.entries[.enablePing]?.source == .environment)
        #expect(settings.enablePing == true)
        #expect(settings.entries[.useCloud]?.source == .file)
        #expect(settings.useCloud == false)
        #expect(settings.entries[.attemptErrorRecovery]?.source == .default)
    }

    @Test func environmentNamesAreScreamingSnakeCase() {
        #expect(SettingKey.fastSave.environmentName == "MULTIDOC_FAST_SAVE")
        #expect(SettingKey.copyContainerOnSegue.environmentName == "MULTIDOC_COPY_CONTAINER_ON_SEGUE")
        #expect(SettingKey.deviceName.environmentName == "MULTIDOC_DEVICE_NAME")
    }

    @Test func badEnvironmentValueIsAnErrorThatNamesTheVariable() {
        let expected = SettingsError.badEnvironmentValue(
            variable: "MULTIDOC_FAST_SAVE", key: .fastSave, value: "maybe", expected: ["on", "off", "true", "false", "yes", "no", "1", "0"])
        #expect(throws: expected) {
            try ResolvedSettings(environment: ["MULTIDOC_FAST_SAVE": "maybe"], hostName: "h")
        }
        #expect(expected.description.contains("MULTIDOC_FAST_SAVE"))
    }

    @Test func unknownKeyListsValidKeys() {
        #expect(throws: SettingsError.unknownKey("Turbo")) { try SettingKey.named("Turbo") }
        let message = SettingsError.unknownKey("Turbo").description
        for key in SettingKey.allCases { #expect(message.contains(key.rawValue)) }
    }

    @Test func keysMatchLoosely() throws {
        #expect(try SettingKey.named("fast-save") == .fastSave)
        #expect(try SettingKey.named("ENABLEPING") == .enablePing)
        #expect(try SettingKey.named("use_cloud") == .useCloud)
    }

    @Test func badValuesListTheValidOnes() {
        let error = #expect(throws: SettingsError.self) { try SettingKey.fastSave.parse("maybe") }
        #expect(error?.description.contains("on, off") == true)
        #expect(throws: SettingsError.self) { try SettingKey.store.parse("postgres") }
        #expect(throws: SettingsError.self) { try SettingKey.deviceName.parse("   ") }
    }
}

@Suite struct SettingsFileTests {
    private func temporaryRoot() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func missingFileIsEmpty() throws {
        let root = try temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        #expect(try SettingsFile(deviceRoot: root).read().isEmpty)
    }

    @Test func setPersistsHumanReadableJSON() throws {
        let root = try temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let file = SettingsFile(deviceRoot: root)
        try file.set(.enablePing, to: .bool(true))
        try file.set(.deviceName, to: .text("iPad B"))
        let values = try file.read()
        #expect(values[.enablePing] == .bool(true))
        #expect(values[.deviceName] == .text("iPad B"))
        let text = try String(contentsOf: file.url, encoding: .utf8)
        #expect(text.contains("\"EnablePing\" : true"))
        let attributes = try FileManager.default.attributesOfItem(atPath: file.url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test(arguments: [
        ("{ not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (#"{"Turbo": true}"#, "unknown key 'Turbo'"),
        (#"{"FastSave": "maybe"}"#, "maybe"),
        (#"{"FastSave": 3}"#, "wrong type"),
    ])
    func damagedFileIsReportedNotReset(contents: String, expected: String) throws {
        let root = try temporaryRoot()
        defer { try? FileManager.default.removeItem(at: root) }
        let file = SettingsFile(deviceRoot: root)
        try Data(contents.utf8).write(to: file.url)
        let error = #expect(throws: SettingsError.self) { try file.read() }
        #expect(error?.description.contains(expected) == true)
        #expect(error?.description.contains(file.url.path) == true)
        #expect(try String(contentsOf: file.url, encoding: .utf8) == contents)
    }
}
