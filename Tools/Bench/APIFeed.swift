#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Engine
import Foundation
import Model

/// An edit made through device A's local API until device B's change feed (Server-Sent
/// Events, read as they arrive on a socket) shows its import: what a program watching B sees.
/// Two daemons with `--local-api 0`; HTTP spoken over plain loopback sockets, one connection
/// per edit, as a script would.
enum APIFeed {
    /// Adds `api.edit.feed.p50` (held to ≤ 2× `new.viewable.p50` of the same run, measured here
    /// when the run did not) and `api.edit.feed.max`.
    static func measure(
        _ programs: Programs, folder: URL, store: String, edits: Int, viewableP50: Double?, table: inout Table
    ) async throws {
        var reference = viewableP50
        if reference == nil {
            progress("new on A → viewable on B, for the API's reference …")
            let viewable = try await Scenarios.newToViewable(folder: folder.appendingPathComponent("new"), store: store, documents: 10)
            reference = LatencyStatistics(milliseconds: viewable)?.p50Ms
        }
        progress("an edit through A's local API until B's change feed shows it, \(edits) edits …")
        let samples = try await editToFeed(programs, folder: folder, store: store, edits: edits)
        guard let stats = LatencyStatistics(milliseconds: samples), let reference, reference > 0 else {
            throw BenchError("the API's edit → feed measured nothing")
        }
        let ratio = stats.p50Ms / reference
        table.row(
            "api.edit.feed.p50",
            "edit through A's local API → B's change feed (SSE), p50; value: × new.viewable.p50 (\(String(format: "%.2f ms vs %.2f ms", stats.p50Ms, reference)))",
            value: ratio, unit: "× new.viewable", text: String(format: "%.2f× (%.2f ms)", ratio, stats.p50Ms),
            milliseconds: stats.p50Ms, target: Target("≤ 2×", atMost: 2))
        table.row("api.edit.feed.max", "edit through A's local API → B's change feed (SSE), max", ms: stats.maxMs)
    }

    static func editToFeed(_ programs: Programs, folder: URL, store: String, edits: Int) async throws -> [Double] {
        let space = try Workspace(folder)
        let (_, a) = try space.library("A", store: store)
        let document = try await a.create(name: try DocumentName("Edited"))
        await a.sync()
        await a.closeAll()
        let (_, b) = try space.library("B", store: store)
        await b.sync()
        await b.closeAll()
        func daemon(_ device: String) throws -> Child {
            try Child(programs.multidocd, [
                "--root", space.root(device).path, "--container", space.container.path, "--device-name", device, "--store", store,
                "--local-api", "0", "--log-level", "notice", "--log-file", "-",
            ], log: folder.appendingPathComponent("multidocd-\(device).log"))
        }
        let daemonA = try daemon("A"), daemonB = try daemon("B")
        defer {
            kill(daemonA.process.processIdentifier, SIGTERM)
            kill(daemonB.process.processIdentifier, SIGTERM)
        }
        let portA = try await port(of: daemonA), portB = try await port(of: daemonB)
        let tokenA = try token(space.root("A")), tokenB = try token(space.root("B"))

        let feed = try Loopback.connect(port: portB)
        defer { close(feed) }
        try Loopback.send(feed, "GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(tokenB)\r\n\r\n")
        let (arrivals, arrival) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
        let (ready, readySignal) = AsyncStream.makeStream(of: Void.self)
        let marker = #""document":"\#(document.id)","from":["A"],"kind":"imported""#
        DispatchQueue.global().async {
            var pending = Data()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = read(feed, &buffer, buffer.count)
                guard count > 0 else { break }
                let now = ContinuousClock.now
                pending.append(contentsOf: buffer[0..<count])
                while let end = pending.range(of: Data("\n\n".utf8)) {
                    let event = String(decoding: pending[pending.startIndex..<end.lowerBound], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex..<end.upperBound)
                    if event.hasSuffix(": ready") { readySignal.yield() }
                    if event.contains(marker) { arrival.yield(now) }
                }
            }
            arrival.finish()
            readySignal.finish()
        }
        var readyWait = ready.makeAsyncIterator()
        guard await readyWait.next() != nil else { throw BenchError("B's change feed closed before it was ready") }

        var samples: [Double] = []
        var waiting = arrivals.makeAsyncIterator()
        let body = #"{"kind":"insert","at":0,"text":"x"}"#
        for _ in 0..<edits {
            let start = ContinuousClock.now
            let status = try Loopback.request(
                port: portA, "POST /api/documents/\(document.id)/edits", token: tokenA, body: body)
            guard status == 204 else { throw BenchError("an edit through A's API answered \(status)") }
            guard let seen = await waiting.next() else { throw BenchError("B's change feed ended before the edit arrived") }
            samples.append((seen - start).milliseconds)
        }
        return samples
    }

    /// The port from the daemon's "local API listening" line.
    private static func port(of daemon: Child) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let log = (try? String(contentsOf: daemon.log, encoding: .utf8)) ?? ""
            if let match = log.firstMatch(of: /address=http:\/\/127\.0\.0\.1:(\d+)/), let port = Int(match.1) {
                return port
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw BenchError("the daemon's local API did not start; log in \(daemon.log.path)")
    }

    private static func token(_ root: URL) throws -> String {
        try String(contentsOf: root.appendingPathComponent("api-token"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// HTTP/1.1 over a TCP socket to 127.0.0.1, just enough for the benchmark.
enum Loopback {
    static func connect(port: Int) throws -> Int32 {
        guard let port16 = UInt16(exactly: port) else { throw BenchError("bad port \(port)") }
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw BenchError("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port16.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw BenchError("connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        var on: Int32 = 1
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        return socket
    }

    static func send(_ socket: Int32, _ text: String) throws {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
            guard written > 0 else { throw BenchError("write: \(String(cString: strerror(errno)))") }
            bytes = bytes.dropFirst(written)
        }
    }

    /// One request on a connection of its own (`Connection: close`); the response's status.
    static func request(port: Int, _ line: String, token: String, body: String) throws -> Int {
        let socket = try connect(port: port)
        defer { close(socket) }
        try send(socket, "\(line) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(socket, &buffer, buffer.count)
            guard count > 0 else { break }
            response.append(contentsOf: buffer[0..<count])
        }
        let head = String(decoding: response.prefix(64), as: UTF8.self)
        guard let match = head.firstMatch(of: /^HTTP\/1\.1 (\d{3})/), let status = Int(match.1) else {
            throw BenchError("not an HTTP response: \(head)")
        }
        return status
    }
}
