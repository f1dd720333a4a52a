import Foundation
import Logging
import Model
import ServiceLifecycle
import Settings
import Synchronization
import Sync

/// Keeps one library in step with its container and with the device's other processes, for as
/// long as it runs: the daemon's work, the TUI's background sync, and the CLI's long-running
/// verbs (`sync --watch`, `inspect`, `demo`) all run this one service.
///
/// - The container's watcher names the documents whose files arrived: a targeted pass for
///   them, at once (files this device wrote never wake it). A change outside a document's
///   folder, or lost events, asks for a full pass. The watcher is made again when the container
///   comes back after it went away (its watches died with the folder).
/// - The device's `Documents/` watcher settles bursts, then asks for a pass on a document only
///   when its record file is one this library did not write itself (another process created,
///   renamed or deleted it). Store files never wake it: their changes are noted, and with
///   FastSave off the autosave tick ships what other processes saved.
/// - A full pass every `rescanInterval` is the safety net, never the way it learns of changes;
///   a pass where nothing changed costs a few `stat` calls per document.
///
/// Runs until its task is cancelled, graceful shutdown is triggered, or `onPass` says stop;
/// the pass in progress is finished first. What the caller does on the way out (ship, close)
/// is the caller's.
public struct LiveSync: Service {
    public struct Configuration: Sendable {
        /// The safety-net full pass.
        public var rescanInterval: Duration
        /// How often FastSave-off saves are shipped (the seed's autosave).
        public var autosaveInterval: Duration
        /// How long changes in the device's `Documents/` settle before they are looked at (a
        /// process creating a document writes its record before its store).
        public var settle: Duration
        /// How often a missing or unwatched container is looked for.
        public var containerPoll: Duration

        public init(
            rescanInterval: Duration = .seconds(600), autosaveInterval: Duration = .seconds(2),
            settle: Duration = .milliseconds(150), containerPoll: Duration = .seconds(2)
        ) {
            self.rescanInterval = rescanInterval
            self.autosaveInterval = autosaveInterval
            self.settle = settle
            self.containerPoll = containerPoll
        }
    }

    /// One pass that ran: its number (from 1), what it looked at (nil: everything) and its report.
    public struct Pass: Sendable {
        public let number: Int
        public let documents: Set<DocumentID>?
        public let report: SyncReport
        public let duration: Duration
    }

    /// What to do after a pass.
    public enum Next: Sendable {
        case goOn
        case stop
    }

    private let library: DocumentLibrary
    private let configuration: Configuration
    private let logger: Logger
    private let onPass: @Sendable (Pass) async -> Next
    private let loop: SyncLoop

    /// - Parameters:
    ///   - library: the library to keep in step; its configuration names the container and root.
    ///   - onPass: called after every pass (status files, counters, stop conditions).
    public init(
        library: DocumentLibrary, configuration: Configuration = Configuration(), logger: Logger = Logger(label: "multidoc.livesync"),
        onPass: @escaping @Sendable (Pass) async -> Next = { _ in .goOn }
    ) {
        self.library = library
        self.configuration = configuration
        self.logger = logger
        self.onPass = onPass
        self.loop = SyncLoop(device: library.identity.id)
    }

    /// Asks for a full pass now (the daemon's SIGHUP, a user's "sync now").
    public func requestFullPass() { loop.requestFullPass() }

    /// Ends ``run()`` after the pass in progress.
    public func stop() { loop.finish() }

    public func run() async throws {
        let loop = loop, library = library, configuration = configuration, logger = logger
        let root = library.configuration.root
        let containerWatch = library.configuration.container.map { ContainerWatch(container: $0, loop: loop, logger: logger) }
        let documents = DocumentsWatch(library: library, documents: root.documentsDirectory, loop: loop, settle: configuration.settle, logger: logger)
        await library.prepareSpareStores()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: configuration.rescanInterval)
                    if !Task.isCancelled { loop.requestFullPass() }
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: configuration.autosaveInterval)
                    // Saves that wait in an outbox: this process's with FastSave off, and other
                    // processes' of this device (whatever their FastSave).
                    if !Task.isCancelled { await library.shipWaitingSaves() }
                }
            }
            if let containerWatch {
                group.addTask {
                    // The container's watch dies with its folder (unmounted, replaced): look for
                    // it again, and when it comes back, a full pass ships what waited.
                    while !Task.isCancelled {
                        if containerWatch.ensure() { loop.requestFullPass() }
                        try? await Task.sleep(for: configuration.containerPoll)
                    }
                }
            }
            group.addTask { await documents.forward() }

            var count = 0
            _ = await withGracefulShutdownHandler {
                await withTaskCancellationHandler {
                    await loop.run { batch in
                        let started = ContinuousClock.now
                        let report = await library.sync(documents: batch.target, arrivals: batch.arrivals)
                        count += 1
                        let pass = Pass(number: count, documents: batch.target, report: report, duration: ContinuousClock.now - started)
                        if await onPass(pass) == .stop { loop.finish() }
                    }
                } onCancel: {
                    loop.finish()
                }
            } onGracefulShutdown: {
                loop.finish()
            }
            group.cancelAll()
            documents.stop()
            containerWatch?.stop()
        }
    }
}

