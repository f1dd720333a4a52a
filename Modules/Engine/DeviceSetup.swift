import Foundation
import Logging
import Model
import Settings
import Storage
import Sync

/// Everything a front end needs to build a ``DocumentLibrary`` for one device root: where the
/// root and container are, the settings in force (flag > environment > file > default) and
/// the device's identity. Apps call ``makeLibrary(stores:logger:onContainerChange:)`` from their
/// one bootstrap function.
public struct DeviceSetup: Sendable {
    public let root: DeviceRoot
    public let container: URL?
    public let settings: ResolvedSettings
    public let identity: DeviceIdentity
    public let settingsFile: SettingsFile
    /// The device's clock: the system's, moved by `MULTIDOC_CLOCK_OFFSET` seconds (a testing
    /// aid: end-to-end tests give one device a wrong clock, Docs/CLI.md).
    public let now: @Sendable () -> Date

    /// The environment variable that moves the device's clock (seconds, may be negative).
    public static let clockOffsetVariable = "MULTIDOC_CLOCK_OFFSET"

    /// The clock `environment` asks for (``clockOffsetVariable``): the system's when unset.
    /// - Throws: ``EngineError/badEnvironment(variable:detail:)`` for an offset that is not a whole number of seconds
    ///   within a thousand years.
    public static func clock(environment: [String: String]) throws(EngineError) -> @Sendable () -> Date {
        guard let text = environment[clockOffsetVariable], !text.isEmpty else { return Date.init }
        guard let seconds = Int64(text), seconds.magnitude <= 1000 * 366 * 86_400 else {
            throw .badEnvironment(variable: clockOffsetVariable, detail: "'\(text)' is not a whole number of seconds within a thousand years")
        }
        let offset = TimeInterval(seconds)
        return { Date().addingTimeInterval(offset) }
    }

