import FileIO
import Foundation

/// The secret every request to the daemon's local API carries: 64 hex digits in
/// `<root>/api-token`, mode 0600, so only the device's user can read it. `multidoc init` makes
/// it, and the daemon when its API is on and the root has none.
public enum APIToken {
    public static func url(root: URL) -> URL { root.appendingPathComponent("api-token", isDirectory: false) }

    /// The root's token, made (and written, mode 0600) when it has none or an unreadable one.
    /// An existing file gets mode 0600 again if it was opened up.
    /// - Throws: ``AppError`` (`.writeFailed`) when the file cannot be written.
    public static func loadOrCreate(root: URL) throws -> String {
        let url = url(root: root)
        if let data = FileManager.default.contents(atPath: url.path),
           let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
           text.count == 64, text.allSatisfy(\.isHexDigit) {
            _ = chmod(url.path, 0o600)
            return text
        }
        var generator = SystemRandomNumberGenerator()
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: .min ... .max, using: &generator)) }.joined()
        do {
            try AtomicFile.write(Data((token + "\n").utf8), to: url, mode: 0o600)
        } catch {
            throw AppError(.writeFailed, "cannot write the API token \(url.path): \(error.detail ?? error.description)", cause: error)
        }
        return token
    }
}
