import Foundation

extension StoreProvider {
    /// The real backends: SQLite (GRDB) and JSON files.
    public static func standard(options: StoreOptions = StoreOptions()) -> StoreProvider {
        StoreProvider(
            open: { kind, url, create throws(StoreError) in
                switch kind {
                case .sqlite: try SQLiteDocumentStore(url: url, options: options, create: create)
                case .json: try JSONDocumentStore(url: url, options: options, create: create)
                }
            },
            destroy: { kind, url in
                switch kind {
                case .sqlite: SQLiteDocumentStore.destroy(at: url)
                case .json: JSONDocumentStore.destroy(at: url)
                }
            },
            exists: fileExists
        )
    }
}
