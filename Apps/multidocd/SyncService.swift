import Engine
import Foundation
import Logging
import Model
import Settings
import ServiceLifecycle
import Synchronization
import Sync

/// The daemon's work: a first full pass, then a pass per batch of inotify hints (container and
/// the device's Documents), a full rescan every `--rescan-interval`, the FastSave-off autosave,
/// the ping options, and the status file. On graceful shutdown it finishes the running pass,
/// ships and closes every document and removes the status file.
struct SyncService: Service {
    let library: DocumentLibrary
    let root: DeviceRoot
    let container: URL
    let options: DaemonOptions
    let statusFile: StatusFile
    let device: String
    let logger: Logger
    var now: @Sendable () -> Date = Date.init

    func run() async throws {
        let loop = SyncLoop(device: library.identity.id)
        let containerWatch = ContainerWatch(container: container, loop: loop, logger: logger)
        containerWatch.ensure()
        var documentsWatcher: ContainerWatcher?
        var helpers: [Task<Void, Never>] = []
        do {
            let watcher = try ContainerWatcher(root: root.documentsDirectory)
            documentsWatcher = watcher
            // Saves by other processes of this device land here; a pass on that document ships
            // them. Passed on after a short settle: a process creating a document writes its
            // record before its store, and a pass in between would report a missing store
            // (or migrate the new SQLite store at the same time as its creator).
            let settle = SettledForwarder(delay: options.documentsSettle) { event in
                loop.noteDocuments(event, root: root.documentsDirectory)
            }
            helpers.append(Task { for await event in watcher.events { settle.add(event) } })
        } catch {
            logger.warning("cannot watch the device's documents; relying on rescans", metadata: ["error": "\(error)"])
        }
        let rescanInterval = options.rescanInterval
        helpers.append(Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: rescanInterval)
                loop.requestFullPass()
            }
        })
        let autosaveInterval = options.autosaveInterval
        helpers.append(Task { [library] in
            while !Task.isCancelled {
                try? await Task.sleep(for: autosaveInterval)
                if !Task.isCancelled, await !library.settings.fastSave { await library.flushAll() }
            }
        })
        if options.exitWhenPingsDone, let rounds = options.pingRounds {
            helpers.append(Task { [library, logger] in
                // `pingFinished` turns true as the last ping starts saving; wait for `sent` to
                // count it, so shutdown never closes the store under it. A send that failed
                // never counts: give up waiting after a while.
                var finishedSince: ContinuousClock.Instant?
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(50))
                    guard await library.pingFinished else { finishedSince = nil; continue }
                    let counts = await library.pingCounts
                    let since = finishedSince ?? .now
                    finishedSince = since
                    if counts.sent >= rounds || ContinuousClock.now - since > .seconds(2) {
                        logger.notice("pings done; stopping", metadata: ["sent": "\(counts.sent)", "answered": "\(counts.answered)"])
                        loop.finish()
                        return
                    }
                }
            })
        }

        var status = DaemonStatus(
            pid: ProcessInfo.processInfo.processIdentifier, startedAt: now(), running: true, root: root.url.path,
            container: container.path, device: device, containerAvailable: true, documents: root.records().count,
            passes: 0, lastSyncAt: nil, lastImportAt: nil, lastError: nil, lastErrorAt: nil, inspecting: nil,
            pingsSent: 0, pingsAnswered: 0)
        write(status)

        var failure: (any Error)?
        var inspected = false
        do {
            inspected = try await inspectIfKnown()
        } catch {
            failure = error
            loop.finish()
        }
        // Problems are logged when they appear, not on every pass; a full pass forgets the
        // ones that went away, so they are logged again if they come back.
        var knownProblems: Set<String> = []
        _ = await withGracefulShutdownHandler {
            await loop.run { batch in
                let started = ContinuousClock.now
                let report = await library.sync(documents: batch.target)
                status.record(report, at: now())
                for problem in report.problems where !knownProblems.contains(problem) {
                    logger.warning("sync problem", metadata: ["detail": "\(problem)"])
                }
                knownProblems = batch.target == nil ? Set(report.problems) : knownProblems.union(report.problems)
                logger.debug("sync pass", metadata: [
                    "scope": "\(batch.target.map { "\($0.count) document(s)" } ?? "full")",
                    "imported": "\(report.importedLogs)", "exported": "\(report.exportedLogs)",
                    "ms": "\((ContinuousClock.now - started).milliseconds)",
                ])
                if status.passes == 1 { await afterFirstPass(inspected: &inspected, failure: &failure, loop: loop) }
                if report.cloudAvailable { containerWatch.ensure() }
                let counts = await library.pingCounts
                (status.pingsSent, status.pingsAnswered) = (counts.sent, counts.answered)
                status.documents = root.recordCount()
                if inspected, status.inspecting == nil, let query = options.inspect {
                    status.inspecting = (try? await library.resolve(query)).map { "\($0.name) (\($0.id))" } ?? query
                }
                write(status)
            }
        } onGracefulShutdown: {
            logger.notice("stopping")
            loop.finish()
        }

        helpers.forEach { $0.cancel() }
        documentsWatcher?.stop()
        containerWatch.stop()
        await library.inspect(nil)
        await library.flushAll()
        await library.closeAll()
        statusFile.remove()
        logger.notice("stopped", metadata: ["passes": "\(status.passes)", "pingsSent": "\(status.pingsSent)"])
        if let failure { throw failure }
    }

    /// Starts inspecting `--inspect` if the document is known here; false if not (yet).
    /// - Throws: ``EngineError/ambiguousName(_:candidates:)``.
    private func inspectIfKnown() async throws -> Bool {
        guard let query = options.inspect else { return false }
        do {
            let record = try await library.resolve(query)
            await library.inspect(record.id, rounds: options.pingRounds)
            logger.notice("inspecting", metadata: [
                "name": "\(record.name)", "uuid": "\(record.id)", "rounds": "\(options.pingRounds.map(String.init) ?? "unlimited")",
            ])
            return true
        } catch EngineError.unknownDocument {
            return false
        }
    }

    /// After the first pass: inspect a document it discovered, start the ping.
    private func afterFirstPass(inspected: inout Bool, failure: inout (any Error)?, loop: SyncLoop) async {
        guard let query = options.inspect else { return }
        do {
            if !inspected { inspected = try await inspectIfKnown() }
            guard inspected else { throw EngineError.unknownDocument(query) }
            if options.startPing {
                try await library.startPing()
                logger.notice("ping started", metadata: ["document": "\(query)"])
            }
        } catch {
            failure = error
            loop.finish()
        }
    }

    private func write(_ status: DaemonStatus) {
        do {
            try statusFile.write(status)
        } catch {
            logger.error("cannot write the status file", metadata: ["error": "\(error)"])
        }
    }
}

