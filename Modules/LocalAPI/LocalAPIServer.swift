import Foundation
import HTTPTypes
import Hummingbird
import Logging
import MultidocKit
import NIOCore
import OpenAPIHummingbird
import OpenAPIRuntime
import ServiceLifecycle

/// The daemon's local API and web page: JSON over HTTP on 127.0.0.1 only, every request
/// checked against the root's token (``TokenCheck``), bodies over ``maximumBody`` refused
/// (413), a body it cannot decode explained in plain words (``BadBody``), every failure
/// answered as JSON with its status (``ErrorAnswers``). The operations
/// are `openapi.yaml`'s, generated at build time and served by ``APIHandlers``; the page
/// (``WebPage``) is `GET /`.
public struct LocalAPIServer: Service {
    /// The largest request body taken, in bytes.
    public static let maximumBody = 1 << 20

    private let application: Application<RouterResponder<BasicRequestContext>>
    private let device: MultidocDevice

    /// - Parameters:
    ///   - device: the device the operations act on.
    ///   - token: the root's token (`<root>/api-token`); every request must carry it.
    ///   - port: the TCP port on 127.0.0.1; 0 for any free one.
    ///   - onListening: told the port once the server listens.
    /// - Throws: when the generated handlers cannot be registered (a broken `openapi.yaml`).
    public init(
        device: MultidocDevice, token: String, port: Int, logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws {
        self.device = device
        let router = Router()
        router.add(middleware: ErrorAnswers(logger: logger))
        router.add(middleware: TokenCheck(token: token))
        router.add(middleware: BodyLimit(maximum: Self.maximumBody))
        router.add(middleware: BadBody())
        try APIHandlers(device: device).registerHandlers(on: router)
        router.get("/") { _, _ in WebPage.response() }
        application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port), serverName: "multidocd"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    /// Serves until graceful shutdown, which first ends the open change feeds (a server waits
    /// for its requests to finish, and a feed never would).
    public func run() async throws {
        let device = device
        try await withGracefulShutdownHandler {
            try await application.run()
        } onGracefulShutdown: {
            Task { await device.close() }
        }
    }
}

/// Every failure becomes the `Error` JSON with its status, never a dropped connection: a
/// request the generated code cannot decode is 400, a route that does not exist 404, a body
/// too large 413.
struct ErrorAnswers: RouterMiddleware {
    typealias Context = BasicRequestContext
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError {
            return Self.answer(status: Int(error.status.code), error.body ?? error.status.reasonPhrase)
        } catch let error as APIFailure {
            return Self.answer(status: error.status, error.message)
        } catch {
            // The generated code throws for a request it cannot decode that ``BadBody`` did not
            // explain; the decoder's words name Swift types, so they go to the debug log only.
            logger.debug("bad request", metadata: ["path": "\(request.uri.path)", "error": "\(Self.reason(error))"])
            let cause = (error as? ServerError)?.causeDescription ?? "the request is not what this path takes"
            return Self.answer(status: 400, "bad request: \(cause)")
        }
    }

    /// What was wrong, without the request (its description carries the token's header).
    static func reason(_ error: any Error) -> String {
        let text = (error as? ServerError).map { "\($0.causeDescription): \($0.underlyingError)" } ?? "\(error)"
        return text.count > 500 ? String(text.prefix(500)) + "…" : text
    }

    static func answer(status: Int, _ message: String) -> Response {
        let payload: [String: any Sendable] = ["error": message, "status": status]
        let data = (try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Bodies over `maximum` bytes are refused with 413 before any handler reads them.
struct BodyLimit: RouterMiddleware {
    typealias Context = BasicRequestContext
    let maximum: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maximum {
            throw APIFailure(status: 413, message: "the request body is \(length) bytes; the most taken is \(maximum)")
        }
        guard [.post, .put, .patch].contains(request.method) else { return try await next(request, context) }
        var request = request
        do {
            _ = try await request.collectBody(upTo: maximum)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIFailure(status: 413, message: "the request body is over \(maximum) bytes")
        }
        return try await next(request, context)
    }
}
