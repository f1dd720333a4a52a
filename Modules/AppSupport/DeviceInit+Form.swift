import Engine
import Foundation
import Settings

extension DeviceInit {
    /// What became of a first-run form's answers (``submit(name:container:flags:confirmed:)``).
    public enum FormOutcome: Sendable {
        /// The root is set up.
        case setUp(DeviceSetup)
        /// The container folder does not exist: the user is asked, and submitting again with it
        /// as `confirmed` creates it.
        case confirmCreate(URL, message: String)
        /// An answer is refused: the field to change (0 the name, 1 the container) and why.
        case refused(field: Int, message: String)
    }

    /// Checks the first-run screen's answers and, when they hold, sets the root up as
    /// `multidoc init` does; otherwise says what to change. Nothing is made before that.
    public func submit(name typedName: String, container typed: String, flags: [SettingKey: SettingValue], confirmed: URL?) -> FormOutcome {
        let name = typedName.trimmingCharacters(in: .whitespaces)
        do {
            _ = try SettingKey.deviceName.parse(name)
            var choice = try container(typed)
            if case .missing(let url) = choice {
                guard confirmed == url else {
                    return .confirmCreate(url, message: "\(url.path) does not exist: Enter creates it, or change the path")
                }
                try Self.create(url)
                choice = .folder(url)
            }
            return .setUp(try apply(deviceName: name, container: choice, flags: flags))
        } catch {
            return .refused(field: error is SettingsError ? 0 : 1, message: AppError(error).message)
        }
    }
}
