import Engine
import Logging
import Model
import ServiceLifecycle

/// Logs every ``LibraryEvent``, one line each, until graceful shutdown.
struct EventLogService: Service {
    let events: AsyncStream<LibraryEvent>
    let logger: Logger

    func run() async throws {
        // A broken document fails again on every pass; say so once, then at debug level.
        var reported: Set<String> = []
        for await event in events.cancelOnGracefulShutdown() {
            if case .failure(let detail) = event {
                if reported.count > 256 { reported.removeAll() }
                if !reported.insert(detail).inserted {
                    logger.debug("failure again", metadata: ["detail": "\(detail)"])
                    continue
                }
            }
            log(event)
        }
    }

    private func log(_ event: LibraryEvent) {
        switch event {
        case .documentAdded(let summary):
            logger.info("document added", metadata: [
                "name": "\(summary.name)", "uuid": "\(summary.id)", "origin": "\(summary.origin.rawValue)",
                "location": "\(summary.location.rawValue)",
            ])
        case .documentRemoved(let id, let name):
            logger.info("document removed", metadata: ["name": "\(name)", "uuid": "\(id)"])
        case .objectsDidChange(let id, let changes):
            logger.trace("objects changed", metadata: ["uuid": "\(id)", "objects": "\(changes.updated.count)"])
        case .didSave(let id, let changes):
            logger.debug("saved", metadata: ["uuid": "\(id)"].merging(Self.counts(changes)) { $1 })
        case .didImport(let id, let changes, let peers):
            logger.info("imported", metadata: ["uuid": "\(id)", "from": "\(peers.joined(separator: ","))"].merging(Self.counts(changes)) { $1 })
        case .becameViewable(let id):
            logger.info("document viewable", metadata: ["uuid": "\(id)"])
        case .downloadProgress(let id, let percent):
            logger.debug("download progress", metadata: ["uuid": "\(id)", "percent": "\(percent)"])
        case .cloudAvailability(let available, let detail):
            if available {
                logger.notice("container available", metadata: ["detail": "\(detail)"])
            } else {
                logger.warning("container unavailable", metadata: ["detail": "\(detail)"])
            }
        case .containerChanged(let detail):
            logger.warning("container changed", metadata: ["detail": "\(detail)"])
        case .quarantined(let file):
            logger.warning("quarantined", metadata: ["file": "\(file)"])
        case .recovered(let id, let report):
            logger.notice("document recovered", metadata: ["uuid": "\(id)", "report": "\(report)"])
        case .failure(let detail):
            logger.error("failure", metadata: ["detail": "\(detail)"])
        }
    }

    private static func counts(_ changes: ChangeSummary) -> Logger.Metadata {
        ["inserted": "\(changes.inserted.count)", "updated": "\(changes.updated.count)", "deleted": "\(changes.deleted.count)"]
    }
}
