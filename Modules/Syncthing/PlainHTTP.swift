#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A request the nudge sends: a method, an `http://` URL and headers, no body.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var url: URL
    public var headers: [String: String]

    public init(method: String, url: URL, headers: [String: String] = [:]) {
        self.method = method
        self.url = url
        self.headers = headers
    }
}

/// Why a plain HTTP request failed.
public struct PlainHTTPError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// HTTP/1.1 over a TCP socket, for Syncthing's REST API on this host: one request per
/// connection, no body, the status line read and the rest ignored.
///
/// Written by hand (Docs/DECISIONS.md): `URLSession` on Linux lives in FoundationNetworking,
/// which loads libcurl and some thirty libraries behind it into every process at start-up (a
/// third of a command's start-up time) and keeps the binaries from linking the Swift runtime
/// statically on a machine without libcurl's development files. Syncthing's API is plain HTTP
/// on a local address unless its GUI is set to TLS; then the address says `https://` and this
/// client refuses it with a message that says what to do.
public enum PlainHTTP {
    /// Sends `request` and returns the response's status code; gives up after `timeout`.
    public static func send(_ request: HTTPRequest, timeout: Duration = .seconds(10)) throws(PlainHTTPError) -> Int {
        guard let scheme = request.url.scheme?.lowercased() else { throw PlainHTTPError("\(request.url) has no scheme (http://host:port)") }
        guard scheme == "http" else {
            throw PlainHTTPError(
                "\(request.url.absoluteString) uses \(scheme): the nudge speaks plain HTTP to Syncthing's API on this host; "
                    + "give an http:// address (Syncthing's GUI setting \"Use HTTPS\" off) or leave the nudge off")
        }
        guard var host = request.url.host, !host.isEmpty else { throw PlainHTTPError("\(request.url) names no host") }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = request.url.port ?? 80
        var target = request.url.path.isEmpty ? "/" : request.url.path
        if let query = request.url.query { target += "?" + query }
        var head = "\(request.method) \(target) HTTP/1.1\r\nHost: \(request.url.host ?? host):\(port)\r\n"
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            guard !name.contains(where: \.isNewline), !value.contains(where: \.isNewline) else {
                throw PlainHTTPError("header \(name) holds a line break")
            }
            head += "\(name): \(value)\r\n"
        }
        head += "Content-Length: 0\r\nConnection: close\r\n\r\n"
        let deadline = ContinuousClock.now + timeout
        let socket = try connect(host: host, port: port, deadline: deadline)
        defer { close(socket) }
        try write(Array(head.utf8), to: socket, deadline: deadline)
        return try readStatus(socket, deadline: deadline)
    }

    private static func connect(host: String, port: Int, deadline: ContinuousClock.Instant) throws(PlainHTTPError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let first = found else {
            throw PlainHTTPError("cannot resolve \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            let socket = Glibc.socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), address.pointee.ai_protocol)
            guard socket >= 0 else {
                lastError = String(cString: strerror(errno))
                continue
            }
            if Glibc.connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return socket }
            if errno == EINPROGRESS, wait(socket, for: Int16(POLLOUT), until: deadline) {
                var problem: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                if getsockopt(socket, SOL_SOCKET, SO_ERROR, &problem, &length) == 0, problem == 0 { return socket }
                lastError = String(cString: strerror(problem))
            } else {
                lastError = errno == EINPROGRESS ? "timed out" : String(cString: strerror(errno))
            }
            close(socket)
        }
        throw PlainHTTPError("cannot connect to \(host):\(port): \(lastError)")
    }

    /// Waits until `socket` is ready for `events`; false on timeout or error.
    private static func wait(_ socket: Int32, for events: Int16, until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return false }
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            var entry = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0, errno == EINTR { continue }
            if ready < 0 { return false }
        }
    }

    private static func write(_ bytes: [UInt8], to socket: Int32, deadline: ContinuousClock.Instant) throws(PlainHTTPError) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                sent += count
            } else if count < 0, errno == EAGAIN || errno == EINTR {
                guard wait(socket, for: Int16(POLLOUT), until: deadline) else { throw PlainHTTPError("timed out sending the request") }
            } else {
                throw PlainHTTPError("cannot send the request: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Reads until the end of the status line and returns its code.
    private static func readStatus(_ socket: Int32, deadline: ContinuousClock.Instant) throws(PlainHTTPError) -> Int {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while !received.contains(UInt8(ascii: "\n")) {
            guard received.count < 8192 else { throw PlainHTTPError("the answer's status line is too long") }
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer.prefix(count)
            } else if count == 0 {
                break
            } else if errno == EAGAIN || errno == EINTR {
                guard wait(socket, for: Int16(POLLIN), until: deadline) else { throw PlainHTTPError("timed out waiting for the answer") }
            } else {
                throw PlainHTTPError("cannot read the answer: \(String(cString: strerror(errno)))")
            }
        }
        let line = String(decoding: received.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let code = Int(parts[1]), (100...599).contains(code) else {
            throw PlainHTTPError("the answer is not HTTP (\(line.prefix(40)))")
        }
        return code
    }
}
