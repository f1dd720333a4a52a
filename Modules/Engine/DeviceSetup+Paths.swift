import Foundation
import Model

/// The rules for the folders a user names: the device root, the container and a copy's
/// destination. Every front end resolves them through ``DeviceSetup`` (and `multidoc init`
/// through AppSupport's `DeviceInit`), so a path is refused the same way whichever command
/// was given it, before anything is made.
extension DeviceSetup {
    /// The longest path a folder setting may hold (the `Container` setting's own limit).
    static let longestPath = 4096

    /// Checks a path as typed, before it is used: not empty, without control characters (a
    /// newline pasted into a path makes a folder no later command can name, and a settings
    /// file it cannot read back), not longer than a setting may hold.
    /// - Parameters:
    ///   - text: the path as given.
    ///   - what: what the path is for, as the message names it ("the device root").
    ///   - option: the option it came in (`--root`), named when it is empty.
    ///   - emptyHint: what to give instead of an empty path.
    /// - Throws: ``EngineError/badPath(_:)`` saying what is wrong and what to give.
    public static func checkPathText(_ text: String, what: String, option: String, emptyHint: String) throws(EngineError) {
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw .badPath("\(option) is empty: \(emptyHint)")
        }
        if let control = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw .badPath(
                "the path given for \(what) (\(shown(text))) holds a control character (\(shown(String(control)))); "
                    + "give a path without control characters")
        }
        guard text.utf8.count <= longestPath else {
            throw .badPath("the path given for \(what) is \(text.utf8.count) bytes long; give a path of at most \(longestPath) bytes")
        }
    }

    /// Checks `--root` as typed: ``checkPathText(_:what:option:emptyHint:)`` for the device root.
    /// - Throws: ``EngineError/badPath(_:)``.
    public static func checkRootPath(_ text: String) throws(EngineError) {
        try checkPathText(
            text, what: "the device root", option: "--root",
            emptyHint: "give the device's root folder, or leave --root out for the default (MULTIDOC_ROOT, else ~/.local/share/multidoc)")
    }

    /// `--container` as typed, as the `Container` setting reads it: `none` (any case) is no
    /// container (nil), anything else a folder path checked by
    /// ``checkPathText(_:what:option:emptyHint:)``.
    /// - Throws: ``EngineError/badPath(_:)`` for an empty path or one with a control character.
    public static func containerOption(_ text: String) throws(EngineError) -> String? {
        if text.trimmingCharacters(in: .whitespaces).lowercased() == "none" { return nil }
        try checkPathText(
            text, what: "the container", option: "--container",
            emptyHint: "give the shared container folder, or none to keep documents on this device")
        return text
    }

    /// Checks that a device root and a container can go together, before either is used or
    /// made: the container is shared with every peer, so it must not hold the root (the
    /// device's private key would be shared), lie inside the root, be or lie inside another
    /// device's root, or be a file.
    /// - Throws: ``EngineError/rootUnusable(_:_:)`` for a root in the container,
    ///   ``EngineError/containerUnavailable(_:)`` for every other clash, each naming what to
    ///   pick instead.
    public static func checkPlaces(root: URL, container: URL) throws(EngineError) {
        let rootPlace = FolderPlace(root), containerPlace = FolderPlace(container)
        if rootPlace == containerPlace {
            throw .containerUnavailable(
                "the container folder \(containerPlace.path) is the device root itself: every peer reads the container, and the root "
                    + "holds this device's private key; pick a container folder outside the root")
        }
        if rootPlace.isInside(containerPlace) {
            throw .rootUnusable(
                rootPlace.path,
                "it is inside the container folder \(containerPlace.path), which every peer reads, and the root holds this device's "
                    + "private key; pick a root folder outside the container (leave --root out for the default)")
        }
        if containerPlace.isInside(rootPlace) {
            throw .containerUnavailable(
                "the container folder \(containerPlace.path) is inside the device root \(rootPlace.path); "
                    + "pick a container folder outside the root, the shared folder every device syncs through")
        }
        if let other = containerPlace.enclosingDeviceRoot() {
            let relation = other == containerPlace ? "is the root of a device" : "is inside the root of a device, \(other.path)"
            throw .containerUnavailable(
                "the container folder \(containerPlace.path) \(relation) (it holds a device root's Documents/ and its device.json or device.key); "
                    + "pick the shared container folder, not a device's root")
        }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: containerPlace.path, isDirectory: &isFolder), !isFolder.boolValue {
            throw .containerUnavailable("\(containerPlace.path) is a file, not a folder; give a folder as the container")
        }
    }

    /// A path with its control characters written out (`\n`), for a message on one line.
    static func shown(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": shown += "\\n"
            case "\r": shown += "\\r"
            case "\t": shown += "\\t"
            case _ where scalar.properties.generalCategory == .control:
                shown += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }
}

/// Where a folder is, as the file system sees it: absolute, without `.` or `..`, with symbolic
/// links resolved as far as folders exist, so two spellings of one place compare equal and a
/// folder not made yet compares by where it would be made.
struct FolderPlace: Equatable, Sendable {
    let path: String

    init(_ url: URL) {
        var existing = url.standardizedFileURL
        var missing: [String] = []
        while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/" {
            missing.insert(existing.lastPathComponent, at: 0)
            existing.deleteLastPathComponent()
        }
        var resolved = existing.resolvingSymlinksInPath()
        for name in missing { resolved.appendPathComponent(name, isDirectory: false) }
        path = resolved.standardizedFileURL.path
    }

    /// Whether this place lies strictly inside `other`.
    func isInside(_ other: FolderPlace) -> Bool {
        path != other.path && path.hasPrefix(other.path.hasSuffix("/") ? other.path : other.path + "/")
    }

    /// This folder or the nearest folder above it that is a device root, if any.
    func enclosingDeviceRoot() -> FolderPlace? {
        var url = URL(fileURLWithPath: path)
        while true {
            if DeviceRoot.looksLikeRoot(url) { return FolderPlace(url) }
            guard url.path != "/" else { return nil }
            url.deleteLastPathComponent()
        }
    }
}
