import Engine
import Logging
import Model
import ServiceLifecycle
import Settings
import UnixSignals

/// SIGHUP: re-reads the settings file and puts the result in force. Flags given at start and
/// the environment keep their precedence over the file.
struct ReloadService: Service {
    let library: DocumentLibrary
    let settingsFile: SettingsFile
    let flags: [SettingKey: SettingValue]
    let environment: [String: String]
    /// Trapped by the bootstrap, before anything can send it: SIGHUP's default action kills.
    let signals: UnixSignalsSequence
    let logger: Logger

    func run() async throws {
        for await _ in signals.cancelOnGracefulShutdown() {
            do {
                let settings = try ResolvedSettings(
                    flags: flags, environment: environment, file: try settingsFile.read(), hostName: DeviceIdentity.hostName)
                await library.reload(settings: settings)
                logger.notice("settings reloaded", metadata: [
                    "settings": "\(settings.logLine(withSources: true))",
                ])
            } catch {
                logger.error("settings not reloaded; the previous ones stay in force", metadata: ["error": "\(error)"])
            }
        }
    }
}
