import Sync

/// The version every executable prints for `--version`.
public enum MultidocVersion {
    public static let string = "0.4.0"
    /// The container format this build writes and the newest it reads: Sync's, which owns the
    /// format.
    public static var containerFormat: Int { Container.formatVersion }

    /// `multidoc 0.4.0 (container format 2)`.
    public static func line(_ executable: String) -> String { "\(executable) \(string) (container format \(containerFormat))" }
}
