import Foundation

/// A fresh folder under the system's temporary directory, removed by ``remove()``.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init(_ label: String = "multidoc") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func appending(_ path: String) -> URL { url.appendingPathComponent(path) }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}
