import AppSupport
import Engine
import Foundation
import LocalAPI
import Logging
import Model
import MultidocKit
import ServiceLifecycle
import Settings
import Syncthing
import UnixSignals

/// The built daemon: its services in one group, and the root's lock.
struct Daemon: Sendable {
    let group: ServiceGroup
    let lock: DaemonLock

    /// Runs until SIGTERM/SIGINT or, with `--exit-when-pings-done`, until the pings are sent.
    /// `stopSignals` traps them from the daemon's first moment: one that came while it was
    /// still starting shuts it down as gracefully as a later one (exit 0).
    func run(stoppingOn stopSignals: UnixSignalsSequence) async throws {
        defer { lock.release() }
        let group = self.group
        let forward = Task {
            for await _ in stopSignals { await group.triggerGracefulShutdown() }
        }
        defer { forward.cancel() }
        try await group.run()
    }
}

/// The one bootstrap: root and lock, then DeviceSetup → the real stores → the library → the
/// services. Nothing below reaches for a global.
func bootstrap(_ options: DaemonOptions) async throws -> Daemon {
    let logger = Logger(label: "multidocd")
    let root = try DeviceSetup.root(options.rootPath, environment: options.environment, create: false)
    // The lock comes before anything writes to the root, so a second daemon changes nothing.
    let lock = try DaemonLock.acquire(for: root)

    let setup = try DeviceSetup(
        rootPath: root.url.path, containerPath: options.containerPath, flags: options.settingFlags,
        environment: options.environment, createRoot: false)
    guard let container = setup.container else {
        throw AppError(
            .usage, "no container: pass --container DIR, set MULTIDOC_CONTAINER, or remember one with: multidoc settings set Container DIR")
    }
    if let missing = setup.missingContainer { throw missing }
    let library = setup.openLibrary(logger: Logger(label: "multidoc.engine"), keepsSpareStores: true) { message in
        // Nobody is there to ask: keep every document and stop syncing with the new container.
        Logger(label: "multidocd").warning("container changed; staying local", metadata: ["detail": "\(message)"])
        return .stayLocal
    }
    let events = await library.events()
    logger.notice("starting", metadata: [
        "pid": "\(ProcessInfo.processInfo.processIdentifier)", "root": "\(root.url.path)", "container": "\(container.path)",
        "device": "\(setup.identity.name)", "deviceID": "\(setup.identity.id)",
        "settings": "\(setup.settings.logLine())",
        "nudge": "\(((try? SyncthingNudge.Configuration.resolve(setup.settings, container: container)) ?? nil).map { "\($0.address) folder \($0.folderID)" } ?? "off")",
    ])

    var sync = SyncService(
        library: library, root: root, container: container, options: options,
        statusFile: StatusFile(url: root.daemonStatusURL), device: setup.identity.name, logger: logger)
    // The local API (LocalAPI setting, read at start): the same library through MultidocKit's
    // public API, served on 127.0.0.1; its change feed hears of stalls from the passes.
    var api: LocalAPIServer?
    if let port = setup.settings.localAPIPort {
        let token = try APIToken.loadOrCreate(root: root.url)
        let device = await MultidocDevice(library: library)
        sync.onPass = { report in await device.record(report) }
        let tokenPath = APIToken.url(root: root.url).path
        api = try LocalAPIServer(device: device, token: token, port: port, logger: logger) { port in
            logger.notice("local API listening", metadata: ["address": "http://127.0.0.1:\(port)", "token": "\(tokenPath)"])
        }
    }
    let reload = ReloadService(
        library: library, settingsFile: setup.settingsFile, flags: options.settingFlags,
        environment: options.environment, signals: await UnixSignalsSequence(trapping: .sighup), logger: logger)
    let eventLog = EventLogService(events: events, logger: logger)
    // Graceful shutdown runs in reverse order: the API stops first (its change feeds end), then
    // sync, the event log last.
    var configuration = ServiceGroupConfiguration(
        services: [
            .init(service: eventLog, serviceName: "events"),
            .init(service: reload, serviceName: "reload"),
            .init(service: sync, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: "sync"),
        ] + (api.map { [.init(service: $0, serviceName: "api")] } ?? []),
        logger: logger)
    configuration.maximumGracefulShutdownDuration = .seconds(30)
    return Daemon(group: ServiceGroup(configuration: configuration), lock: lock)
}
