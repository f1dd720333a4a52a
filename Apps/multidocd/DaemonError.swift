import Engine
import FileIO
import Model
import Settings
import Storage

/// What stops the daemon from starting or running, in words a user can act on.
enum DaemonError: Error, CustomStringConvertible {
    /// A bad flag value or combination.
    case usage(String)
    /// Another daemon holds this root's lock.
    case alreadyRunning(root: String, pid: String)
    /// The container cannot be watched or used.
    case container(String)

    var description: String {
        switch self {
        case .usage(let detail): detail
        case .alreadyRunning(let root, let pid): "multidocd is already running for \(root) (pid \(pid))"
        case .container(let detail): detail
        }
    }

    var exitCode: Int32 {
        switch self {
        case .usage: 64
        case .alreadyRunning: 2
        case .container: 7
        }
    }

    /// One line and an exit code for any error (the same codes as `multidoc` where they overlap).
    static func describe(_ error: any Error) -> (String, Int32) {
        switch error {
        case let error as DaemonError: (error.description, error.exitCode)
        case let error as EngineError: (error.description, error.exitCode)
        case let error as SettingsError: (error.description, 13)
        case let error as DocumentNameError: (error.description, 5)
        case let error as StoreError: (error.description, error.kind == .busy ? 12 : 9)
        case let error as FileIOError: (error.description, 10)
        default: ("\(error)", 1)
        }
    }
}
