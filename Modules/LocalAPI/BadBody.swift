import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OpenAPIRuntime

/// A body the generated code cannot decode is answered 400 with one line in plain words: the
/// body is not JSON, not an object, or which field is wrong and what it must be. The decoder's
/// own words name Swift types and coding keys, so they go to the debug log only. Runs after
/// ``BodyLimit``, which has collected the body, so it can be read again here.
struct BadBody: RouterMiddleware {
    typealias Context = BasicRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ServerError where [.post, .put, .patch].contains(request.method) {
            let body = try? await request.body.collect(upTo: LocalAPIServer.maximumBody)
            let message = BodyRules.problem(
                method: request.method, path: request.uri.path, contentType: request.headers[.contentType],
                body: body.map { Data($0.readableBytesView) })
            guard let message else { throw error }
            context.logger.debug("bad request body", metadata: ["path": "\(request.uri.path)", "error": "\(error.underlyingError)"])
            throw APIFailure.badRequest(message)
        }
    }
}

/// What each operation's body must hold (`openapi.yaml`'s schemas, in words), and what is wrong
/// with a body that does not.
enum BodyRules {
    /// What a field must be.
    enum Rule {
        case string(String)
        case oneOf([String])
        case wholeNumber(String)

        /// "a string: …", "one of …": what a value must be, in the words a user reads.
        var requirement: String {
            switch self {
            case .string(let what): "a string: \(what)"
            case .oneOf(let values): "one of \(values.joined(separator: ", "))"
            case .wholeNumber(let range): "a whole number \(range)"
            }
        }

        /// "`name` must be …".
        func expectation(of name: String) -> String { "`\(name)` must be \(requirement)" }

        func accepts(_ value: Any) -> Bool {
            switch self {
            case .string: value is String
            case .oneOf(let values): (value as? String).map(values.contains) ?? false
            case .wholeNumber:
                // JSON's true and false arrive as numbers whose type is "c"; they are no position.
                (value as? NSNumber).map { String(cString: $0.objCType) != "c" && $0 as? Int != nil } ?? false
            }
        }
    }

    /// An edit's position and length, which the handler checks again for their range.
    static let position = Rule.wholeNumber("from 0 to the text's length")
    static let length = Rule.wholeNumber("from 0 up: how many characters to remove")

    struct Field {
        let name: String
        let required: Bool
        let rule: Rule
    }

    /// The fields of the body `method path` takes, in the order a user is told about them;
    /// nil for a request without a JSON body.
    static func fields(method: HTTPRequest.Method, path: String) -> [Field]? {
        let parts = path.split(separator: "/").map(String.init)
        switch (method, parts.count, parts.last) {
        case (.post, 2, "documents") where parts.first == "api":
            return [Field(name: "name", required: false, rule: .string("the new document's name"))]
        case (.patch, 3, _) where parts.prefix(2) == ["api", "documents"]:
            return [Field(name: "name", required: true, rule: .string("the document's new name"))]
        case (.put, 4, "text"):
            return [
                Field(name: "text", required: true, rule: .string("the document's new text")),
                Field(name: "editedFrom", required: true, rule: .string("the text the editor started from")),
            ]
        case (.post, 4, "edits"):
            return [
                Field(name: "kind", required: true, rule: .oneOf(["insert", "delete", "replace"])),
                Field(name: "at", required: true, rule: position),
                Field(name: "length", required: false, rule: length),
                Field(name: "text", required: false, rule: .string("the text to insert")),
            ]
        case (.post, 2, "restore") where parts.first == "api":
            return [Field(name: "document", required: true, rule: .string("the deleted document's name or UUID"))]
        default:
            return nil
        }
    }

    /// One line on what is wrong with `body` for `method path`; nil when the request takes no
    /// JSON body.
    static func problem(method: HTTPRequest.Method, path: String, contentType: String?, body: Data?) -> String? {
        guard let fields = fields(method: method, path: path) else { return nil }
        guard let contentType, contentType.lowercased().hasPrefix("application/json") else {
            return "the body must be JSON, sent with the header Content-Type: application/json"
        }
        guard let body, !body.isEmpty else { return "the request has no body; send a JSON object" }
        guard let parsed = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else {
            return "the body is not JSON; send a JSON object"
        }
        guard let object = parsed as? [String: Any] else { return "the body must be a JSON object, not \(kind(of: parsed))" }
        for field in fields {
            guard let value = object[field.name], !(value is NSNull) else {
                if field.required { return "`\(field.name)` is missing; it must be \(field.rule.requirement)" }
                continue
            }
            if !field.rule.accepts(value) { return field.rule.expectation(of: field.name) }
        }
        return "the body is not what this request takes; see openapi.yaml for its fields"
    }

    private static func kind(of value: Any) -> String {
        switch value {
        case is [Any]: "an array"
        case is String: "a string"
        case is NSNull: "null"
        default: "a single value"
        }
    }
}
