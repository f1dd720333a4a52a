import Foundation

/// What the nudge needs from Syncthing's `config.xml`: the GUI/API address, the API key and the
/// folders (ID and path).
public struct SyncthingConfigFile: Sendable, Equatable {
    /// One shared folder.
    public struct Folder: Sendable, Equatable {
        public let id: String
        public let path: String
    }

    /// `http://127.0.0.1:8384` (https when the GUI uses TLS); nil if the file names none.
    public let address: String?
    /// The API key; nil if the file has none.
    public let apiKey: String?
    public let folders: [Folder]

    /// Reads and parses `config.xml`.
    /// - Throws: ``SyncthingError`` if the file cannot be read or is not a Syncthing configuration.
    public init(contentsOf url: URL) throws(SyncthingError) {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw SyncthingError("cannot read Syncthing's config \(url.path): \(error.localizedDescription)")
        }
        try self.init(data: data, path: url.path)
    }

    /// Parses the text of a `config.xml` (`path` only names it in errors).
    public init(data: Data, path: String = "config.xml") throws(SyncthingError) {
        var reader = Reader()
        do {
            for event in try ConfigXMLReader.events(Array(data)) { reader.take(event) }
        } catch {
            throw SyncthingError("\(path) is not a Syncthing config.xml (malformed XML at byte \(error.offset))")
        }
        guard reader.sawConfiguration else {
            throw SyncthingError("\(path) is not a Syncthing config.xml")
        }
        if let raw = reader.guiAddress?.trimmingCharacters(in: .whitespacesAndNewlines), !raw.isEmpty {
            address = raw.contains("://") ? raw : (reader.guiTLS ? "https://" : "http://") + raw
        } else {
            address = nil
        }
        let key = reader.apiKey?.trimmingCharacters(in: .whitespacesAndNewlines)
        apiKey = key?.isEmpty == false ? key : nil
        folders = reader.folders
    }

    /// The folder whose path is `container` or holds it, with the container's path inside it
    /// (`""` for the folder's root). Paths are compared with symlinks resolved and `~` expanded.
    public func folder(holding container: URL) -> (folder: Folder, prefix: String)? {
        let target = Self.canonical(container.path)
        var best: (Folder, String)?
        for folder in folders {
            let base = Self.canonical(folder.path)
            let prefix: String
            if target == base {
                prefix = ""
            } else if target.hasPrefix(base.hasSuffix("/") ? base : base + "/") {
                prefix = String(target.dropFirst(base.hasSuffix("/") ? base.count : base.count + 1))
            } else {
                continue
            }
            // The deepest folder wins (folders may nest).
            if best == nil || prefix.count < (best?.1.count ?? .max) { best = (folder, prefix) }
        }
        return best
    }

    static func canonical(_ path: String) -> String {
        let expanded = (path as NSString).expandingTildeInPath
        let url = URL(fileURLWithPath: expanded).standardizedFileURL.resolvingSymlinksInPath()
        var result = url.path
        while result.count > 1, result.hasSuffix("/") { result.removeLast() }
        return result
    }

    /// Picks the address, key and folders out of the document's events.
    private struct Reader {
        var sawConfiguration = false
        var guiAddress: String?
        var guiTLS = false
        var apiKey: String?
        var folders: [Folder] = []
        private var stack: [String] = []
        private var text = ""

        mutating func take(_ event: ConfigXMLReader.Event) {
            switch event {
            case .start(let name, let attributes):
                if stack.isEmpty, name == "configuration" { sawConfiguration = true }
                if stack == ["configuration"], name == "folder", let id = attributes["id"], let path = attributes["path"] {
                    folders.append(Folder(id: id, path: path))
                }
                if stack == ["configuration"], name == "gui" {
                    guiTLS = attributes["tls"]?.lowercased() == "true"
                }
                stack.append(name)
                text = ""
            case .text(let string):
                text += string
            case .end:
                if stack == ["configuration", "gui", "address"] { guiAddress = text }
                if stack == ["configuration", "gui", "apikey"] { apiKey = text }
                stack.removeLast()
                text = ""
            }
        }
    }
}
