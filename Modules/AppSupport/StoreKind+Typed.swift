import Storage

extension StoreKind {
    /// The backend a user typed (`convert --to`, `--store`), in any case.
    /// - Throws: ``AppError`` with status ``ExitStatus/usage`` when none was given or the name is
    ///   not a backend's.
    public static func typed(_ name: String?) throws(AppError) -> StoreKind {
        guard let name else { throw AppError(.usage, "say which backend to convert to: --store sqlite|json") }
        guard let kind = StoreKind(rawValue: name.lowercased()) else { throw AppError(.usage, "unknown store '\(name)'; expected sqlite or json") }
        return kind
    }
}
