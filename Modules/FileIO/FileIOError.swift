#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file operation that failed, with the path and the system's reason.
public struct FileIOError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let operation: String
    public let code: Int32
    public let detail: String?

    public init(path: String, operation: String, errno code: Int32, detail: String? = nil) {
        self.path = path
        self.operation = operation
        self.code = code
        self.detail = detail
    }

    public var isMissing: Bool { code == ENOENT }

    public var description: String {
        let reason = detail ?? String(cString: strerror(code))
        return "cannot \(operation) \(path): \(reason)"
    }
}
