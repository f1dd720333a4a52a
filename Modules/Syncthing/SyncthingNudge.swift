import Foundation
import Logging
import Sync

/// Asks Syncthing to scan each file the device writes into its container
/// (`POST /rest/db/scan?folder=ID&sub=PATH`, header `X-API-Key`), so a new log leaves for the
/// other hosts at once instead of after Syncthing's file watcher delay (at least 1 s).
///
/// Fire and forget: ``containerDidChange(_:)`` only records the path and returns; one task sends
/// the requests, one at a time, with every path that arrived meanwhile in the same request (a
/// burst of saves costs a few requests, not one each). A failed request never fails a save —
/// the file still travels on Syncthing's own scan — and is logged once until a request succeeds
/// again.
public final class SyncthingNudge: ContainerWriteObserver, @unchecked Sendable {
    /// Where to send the nudges.
    public struct Configuration: Sendable, Equatable {
        /// Syncthing's GUI/API address, `http://127.0.0.1:8384`.
        public var address: URL
        public var apiKey: String
        /// The ID of the Syncthing folder that holds the container.
        public var folderID: String
        /// The container's path inside that folder, `""` when the container is the folder.
        public var prefix: String

        public init(address: URL, apiKey: String, folderID: String, prefix: String = "") {
            self.address = address
            self.apiKey = apiKey
            self.folderID = folderID
            self.prefix = prefix
        }

        /// The scan request for `paths` (relative to the container).
        public func scanRequest(_ paths: [String]) -> HTTPRequest? {
            guard var components = URLComponents(url: address.appendingPathComponent("rest/db/scan", isDirectory: false), resolvingAgainstBaseURL: false) else {
                return nil
            }
            let base = prefix.isEmpty ? "" : (prefix.hasSuffix("/") ? prefix : prefix + "/")
            components.queryItems = [URLQueryItem(name: "folder", value: folderID)]
                + paths.map { URLQueryItem(name: "sub", value: base + $0) }
            // URLComponents leaves `+` alone, which a server reads as a space.
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
            guard let url = components.url else { return nil }
            return HTTPRequest(method: "POST", url: url, headers: ["X-API-Key": apiKey])
        }
    }

    /// Sends one request and returns the HTTP status code. Injected so tests need no server.
    public typealias Transport = @Sendable (HTTPRequest) async throws -> Int

    /// Counters, for tests and status lines.
    public struct Statistics: Sendable, Equatable {
        public var requests = 0
        public var pathsSent = 0
        public var failures = 0
    }

    public let configuration: Configuration
    /// Paths per request at most (keeps the URL short).
    public let batchLimit: Int
    private let transport: Transport
    private let logger: Logger
    private let lock = NSLock()
    private var pending: [String] = []
    private var pendingSet: Set<String> = []
    private var running = false
    private var failing = false
    private var statistics = Statistics()
    private var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]

    /// - Parameters:
    ///   - configuration: address, key, folder.
    ///   - logger: failures are logged here (once until a request succeeds again).
    ///   - batchLimit: paths per request at most.
    ///   - transport: sends a request; by default ``PlainHTTP`` with a 10-second timeout.
    public init(configuration: Configuration, logger: Logger, batchLimit: Int = 64, transport: Transport? = nil) {
        self.configuration = configuration
        self.logger = logger
        self.batchLimit = max(1, batchLimit)
        self.transport = transport ?? Self.plainTransport()
    }

    /// A transport over ``PlainHTTP``, on a thread of its own (it blocks until the answer or
    /// the timeout, which must not hold a thread of the cooperative pool).
    public static func plainTransport(timeout: Duration = .seconds(10)) -> Transport {
        let queue = DispatchQueue(label: "multidoc.syncthing-nudge")
        return { request in
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
                queue.async {
                    do {
                        continuation.resume(returning: try PlainHTTP.send(request, timeout: timeout))
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        }
    }

    /// What was sent so far.
    public var sent: Statistics { lock.withLock { statistics } }

    public func containerDidChange(_ relativePath: String) {
        let start: Bool = lock.withLock {
            if pendingSet.insert(relativePath).inserted { pending.append(relativePath) }
            guard !running else { return false }
            running = true
            return true
        }
        if start { Task.detached { [self] in await run() } }
    }

    public func flush(timeout: Duration) async {
        let key = UUID()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle: Bool = lock.withLock {
                if !running { return true }
                waiters[key] = continuation
                return false
            }
            if idle {
                continuation.resume()
                return
            }
            // A Dispatch timer, not a task: the timeout must fire even when every thread of the
            // cooperative pool is busy.
            let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                lock.withLock { waiters.removeValue(forKey: key) }?.resume()
            }
        }
    }

    private func run() async {
        while let batch = nextBatch() {
            await send(batch)
        }
    }

    /// Takes the next paths to send, or marks the sender idle (waking flushers) if there are none.
    private func nextBatch() -> [String]? {
        let (batch, woken): ([String]?, [CheckedContinuation<Void, Never>]) = lock.withLock {
            if pending.isEmpty {
                running = false
                let woken = Array(waiters.values)
                waiters.removeAll()
                return (nil, woken)
            }
            let batch = Array(pending.prefix(batchLimit))
            pending.removeFirst(batch.count)
            pendingSet.subtract(batch)
            return (batch, [])
        }
        for continuation in woken { continuation.resume() }
        return batch
    }

    private func send(_ paths: [String]) async {
        guard let request = configuration.scanRequest(paths) else {
            report(failure: "cannot build a request URL from \(configuration.address)")
            return
        }
        do {
            let status = try await transport(request)
            if (200..<300).contains(status) {
                let recovered: Bool = lock.withLock {
                    statistics.requests += 1
                    statistics.pathsSent += paths.count
                    defer { failing = false }
                    return failing
                }
                if recovered { logger.notice("Syncthing nudge works again", metadata: ["folder": "\(configuration.folderID)"]) }
            } else {
                let hint = status == 403 ? " (wrong API key?)" : status == 404 || status == 500 ? " (unknown folder ID?)" : ""
                report(failure: "Syncthing answered HTTP \(status)\(hint)")
            }
        } catch {
            report(failure: "\(error)")
        }
    }

    private func report(failure: String) {
        let first: Bool = lock.withLock {
            statistics.failures += 1
            defer { failing = true }
            return !failing
        }
        let metadata: Logger.Metadata = [
            "address": "\(configuration.address)", "folder": "\(configuration.folderID)", "detail": "\(failure)",
        ]
        if first {
            logger.warning("Syncthing nudge failed; files still travel on Syncthing's own scan, only slower", metadata: metadata)
        } else {
            logger.debug("Syncthing nudge failed again", metadata: metadata)
        }
    }
}
