/// The version every executable prints for `--version`.
public enum MultidocVersion {
    public static let string = "0.4.0"
    /// The container format this build writes and the newest it reads.
    public static let containerFormat = 1

    /// `multidoc 0.4.0 (container format 1)`.
    public static func line(_ executable: String) -> String { "\(executable) \(string) (container format \(containerFormat))" }
}
