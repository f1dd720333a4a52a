import AppSupport
import ArgumentParser
import Engine
import FileIO
import Foundation
import Logging
import Model
import Settings
import Storage
import Testing
import TestSupport

/// The app layer the three executables share: one exit-code table, one options group, one
/// set-up, a scope that always closes.
@Suite struct AppLayerTests {
    @Test func everyModuleErrorHasOneStatus() {
        #expect(AppError(EngineError.unknownDocument("x")).status == .unknownDocument)
        #expect(AppError(EngineError.rootMissing("/r", hint: "multidoc init")).exitCode == 6)
        #expect(AppError(EngineError.containerMissing("/c")).exitCode == 7)
        #expect(AppError(EngineError.saveRefused(document: "d", detail: "too big")).exitCode == 14)
        #expect(AppError(SettingsError.unknownKey("Nope")).exitCode == 13)
        #expect(AppError(StoreError(.busy, path: "/s", detail: "locked")).status == .busy)
        // A failed write is 10 in every front end (the CLI once said 1, the daemon 10).
        let write = AppError(FileIOError(path: "/p", operation: "fsync", errno: EIO))
        #expect(write.exitCode == 10)
        #expect(write.cause is FileIOError)
        struct Other: Error {}
        #expect(AppError(Other()).status == .failure)
        // An AppError passes through unchanged, cause and all.
        let usage = AppError(.usage, "bad flag", cause: write)
        #expect(AppError(usage).status == .usage && AppError(usage).cause is AppError)
    }

    @Test func theHelpListsTheCodesInOrder() {
        #expect(ExitStatus.help([.usage, .ok, .rootUnusable]) == "Exit codes: 0 ok, 6 missing or unusable device root, 64 bad usage.")
        #expect(Set(ExitStatus.allCases.map(\.rawValue)).count == ExitStatus.allCases.count)
    }

    @Test func theOptionsGroupParsesEverySetting() throws {
        let options = try DeviceOptions.parse([
            "--root", "/r", "--fast-save", "off", "--store", "json", "--device-name", "Desk", "--syncthing-key", "k",
        ])
        let flags = try options.settingFlags()
        #expect(options.root == "/r")
        #expect(flags[.fastSave] == .bool(false))
        #expect(flags[.store] == .text("json"))
        #expect(flags[.deviceName] == .text("Desk"))
        #expect(flags[.syncthingKey] == .text("k"))
        #expect(throws: SettingsError.self) { try DeviceOptions.parse(["--fast-save", "maybe"]).settingFlags() }
        // Every value option the group declares is in the list that may come before a verb.
        let help = DeviceOptions.helpMessage()
        for name in DeviceOptions.valueOptionNames { #expect(help.contains(name), "\(name) is not in the group's help") }
        #expect(CommandLineShape.longOptions(inHelp: help).allSatisfy { DeviceOptions.valueOptionNames.contains($0) || $0 == "--help" })
    }

    @Test func secretsAreMaskedWhereverSettingsAreShown() throws {
        let settings = try ResolvedSettings(flags: [.syncthingKey: .text("hunter2")], hostName: "h")
        #expect(!settings.logLine().contains("hunter2"))
        #expect(settings.logLine().contains("SyncthingKey=(set)"))
        #expect(settings.all.first { $0.key == .syncthingKey }?.shown == "(set)")
        #expect(try ResolvedSettings(hostName: "h").all.first { $0.key == .syncthingKey }?.shown != "(set)")
    }

    @Test func settingUpRemembersNameAndContainerAndMakesNothingWhenRefused() throws {
        let folder = try TemporaryDirectory("app-layer")
        defer { folder.remove() }
        let environment = ["HOME": folder.url.path]
        let root = folder.appending("dev")
        let missing = folder.appending("shared")

        let device = try DeviceInit(rootPath: root.path, environment: environment)
        #expect(device.isNew)
        // `~/` is the user's home; a folder that is not there is refused before the root is made.
        #expect(try device.container("~/shared") == .missing(missing))
        #expect(throws: AppError.self) { try device.apply(deviceName: "Desk", container: .missing(missing)) }
        #expect(!FileManager.default.fileExists(atPath: root.path))
        #expect(try device.container("none") == DeviceInit.ContainerChoice.none)

        try DeviceInit.create(missing)
        let setup = try device.apply(deviceName: "Desk", container: try device.container("~/shared"))
        #expect(setup.settings.deviceName == "Desk")
        #expect(setup.container?.path == missing.path)
        #expect(setup.settings.entries[.container]?.source == .file)

        // Again on the existing root: what was remembered is offered, and `none` forgets the container.
        let again = try DeviceInit(rootPath: root.path, environment: environment)
        #expect(!again.isNew && again.suggestedName == "Desk" && again.suggestedContainer == missing.path)
        let local = try again.apply(deviceName: nil, container: DeviceInit.ContainerChoice.none)
        #expect(local.container == nil && local.settings.deviceName == "Desk")
        let file = folder.appending("file")
        try Data().write(to: file)
        #expect(throws: EngineError.self) { try again.container(file.path) }
    }

    @Test func theScopeClosesWhatItOpenedWhenTheCommandFails() async throws {
        let folder = try TemporaryDirectory("app-layer")
        defer { folder.remove() }
        let setup = try DeviceSetup(
            rootPath: folder.appending("dev").path, containerPath: nil, flags: [:], environment: [:], createRoot: true)
        var logger = Logger(label: "app-layer-tests")
        logger.logLevel = .critical
        let library = setup.openLibrary(logger: logger)
        let document = try await library.create(name: try DocumentName(typed: "Doc"))
        let written = try await library.detail(document.id).text
        await library.closeAll()
        struct Failed: Error {}
        await #expect(throws: Failed.self) {
            try await library.closing { library -> Int in
                _ = try await library.detail(document.id)
                #expect(await library.openDocumentCount() > 0)
                throw Failed()
            }
        }
        #expect(await library.openDocumentCount() == 0)
        let text = try await library.closing { try await $0.detail(document.id).text }
        #expect(text == written)
        #expect(await library.openDocumentCount() == 0)
    }
}
