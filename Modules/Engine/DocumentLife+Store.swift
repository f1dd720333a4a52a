import Model
import Storage

extension DocumentLife {
    /// The life of a document whose store failed to open with `error`: damaged when it is not a
    /// valid store (what recovery rebuilds), unreadable otherwise.
    static func failed(_ error: StoreError) -> DocumentLife {
        switch error.kind {
        case .corrupt, .truncated, .notFound: .damaged
        case .unreadable, .busy, .writeFailed, .newerSchema, .closed: .unreadable
        }
    }
}