/// The container's watcher, made again when the container comes back after it went away (an
/// unmounted disk, a replaced folder): inotify watches die with the folder they watch.
final class ContainerWatch: Sendable {
    private struct State {
        var watcher: ContainerWatcher?
        /// How many watchers were made: a watcher's events name the one they come from.
        var made = 0
        var stopped = false
    }

    private let container: URL
    private let loop: SyncLoop
    private let logger: Logger
    private let state = Mutex(State())

    init(container: URL, loop: SyncLoop, logger: Logger) {
        self.container = container
        self.loop = loop
        self.logger = logger
    }

    /// Starts watching if nothing watches the container and it is a folder. Returns true when it
    /// started a watch after the first (the container came back).
    func ensure() -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: container.path, isDirectory: &isDirectory), isDirectory.boolValue else { return false }
        return state.withLock { state -> Bool in
            guard state.watcher == nil, !state.stopped else { return false }
            let again = state.made > 0
            let number = state.made + 1
            let view = Container(root: container), loop = loop
            do {
                // The loop hears of each file on the watcher's thread: the pass it starts is
                // one task switch away, not two.
                state.watcher = try ContainerWatcher(root: container) { [weak self] event in
                    loop.noteContainer(event, container: view)
                    if event == .rescan, !FileManager.default.fileExists(atPath: view.root.path) { self?.drop(number) }
                }
            } catch {
                logger.warning("cannot watch the container; relying on rescans", metadata: ["error": "\(error)"])
                return false
            }
            state.made = number
            logger.debug("watching the container", metadata: ["path": "\(container.path)"])
            return again
        }
    }

    /// Stops the watcher made `number`th if it is still the one watching (its folder went away).
    private func drop(_ number: Int) {
        let watcher = state.withLock { state -> ContainerWatcher? in
            guard state.made == number else { return nil }
            defer { state.watcher = nil }
            return state.watcher
        }
        watcher?.stop()
    }

    func stop() {
        let watcher = state.withLock { state in
            defer { state.watcher = nil; state.stopped = true }
            return state.watcher
        }
        watcher?.stop()
    }
}

/// The device's `Documents/` watcher: record files another process wrote become targeted
/// passes; store files are noted for the autosave; this library's own writes are ignored.
final class DocumentsWatch: Sendable {
    private let library: DocumentLibrary
    private let documents: URL
    private let loop: SyncLoop
    private let settle: Duration
    private let watcher: ContainerWatcher?

    init(library: DocumentLibrary, documents: URL, loop: SyncLoop, settle: Duration, logger: Logger) {
        self.library = library
        self.documents = documents
        self.loop = loop
        self.settle = settle
        do {
            watcher = try ContainerWatcher(root: documents)
        } catch {
            logger.warning("cannot watch the device's documents; relying on rescans", metadata: ["error": "\(error)"])
            watcher = nil
        }
    }

    /// Forwards settled events until the watcher stops: the first event of a burst starts the
    /// settle time, and everything that arrived by its end is looked at once.
    func forward() async {
        guard let watcher else { return }
        let held = EventBuffer()
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in watcher.events {
                    if held.add(event) { wake.yield() }
                }
                wake.finish()
            }
            group.addTask { [self] in
                for await _ in wakes {
                    try? await Task.sleep(for: settle)
                    let events = held.take()
                    await look(at: events)
                }
            }
        }
    }

    private func look(at events: [ContainerWatcher.Event]) async {
        let base = documents.standardizedFileURL.path + "/"
        var records: Set<DocumentID> = []
        var stores: Set<DocumentID> = []
        var lost = false
        for event in events {
            guard case .changed(let url) = event else { lost = true; continue }
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(base) else { continue }
            let parts = path.dropFirst(base.count).split(separator: "/")
            guard let first = parts.first, let id = DocumentID(String(first)) else { continue }
            if parts.count == 1 || (parts.count == 2 && parts[1] == "document.json") {
                records.insert(id)
            } else if parts.count >= 3 {
                stores.insert(id)
            }
        }
        if lost { loop.requestFullPass() }
        for id in stores { await library.noteStoreChange(id) }
        for id in records where await !library.knowsRecordFile(id) { loop.note(id) }
    }

    func stop() { watcher?.stop() }
}

/// Events held while a burst settles.
final class EventBuffer: Sendable {
    private let events = Mutex<[ContainerWatcher.Event]>([])

    /// Holds one more event; true if it is the first of a burst.
    func add(_ event: ContainerWatcher.Event) -> Bool {
        events.withLock { events in
            events.append(event)
            return events.count == 1
        }
    }

    func take() -> [ContainerWatcher.Event] {
        events.withLock { events in
            defer { events.removeAll() }
            return events
        }
    }
}
