import MultidocKit

/// A request the API refuses: its status and one line saying why, sent as the `Error` JSON.
struct APIFailure: Error, Sendable {
    let status: Int
    let message: String

    static func badRequest(_ message: String) -> APIFailure { APIFailure(status: 400, message: message) }

    init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    /// The status a device's error answers with: 404 not found, 400 invalid, 409 ambiguous,
    /// 503 container, 500 anything else.
    init(_ error: any Error) {
        guard let error = error as? MultidocError else {
            self.init(status: 500, message: "\(error)")
            return
        }
        let status = switch error.kind {
        case .notFound: 404
        case .invalid: 400
        case .ambiguous: 409
        case .container: 503
        case .failed: 500
        }
        self.init(status: status, message: error.description)
    }
}
