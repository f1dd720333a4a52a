import AppSupport
import Engine
import Foundation
import Logging
import Model
import Settings
import ServiceLifecycle
import Synchronization
import Sync

/// The daemon's work: the engine's ``LiveSync`` (a first full pass, then passes for what the
/// watchers report, a rescan every `--rescan-interval`, the FastSave-off autosave), plus the
/// ping options and the status file. On graceful shutdown it finishes the running pass, ships
/// and closes every document and removes the status file.
struct SyncService: Service {
    let library: DocumentLibrary
    let root: DeviceRoot
    let container: URL
    let options: DaemonOptions
    let statusFile: StatusFile
    let device: String
    let logger: Logger
    var now: @Sendable () -> Date = Date.init
    /// Told every pass's report (the local API's change feed, for stalls).
    var onPass: (@Sendable (SyncReport) async -> Void)?

    func run() async throws {
        var status = DaemonStatus(
            pid: ProcessInfo.processInfo.processIdentifier, startedAt: now(), root: root.url.path, container: container.path,
            device: device, documents: await library.documentCount())
        write(status)
        let state = PassState(status: status)

        do {
            await state.setInspected(try await inspectIfKnown())
        } catch {
            await state.fail(error)
        }
        let live = LiveSync(
            library: library,
            configuration: .init(rescanInterval: options.rescanInterval, autosaveInterval: options.autosaveInterval, settle: options.documentsSettle),
            logger: logger
        ) { pass in
            await self.record(pass, state: state)
        }
        var helpers: [Task<Void, Never>] = []
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
                        live.stop()
                        return
                    }
                }
            })
        }
        if await state.failure != nil { live.stop() }
        try await live.run()
        logger.notice("stopping")

        helpers.forEach { $0.cancel() }
        await library.inspect(nil)
        await library.flushAll()
        await library.closeAll()
        statusFile.remove()
        status = await state.status
        logger.notice("stopped", metadata: ["passes": "\(status.passes)", "pingsSent": "\(status.pingsSent)"])
        if let failure = await state.failure { throw failure }
    }

    /// After each pass: the status file, problems as they appear, and (after the first) the
    /// inspected document and its ping.
    private func record(_ pass: LiveSync.Pass, state: PassState) async -> LiveSync.Next {
        var status = await state.status
        let report = pass.report
        await onPass?(report)
        status.record(report, at: now())
        // Problems are logged when they appear, not on every pass; a full pass forgets the
        // ones that went away, so they are logged again if they come back.
        let known = await state.knownProblems
        for problem in report.problems where !known.contains(problem) {
            logger.warning("sync problem", metadata: ["detail": "\(problem)"])
        }
        await state.setKnownProblems(pass.documents == nil ? Set(report.problems) : known.union(report.problems))
        logger.debug("sync pass", metadata: [
            "scope": "\(pass.documents.map { "\($0.count) document(s)" } ?? "full")",
            "imported": "\(report.importedLogs)", "onArrival": "\(report.importedOnArrival)", "exported": "\(report.exportedLogs)",
            "ms": "\(pass.duration.milliseconds)",
        ])
        var next = LiveSync.Next.goOn
        if pass.number == 1, let query = options.inspect {
            do {
                if await !state.inspected { await state.setInspected(try await inspectIfKnown()) }
                guard await state.inspected else { throw EngineError.unknownDocument(query) }
                if options.startPing {
                    try await library.startPing()
                    logger.notice("ping started", metadata: ["document": "\(query)"])
                }
            } catch {
                await state.fail(error)
                next = .stop
            }
        }
        if await state.failure != nil { next = .stop }
        let counts = await library.pingCounts
        (status.pingsSent, status.pingsAnswered) = (counts.sent, counts.answered)
        status.documents = await library.knownDocumentCount()
        if await state.inspected, status.inspecting == nil, let query = options.inspect {
            status.inspecting = (try? await library.resolve(query)).map { "\($0.name) (\($0.id))" } ?? query
        }
        write(status)
        await state.set(status)
        return next
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

    private func write(_ status: DaemonStatus) {
        do {
            try statusFile.write(status)
        } catch {
            logger.error("cannot write the status file", metadata: ["error": "\(error)"])
        }
    }
}

/// What the daemon keeps between passes.
actor PassState {
    private(set) var status: DaemonStatus
    private(set) var inspected = false
    private(set) var failure: (any Error)?
    private(set) var knownProblems: Set<SyncProblem> = []

    init(status: DaemonStatus) { self.status = status }

    func set(_ status: DaemonStatus) { self.status = status }
    func setInspected(_ value: Bool) { inspected = value }
    func fail(_ error: any Error) { if failure == nil { failure = error } }
    func setKnownProblems(_ problems: Set<SyncProblem>) { knownProblems = problems }
}

extension Duration {
    /// Whole milliseconds, for logs.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