    /// The default device root: `$MULTIDOC_ROOT`, else `$XDG_DATA_HOME/multidoc`, else
    /// `~/.local/share/multidoc`.
    public static func defaultRoot(environment: [String: String]) -> URL {
        if let root = environment["MULTIDOC_ROOT"], !root.isEmpty { return URL(fileURLWithPath: root) }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty {
            return URL(fileURLWithPath: data).appendingPathComponent("multidoc", isDirectory: false)
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share/multidoc", isDirectory: false)
    }

    /// The device root at `rootPath` (nil: ``defaultRoot(environment:)``), ready for use. A
    /// missing root is made only with `create` (`multidoc init`, the demo); otherwise it is
    /// ``EngineError/rootMissing(_:hint:)`` naming the `multidoc init` to run. Every front end
    /// comes through here, the daemon before it takes the root's lock.
    public static func root(_ rootPath: String?, environment: [String: String], create: Bool) throws(EngineError) -> DeviceRoot {
        if let rootPath { try checkRootPath(rootPath) }
        let url = rootPath.map { URL(fileURLWithPath: $0) } ?? defaultRoot(environment: environment)
        if !create, !FileManager.default.fileExists(atPath: url.path) {
            throw .rootMissing(url.path, hint: rootPath == nil ? "multidoc init" : "multidoc init --root '\(url.path)'")
        }
        let root = DeviceRoot(url: url)
        try root.prepare(create: create)
        // The device's signing key is made with the root (an older root gets one on first use).
        if create {
            do { _ = try DeviceKey.loadOrCreate(root.deviceKeyURL) } catch { throw .rootUnusable(url.path, error.description) }
        }
        return root
    }

    /// Resolves a device.
    /// - Parameters:
    ///   - rootPath: `--root`, or nil for ``defaultRoot(environment:)``.
    ///   - containerPath: `--container` (none: no cloud; empty is refused), or nil for the
    ///     `Container` setting (environment `MULTIDOC_CONTAINER`, then the root's settings file).
    ///     A container given here or in the environment is checked against the root
    ///     (``checkPlaces(root:container:)``); the settings file's was checked when it was set.
    ///   - flags: settings given as flags.
    ///   - createRoot: make the root if it is missing (`multidoc init`, the demo); otherwise
    ///     a missing root is ``EngineError/rootMissing(_:hint:)``, naming the command to run.
    /// - Throws: ``EngineError`` or ``SettingsError`` naming the problem.
    public init(
        rootPath: String?, containerPath: String?, flags: [SettingKey: SettingValue],
        environment: [String: String], createRoot: Bool, newUUID: () -> UUID = UUID.init, finishingIdentityChange: Bool = false
    ) throws {
        root = try Self.root(rootPath, environment: environment, create: createRoot)
        now = try Self.clock(environment: environment)
        // A root halfway between two device UUIDs must not save or ship as either.
        if !finishingIdentityChange, let change = try root.pendingIdentityChange() {
            throw EngineError.rootUnusable(
                root.url.path, "its change of device UUID (\(change.old) → \(change.new)) was cut short; finish it with: multidoc device new-identity")
        }
        settingsFile = SettingsFile(deviceRoot: root.url)
        let hostName = DeviceIdentity.hostName
        settings = try ResolvedSettings(flags: flags, environment: environment, file: try settingsFile.read(), hostName: hostName)
        let device = try root.loadDevice(defaultName: hostName, model: DeviceIdentity.systemModel, newID: newUUID)
        identity = DeviceIdentity(id: device.id, name: settings.deviceName, model: device.model)
        let containerValue = if let containerPath { try Self.containerOption(containerPath) } else { settings.optionalText(.container) }
        if let containerValue {
            container = URL(fileURLWithPath: containerValue).standardizedFileURL.resolvingSymlinksInPath()
        } else {
            container = nil
        }
        if let container, containerPath != nil || settings.entries[.container]?.source == .environment {
            try Self.checkPlaces(root: root.url, container: container)
        }
        remembersContainer = device.containerID != nil
        if container == nil, let known = device.containerID {
            warnings.append(
                "this device synced through container \(known.uuidString.prefix(8)) before, and no container is configured now: "
                    + "documents stay on this device; give --container DIR or remember it with: multidoc settings set Container DIR")
        }
    }

    /// Whether this device remembers a container identity (it synced through one before).
    public let remembersContainer: Bool

    /// The container folder configured, when it does not exist and this device never synced
    /// through a container: a wrong path or a folder not made yet, an error to report (exit 7)
    /// rather than a drive that is away. Every front end refuses to start on it; the pass
    /// reports it the same way (``DocumentLibrary/sync(progress:)``).
    public var missingContainer: EngineError? {
        container.flatMap { Self.missingContainer($0, remembered: remembersContainer) }
    }

    /// The one rule: a container folder that is not there is an error when the device
    /// remembers no container identity, and a drive that is away when it does.
    static func missingContainer(_ container: URL, remembered: Bool) -> EngineError? {
        guard !remembered, !FileManager.default.fileExists(atPath: container.path) else { return nil }
        return .containerMissing(container.path)
    }

    /// What the front end should tell the user before it starts (one line each).
    public private(set) var warnings: [String] = []

    /// How stores open on this device: SQLite's journal mode from the `Journal` setting.
    public var storeOptions: StoreOptions {
        StoreOptions(journalMode: settings[.journal].textValue == JournalMode.rollback.rawValue ? .rollback : .wal)
    }

    /// Builds the library with the given stores.
    /// - Parameter containerObserver: told about every file the library writes into the
    ///   container (the Syncthing nudge); nil for none.
    /// - Parameter keepsSpareStores: a long-lived process keeps an empty store made ahead
    ///   (``DocumentLibrary/Configuration/keepsSpareStores``).
    public func makeLibrary(
        stores: StoreProvider, logger: Logger,
        containerObserver: (any ContainerWriteObserver)? = nil,
        onContainerChange: @escaping @Sendable (String) -> ContainerChangeDecision = { _ in .stayLocal },
        keepsSpareStores: Bool = false
    ) -> DocumentLibrary {
        DocumentLibrary(.init(
            root: root, container: container, settings: settings, identity: identity, stores: stores,
            now: now, logger: logger, onContainerChange: onContainerChange, containerObserver: containerObserver,
            keepsSpareStores: keepsSpareStores))
    }

    /// Makes the root `fingerprint` names the only one a container met for the first time is
    /// trusted under (`multidoc init --expect-root`).
    /// - Throws: ``EngineError/trust(_:)`` for a fingerprint short of 16 hex digits or that
    ///   cannot be kept.
    public func expectRoot(_ fingerprint: String) throws(EngineError) {
        let digits = KeyFingerprint.digits(fingerprint)
        guard digits.count >= KeyFingerprint.admissionDigits, digits.allSatisfy(\.isHexDigit) else {
            throw EngineError.trust("'\(fingerprint)' is not a whole fingerprint: give the root's \(KeyFingerprint.admissionDigits) hex digits, as `multidoc device list` shows them on a device that synced with the container")
        }
        let keys = ContainerKeys(device: identity.id, keyURL: root.deviceKeyURL, containerKeyURL: root.containerKeyURL, trustURL: root.trustURL)
        do {
            try keys.pin(nil, for: nil, expected: digits)
        } catch {
            throw EngineError.trust(error.description)
        }
    }

    /// The container as this device sees it, for commands that read it without syncing
    /// (`container verify`, `status`, `copy`): with the device's keys and, for a container it
    /// knows signed, the trust its records say (so files not signed by an admitted device are
    /// named as such).
    /// - Throws: ``EngineError/containerUnavailable(_:)`` without a usable container.
    public func containerView() throws(EngineError) -> Container {
        guard let url = container else {
            throw EngineError.containerUnavailable("no container is configured (--container or MULTIDOC_CONTAINER)")
        }
        let keys = ContainerKeys(device: identity.id, keyURL: root.deviceKeyURL, containerKeyURL: root.containerKeyURL, trustURL: root.trustURL)
        let view = Container(root: url, keys: keys)
        do { try view.checkAvailable() } catch { throw EngineError.containerUnavailable(error.description) }
        if let signingRoot = root.savedDevice()?.signingRoot {
            keys.setPolicy(ContainerPolicy(root: signingRoot))
            view.loadTrust(container: signingRoot.container, remembered: signingRoot)
        }
        return view
    }
}