/// The container's watcher, made again when the container comes back after it went away (an
/// unmounted disk, a replaced folder): inotify watches die with the folder they watch.
final class ContainerWatch: Sendable {
    private struct State {
        var watcher: ContainerWatcher?
        var forwarder: Task<Void, Never>?
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

    /// Starts watching if nothing watches the container and it is a folder.
    func ensure() {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: container.path, isDirectory: &isDirectory), isDirectory.boolValue else { return }
        state.withLock { state in
            guard state.watcher == nil else { return }
            let watcher: ContainerWatcher
            do {
                watcher = try ContainerWatcher(root: container)
            } catch {
                logger.warning("cannot watch the container; relying on rescans", metadata: ["error": "\(error)"])
                return
            }
            state.watcher = watcher
            let container = container, loop = loop
            state.forwarder = Task { [weak self] in
                for await event in watcher.events {
                    loop.noteContainer(event, root: container)
                    if event == .rescan, !FileManager.default.fileExists(atPath: container.path) { break }
                }
                self?.drop(watcher)
            }
            logger.debug("watching the container", metadata: ["path": "\(container.path)"])
        }
    }

    private func drop(_ watcher: ContainerWatcher) {
        watcher.stop()
        state.withLock { state in
            if state.watcher === watcher {
                state.watcher = nil
                state.forwarder = nil
            }
        }
    }

    func stop() {
        let (watcher, forwarder) = state.withLock { state in
            defer { state = State() }
            return (state.watcher, state.forwarder)
        }
        forwarder?.cancel()
        watcher?.stop()
    }
}

/// Holds events for `delay`, then hands over all that arrived meanwhile.
final class SettledForwarder: Sendable {
    private let delay: Duration
    private let deliver: @Sendable (ContainerWatcher.Event) -> Void
    private let held = Mutex<(events: [ContainerWatcher.Event], scheduled: Bool)>(([], false))

    init(delay: Duration, deliver: @escaping @Sendable (ContainerWatcher.Event) -> Void) {
        self.delay = delay
        self.deliver = deliver
    }

    func add(_ event: ContainerWatcher.Event) {
        let schedule = held.withLock { held -> Bool in
            held.events.append(event)
            defer { held.scheduled = true }
            return !held.scheduled
        }
        guard schedule else { return }
        Task {
            try? await Task.sleep(for: delay)
            let events = held.withLock { held in
                defer { held = ([], false) }
                return held.events
            }
            events.forEach(deliver)
        }
    }
}

extension Duration {
    /// Whole milliseconds, for logs.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
