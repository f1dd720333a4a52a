import AppSupport
import Engine
import Foundation
import Settings
import Testing
import TestSupport

/// The rules for a device root and its container, where every front end meets them: the
/// set-up (`init`, the first-run screen), the resolved device, and `settings set`.
@Suite struct DevicePathTests {
    @Test func aContainerIsComparedWithTheRootWhereverItIsAndHoweverItIsSpelt() throws {
        let folder = try TemporaryDirectory("device-paths")
        defer { folder.remove() }
        let shared = folder.appending("shared"), root = folder.appending("dev")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        // A link to the container is the container: a root under it is inside it.
        let link = folder.appending("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: shared)
        let under = #expect(throws: EngineError.self) {
            try DeviceSetup.checkPlaces(root: link.appendingPathComponent("devZ"), container: shared)
        }
        #expect(under?.description.contains("is inside the container folder \(shared.path)") == true, "\(String(describing: under))")
        #expect(AppError(try #require(under)).exitCode == 6)
        // Spellings with `.` and `..` of one folder are one folder.
        #expect(throws: EngineError.self) { try DeviceSetup.checkPlaces(root: shared, container: folder.appending("dev/../shared/.")) }
        // Side by side is fine, even when a name starts like the other's.
        try DeviceSetup.checkPlaces(root: folder.appending("shared-dev"), container: shared)
        try DeviceSetup.checkPlaces(root: root, container: shared)

        let device = try DeviceInit(rootPath: root.path, environment: ["HOME": folder.url.path])
        #expect(try device.container("~/shared") == .folder(URL(fileURLWithPath: shared.path)))
        #expect(throws: EngineError.self) { try device.container("~/dev/sub") }
        #expect(throws: EngineError.self) { try device.container("~/dev") }
        #expect(throws: EngineError.self) { try device.container("~/shared\u{7F}") }
        // The first-run screen refuses the same paths on its container field, making nothing.
        guard case .refused(field: 1, let message) = device.submit(name: "Desk", container: "~/dev/sub", flags: [:], confirmed: nil) else {
            Issue.record("a container inside the root was not refused")
            return
        }
        #expect(message.contains("inside the device root"))
        #expect(!FileManager.default.fileExists(atPath: root.path))
    }

    @Test func settingTheContainerIsCheckedAsInitChecksIt() throws {
        let folder = try TemporaryDirectory("device-paths")
        defer { folder.remove() }
        let shared = folder.appending("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: true)
        let setup = try DeviceInit(rootPath: folder.appending("dev").path, environment: [:])
            .apply(deviceName: "Desk", container: .folder(shared))
        let file = folder.appending("file")
        try Data("x".utf8).write(to: file)
        for refused in [file, setup.root.url, setup.root.url.appendingPathComponent("sub")] {
            #expect(throws: EngineError.self, "\(refused.path)") { try setup.setSetting(.container, to: .text(refused.path)) }
        }
        #expect(try setup.settingsFile.read()[.container] == .text(shared.path))
        try setup.setSetting(.container, to: .text(""))
        #expect(try setup.settingsFile.read()[.container] == .text(""))
    }

    @Test func theCommandLinesContainerMeansWhatTheSettingMeans() throws {
        #expect(try DeviceSetup.containerOption("none") == nil)
        #expect(try DeviceSetup.containerOption(" None ") == nil)
        #expect(try DeviceSetup.containerOption("/srv/shared") == "/srv/shared")
        #expect(throws: EngineError.self) { try DeviceSetup.containerOption("") }
        #expect(throws: EngineError.self) { try DeviceSetup.containerOption("/srv/sh\nared") }
        #expect(throws: EngineError.self) { try DeviceSetup.checkRootPath("") }
        #expect(AppError(EngineError.badPath("--root is empty")).exitCode == 64)
    }

    @Test func aSetUpThatFailsTakesAwayTheRootItMade() throws {
        let folder = try TemporaryDirectory("device-paths")
        defer { folder.remove() }
        let root = folder.appending("dev")
        // The clock variable is read once the root is being made: a late failure.
        let device = try DeviceInit(rootPath: root.path, environment: [DeviceSetup.clockOffsetVariable: "later"])
        #expect(throws: EngineError.self) { try device.apply(deviceName: "Desk", container: DeviceInit.ContainerChoice.none) }
        #expect(!FileManager.default.fileExists(atPath: root.path))
        // A folder that was there and empty is left empty.
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let inEmpty = try DeviceInit(rootPath: root.path, environment: [DeviceSetup.clockOffsetVariable: "later"])
        #expect(throws: EngineError.self) { try inEmpty.apply(deviceName: "Desk", container: DeviceInit.ContainerChoice.none) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)
    }
}
