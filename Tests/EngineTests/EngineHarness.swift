import Engine
import Foundation
import Logging
import Model
import Settings
import Storage
import TestSupport

/// Devices on one container, each with its own root, built the way the apps build them.
struct EngineHarness {
    let folder: TemporaryDirectory
    let container: URL
    let volume = MemoryVolume()
    let clock = TestClock()

    init() throws {
        folder = try TemporaryDirectory("engine")
        container = folder.appending("container")
        try FileManager.default.createDirectory(at: container, withIntermediateDirectories: true)
    }

    enum Backend: String, CaseIterable, CustomStringConvertible, Sendable {
        case memory, sqlite, json
        var description: String { rawValue }
    }

    /// Builds device `name` (same root for the same name, so "restarting" keeps its files).
    func device(
        _ name: String, backend: Backend = .memory, settings: [SettingKey: SettingValue] = [:],
        container overrideContainer: URL? = nil, noContainer: Bool = false, uuidBase: Int? = nil, stores given: StoreProvider? = nil,
        keepsSpareStores: Bool = false,
        onContainerChange: @escaping @Sendable (String) -> ContainerChangeDecision = { _ in .stayLocal }
    ) throws -> DocumentLibrary {
        var flags: [SettingKey: SettingValue] = [.deviceName: .text(name)]
        if backend != .memory { flags[.store] = .text(backend.rawValue) }
        flags.merge(settings) { _, new in new }
        let uuids = SequentialUUIDs(start: uuidBase ?? (Int(name.unicodeScalars.first?.value ?? 1) * 0x100000))
        let setup = try DeviceSetup(
            rootPath: folder.appending("device-\(name)").path,
            containerPath: noContainer ? nil : (overrideContainer ?? container).path,
            flags: flags, environment: [:], createRoot: true, newUUID: { uuids() })
        var logger = Logger(label: "test.\(name)")
        logger.logLevel = .critical
        let stores: StoreProvider = given ?? (backend == .memory ? volume.provider : .standard())
        let clock = self.clock
        return DocumentLibrary(.init(
            root: setup.root, container: setup.container, settings: setup.settings, identity: setup.identity,
            stores: stores, now: { clock.now() }, newUUID: { uuids() }, logger: logger, onContainerChange: onContainerChange,
            keepsSpareStores: keepsSpareStores))
    }

    func root(_ name: String) -> URL { folder.appending("device-\(name)") }
}
