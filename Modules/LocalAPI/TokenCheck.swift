import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Every request must carry the root's token: `Authorization: Bearer TOKEN`, or the
/// `multidoc-token` cookie that `GET /?token=TOKEN` sets (then the browser is sent on to `/`,
/// so the token leaves its address bar). Anything else is 401: JSON under `/api/`, the login
/// form elsewhere.
struct TokenCheck: RouterMiddleware {
    typealias Context = BasicRequestContext
    static let cookie = "multidoc-token"
    let token: String

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.path == "/", let given = request.uri.queryParameters["token"] {
            guard matches(String(given)) else { return refuse(request, wrong: true) }
            var response = Response(status: .seeOther, headers: [.location: "/"])
            response.setCookie(Cookie(name: Self.cookie, value: token, path: "/", httpOnly: true, sameSite: .strict))
            return response
        }
        let header = request.headers[.authorization]
        let bearer = header.flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst("Bearer ".count)) : nil }
        let cookie = request.cookies[Self.cookie]?.value
        guard bearer.map(matches) == true || cookie.map(matches) == true else {
            return refuse(request, wrong: header != nil || cookie != nil)
        }
        return try await next(request, context)
    }

    /// Compares without stopping at the first difference, so the time taken says nothing of the token.
    private func matches(_ given: String) -> Bool {
        let left = Array(given.utf8), right = Array(token.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(left, right) { difference |= a ^ b }
        return difference == 0
    }

    private func refuse(_ request: Request, wrong: Bool) -> Response {
        let reason = wrong ? "wrong token" : "no token"
        if request.uri.path.hasPrefix("/api/") {
            var response = ErrorAnswers.answer(
                status: 401, "\(reason): send the header 'Authorization: Bearer TOKEN' with the token in <root>/api-token")
            response.headers[.wwwAuthenticate] = "Bearer"
            return response
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: .unauthorized, headers: headers, body: .init(byteBuffer: ByteBuffer(string: WebPage.login(reason: reason))))
    }
}
