import Foundation
import Logging
import Settings

extension SyncthingNudge.Configuration {
    /// The nudge configuration from the settings in force (`SyncthingAddress`, `SyncthingKey`,
    /// `SyncthingFolder`, `SyncthingConfig`) for a device whose container is `container`.
    /// Values set directly win over what `SyncthingConfig`'s config.xml says; the folder is found
    /// in config.xml by its path (the container or a folder above it) when no ID is set.
    /// - Returns: nil when none of the four settings is set (no nudge, nothing to report).
    /// - Throws: ``SyncthingError`` when some are set but they do not make a configuration.
    public static func resolve(_ settings: ResolvedSettings, container: URL) throws(SyncthingError) -> Self? {
        var address = settings.optionalText(.syncthingAddress)
        var key = settings.optionalText(.syncthingKey)
        var folderID = settings.optionalText(.syncthingFolder)
        let configPath = settings.optionalText(.syncthingConfig)
        guard address != nil || key != nil || folderID != nil || configPath != nil else { return nil }

        var prefix = ""
        if let configPath {
            let config = try SyncthingConfigFile(contentsOf: URL(fileURLWithPath: (configPath as NSString).expandingTildeInPath))
            address = address ?? config.address
            key = key ?? config.apiKey
            if let found = config.folder(holding: container) {
                if folderID == nil || folderID == found.folder.id {
                    folderID = found.folder.id
                    prefix = found.prefix
                }
            } else if folderID == nil {
                let known = config.folders.map { "\($0.id) (\($0.path))" }.joined(separator: ", ")
                throw SyncthingError("no folder in \(configPath) holds the container \(container.path); folders: \(known.isEmpty ? "none" : known)")
            }
        }
        guard let address else {
            throw SyncthingError("the Syncthing nudge needs SyncthingAddress (or SyncthingConfig)")
        }
        guard let key else {
            throw SyncthingError("the Syncthing nudge needs SyncthingKey (or SyncthingConfig)")
        }
        guard let folderID else {
            throw SyncthingError("the Syncthing nudge needs SyncthingFolder (or SyncthingConfig)")
        }
        guard let url = URL(string: address), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw SyncthingError("bad Syncthing address '\(address)'; expected http://HOST:PORT")
        }
        guard url.scheme == "http" else {
            throw SyncthingError(
                "Syncthing address '\(address)' uses HTTPS; the nudge speaks plain HTTP to Syncthing on this host: "
                    + "give SyncthingAddress as http://HOST:PORT (Syncthing's GUI setting \"Use HTTPS for GUI\" off)")
        }
        return Self(address: url, apiKey: key, folderID: folderID, prefix: prefix)
    }
}

extension SyncthingNudge {
    /// The apps' one call: a nudge for `container` when the settings ask for one. A setting
    /// that does not work is logged (error level) and the device runs without the nudge — only
    /// slower, never broken.
    public static func fromSettings(_ settings: ResolvedSettings, container: URL?, logger: Logger) -> SyncthingNudge? {
        guard let container else { return nil }
        do {
            guard let configuration = try SyncthingNudge.Configuration.resolve(settings, container: container) else { return nil }
            return SyncthingNudge(configuration: configuration, logger: logger)
        } catch {
            logger.error("Syncthing nudge off: \(error.message)")
            return nil
        }
    }
}
