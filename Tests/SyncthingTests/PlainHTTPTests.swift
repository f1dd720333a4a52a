#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Syncthing
import Testing

/// A one-connection HTTP server on 127.0.0.1: answers with `answer` and keeps what it was sent.
final class OneShotServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var received = ""
    private let done = DispatchSemaphore(value: 0)

    init(answer: String) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard socket >= 0, bound == 0, listen(socket, 1) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        listener = socket
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in
            let connection = accept(listener, nil, nil)
            var text = ""
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !text.contains("\r\n\r\n") {
                let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                text += String(decoding: buffer.prefix(count), as: UTF8.self)
            }
            lock.withLock { received = text }
            _ = Array(answer.utf8).withUnsafeBytes { Glibc.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(connection)
            done.signal()
        }
        thread.start()
    }

    /// What the client sent (after the answer went out).
    func request() -> String {
        done.wait()
        close(listener)
        return lock.withLock { received }
    }
}

@Suite struct PlainHTTPTests {
    @Test func aScanRequestReachesTheServerAndItsStatusComesBack() throws {
        let server = try OneShotServer(answer: "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/rest/db/scan?folder=f&sub=a%2Bb"))
        let status = try PlainHTTP.send(HTTPRequest(method: "POST", url: url, headers: ["X-API-Key": "k"]))
        #expect(status == 403)
        let sent = server.request()
        #expect(sent.hasPrefix("POST /rest/db/scan?folder=f&sub=a%2Bb HTTP/1.1\r\n"))
        #expect(sent.contains("\r\nX-API-Key: k\r\n"))
        #expect(sent.contains("\r\nHost: 127.0.0.1:\(server.port)\r\n"))
    }

    @Test func whatCannotWorkSaysWhy() throws {
        let https = try #require(URL(string: "https://127.0.0.1:8384/rest/db/scan"))
        #expect { try PlainHTTP.send(HTTPRequest(method: "POST", url: https)) } throws: { error in
            "\(error)".contains("plain HTTP") && "\(error)".contains("http://")
        }
        // A port nothing listens on.
        let refused = try #require(URL(string: "http://127.0.0.1:1/"))
        #expect { try PlainHTTP.send(HTTPRequest(method: "POST", url: refused)) } throws: { error in
            "\(error)".contains("cannot connect to 127.0.0.1:1")
        }
    }

    @Test func anAnswerThatIsNotHTTPIsAnError() throws {
        let server = try OneShotServer(answer: "SSH-2.0-OpenSSH\r\n")
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/"))
        #expect(throws: PlainHTTPError.self) { try PlainHTTP.send(HTTPRequest(method: "POST", url: url)) }
        _ = server.request()
        let injected = try #require(URL(string: "http://127.0.0.1:1/"))
        #expect(throws: PlainHTTPError.self) { try PlainHTTP.send(HTTPRequest(method: "POST", url: injected, headers: ["X": "a\r\nEvil: 1"])) }
    }
}
