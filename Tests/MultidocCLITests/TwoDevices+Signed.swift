import Foundation
import Testing
import TestSupport

/// What the signing and trust suites read off a device.
extension TwoDevices {
    /// The text of "Notes" as `show --json` on `root` gives it (nil: it does not show).
    func notesText(on root: String) throws -> String? {
        let show = try multidoc(["show", "Notes", "--json"], root: root)
        guard show.status == 0 else { return nil }
        return (try json(show) as? [String: Any])?["text"] as? String
    }

    /// `device list --json` on `root`.
    func deviceList(on root: String) throws -> [String: Any] {
        let list = try multidoc(["device", "list", "--json"], root: root)
        #expect(list.status == 0, "\(list.stderr)")
        return try #require(try json(list) as? [String: Any])
    }
}
