/// Chooses the name of a new document the way the seed app did: "A document's file name follows
/// sequentially the file names in the table view in the creating device" (seed 000).
public enum DefaultNaming {
    /// The prefix of default names.
    public static let prefix = "TestDoc"

    /// The next default name after those already listed: one more than the highest
    /// `TestDoc<N>` among `existing`, starting at `TestDoc1`.
    public static func nextName(after existing: some Sequence<DocumentName>) -> DocumentName {
        nextName(afterNames: existing.lazy.map(\.rawValue))
    }

    /// The same over names as text, not validated (a catalog's lines: validating 10,000 names
    /// to find the highest number cost a tenth of a `new`).
    public static func nextName(afterNames existing: some Sequence<some StringProtocol>) -> DocumentName {
        var highest = 0
        for name in existing {
            guard name.hasPrefix(prefix) else { continue }
            let digits = name.dropFirst(prefix.count)
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let number = Int(digits) else { continue }
            highest = max(highest, number)
        }
        let next = highest == Int.max ? highest : highest + 1
        // A `TestDoc<digits>` name always passes validation.
        return (try? DocumentName("\(prefix)\(next)")) ?? DocumentName(unchecked: "\(prefix)1")
    }
}

extension DocumentName {
    init(unchecked rawValue: String) { self.rawValue = rawValue }
}
