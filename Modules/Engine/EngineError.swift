import Model

/// What the engine refuses or fails at, in words a user can act on. Front ends print
/// ``description``; their exit code comes from AppSupport's one table (`AppError`).
public enum EngineError: Error, Sendable, CustomStringConvertible, Equatable {
    /// No document has that name, UUID or prefix; `suggestions` are names close to it.
    case unknownDocument(String, suggestions: [String] = [])
    /// Nothing in the trash has that name, UUID or prefix.
    case notInTrash(String, suggestions: [String] = [])
    case ambiguousName(String, candidates: [(name: String, id: String)])
    case invalidName(String)
    case rootUnusable(String, String)
    /// No device root at the path: `multidoc init` makes one (the command to run is in `hint`).
    case rootMissing(String, hint: String)
    case containerUnavailable(String)
    /// A container folder that does not exist and this device never synced through: a wrong
    /// path or a folder not made yet, not a drive that is away.
    case containerMissing(String)
    case containerFormat(String)
    case storeFailed(document: String, detail: String)
    case damagedFile(String, String)
    case io(String, String)
    case notInCloud(String)
    case alreadyInCloud(String)
    case busy(String)
    /// A save no peer would accept, refused before anything was committed.
    case saveRefused(document: String, detail: String)
    /// A history point (`show --at`, `revert --to`) the document's history does not hold.
    case notInHistory(String, String)
    /// Admission, removal, signing or the container key: refused (not admitted, a wrong
    /// passphrase, no such device asking to join).
    case trust(String)
    /// An environment variable the engine reads holds a value it cannot use.
    case badEnvironment(variable: String, detail: String)
    /// A position or range outside the document's text (`edit --insert`, `--delete`).
    case outOfRange(document: String, detail: String)
    /// A folder path given for the device root, the container or a copy that cannot be used:
    /// empty, holding a control character, or a copy's destination that overlaps the container.
    case badPath(String)

    public var description: String {
        switch self {
        case .badEnvironment(let variable, let detail): "\(variable): \(detail)"
        case .unknownDocument(let query, let suggestions):
            "no document matches '\(query)'"
                + (suggestions.isEmpty ? " ('multidoc list' shows every document)" : Suggestions.phrase(suggestions, quoted: true))
        case .notInTrash(let query, let suggestions):
            "nothing in the trash matches '\(query)'"
                + (suggestions.isEmpty ? " ('multidoc trash' lists what it holds)" : Suggestions.phrase(suggestions, quoted: true))
        case .ambiguousName(let query, let candidates):
            "'\(query)' names \(candidates.count) documents; use a UUID prefix: "
                + candidates.map { "\($0.name) (\($0.id.prefix(8)))" }.joined(separator: ", ")
        case .invalidName(let detail): detail
        case .rootUnusable(let path, let detail): "device root \(path) is unusable: \(detail)"
        case .rootMissing(let path, let hint): "no device root at \(path); set one up with: \(hint)"
        case .containerUnavailable(let detail): detail
        case .containerMissing(let path):
            "container folder \(path) does not exist; create it (mkdir -p '\(path)') or check the path"
        case .containerFormat(let detail): detail
        case .storeFailed(let document, let detail): "document \(document): \(detail)"
        case .damagedFile(let path, let detail): "\(path) is damaged: \(detail)"
        case .io(let path, let detail): "cannot write \(path): \(detail)"
        case .notInCloud(let name): "document \(name) is not in the cloud"
        case .alreadyInCloud(let name): "document \(name) is already in the cloud"
        case .busy(let detail): detail
        case .saveRefused(let document, let detail): "document \(document): save refused, nothing was changed: \(detail)"
        case .notInHistory(let document, let detail): "document \(document): \(detail)"
        case .trust(let detail): detail
        case .outOfRange(let document, let detail): "document \(document): \(detail)"
        case .badPath(let detail): detail
        }
    }

    public static func == (lhs: EngineError, rhs: EngineError) -> Bool { lhs.description == rhs.description }
}

extension EngineError {
    /// For an error about one document: its name, and what is wrong without the name (for a
    /// line that names the document already).
    public var aboutDocument: (document: String, detail: String)? {
        switch self {
        case .storeFailed(let document, let detail), .notInHistory(let document, let detail), .outOfRange(let document, let detail):
            (document, detail)
        case .saveRefused(let document, let detail): (document, "save refused, nothing was changed: \(detail)")
        default: nil
        }
    }

    /// A discovered document whose first log has not been imported here: it has no text to
    /// show or edit yet.
    static func notViewableYet(_ document: String) -> EngineError {
        .storeFailed(
            document: document,
            detail: "not viewable yet: its first log has not arrived from the container; run 'multidoc sync' once it has ('multidoc list' shows how far it got)")
    }
}

extension EngineError: Hashable {
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }
}
