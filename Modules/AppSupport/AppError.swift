import Engine
import FileIO
import Model
import Settings
import Storage

/// How a front end ends: the one exit-code table of `multidoc`, `multidoc-tui` and `multidocd`
/// (documented in Docs/CLI.md; each executable's help lists the codes it can return).
public enum ExitStatus: Int32, CaseIterable, Sendable, Comparable {
    case ok = 0
    case failure = 1
    case alreadyRunning = 2
    case unknownDocument = 3
    case ambiguousName = 4
    case invalidName = 5
    case rootUnusable = 6
    case containerUnavailable = 7
    case containerFormat = 8
    case storeFailed = 9
    case writeFailed = 10
    case wrongLocation = 11
    case busy = 12
    case badSetting = 13
    case saveRefused = 14
    case trust = 15
    case usage = 64

    /// A few words on what the code means, for help texts.
    public var meaning: String {
        switch self {
        case .ok: "ok"
        case .failure: "other failure"
        case .alreadyRunning: "already running for this root"
        case .unknownDocument: "unknown document"
        case .ambiguousName: "ambiguous name"
        case .invalidName: "invalid name"
        case .rootUnusable: "missing or unusable device root"
        case .containerUnavailable: "container missing or unavailable"
        case .containerFormat: "container of an unknown format"
        case .storeFailed: "store failed"
        case .writeFailed: "write failed"
        case .wrongLocation: "wrong location for a move"
        case .busy: "busy"
        case .badSetting: "bad setting"
        case .saveRefused: "save refused"
        case .trust: "not admitted, wrong passphrase or unknown device"
        case .usage: "bad usage"
        }
    }

    /// "Exit codes: 0 ok, 1 other failure, …" for the given codes, in numeric order.
    public static func help(_ statuses: some Sequence<ExitStatus>) -> String {
        "Exit codes: " + Set(statuses).sorted().map { "\($0.rawValue) \($0.meaning)" }.joined(separator: ", ") + "."
    }

    public static func < (lhs: ExitStatus, rhs: ExitStatus) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The one error a front end ends with: one line a user can act on, its exit status, and the
/// error it came from (kept for logs and tests). ``init(_:)`` is the one table from any error
/// the modules throw to a status.
public struct AppError: Error, Sendable, CustomStringConvertible {
    public var status: ExitStatus
    public var message: String
    /// The error this one reports, when it reports one.
    public var cause: (any Error & Sendable)?

    public init(_ status: ExitStatus, _ message: String, cause: (any Error & Sendable)? = nil) {
        self.status = status
        self.message = message
        self.cause = cause
    }

    /// Classifies any error: the modules' typed errors by what they mean, anything else as a
    /// plain failure with its own words.
    public init(_ error: any Error) {
        switch error {
        case let error as AppError:
            self = error
        case let error as EngineError:
            self.init(Self.status(of: error), error.description, cause: error)
        case let error as SettingsError:
            self.init(.badSetting, error.description, cause: error)
        case let error as DocumentNameError:
            self.init(.invalidName, error.description, cause: error)
        case let error as StoreError:
            self.init(error.kind == .busy ? .busy : .storeFailed, error.description, cause: error)
        case let error as FileIOError:
            self.init(.writeFailed, error.description, cause: error)
        default:
            self.init(.failure, "\(error)", cause: error)
        }
    }

    public var description: String { message }

    /// The exit code, for `exit(_:)` and ArgumentParser's `ExitCode`.
    public var exitCode: Int32 { status.rawValue }

    static func status(of error: EngineError) -> ExitStatus {
        switch error {
        case .unknownDocument, .notInTrash, .notInHistory: .unknownDocument
        case .ambiguousName: .ambiguousName
        case .invalidName: .invalidName
        case .rootUnusable, .rootMissing: .rootUnusable
        case .containerUnavailable, .containerMissing: .containerUnavailable
        case .containerFormat: .containerFormat
        case .storeFailed, .damagedFile: .storeFailed
        case .io: .writeFailed
        case .notInCloud, .alreadyInCloud: .wrongLocation
        case .busy: .busy
        case .saveRefused: .saveRefused
        case .trust: .trust
        case .badEnvironment, .outOfRange, .badPath: .usage
        }
    }
}
