// sqlite3_db_config is variadic, which Swift cannot call: one wrapper per option the stores set
// (Modules/Storage/SQLite/SQLiteDocumentStore.swift).
#include <sqlite3.h>

/// Closing the last connection no longer checkpoints the write-ahead log into the file (two
/// syncs, and the log deleted, so the next open makes it again and syncs its folder). The log
/// stays; SQLite checkpoints it when it grows past its limit, and any open reads it.
static inline int multidoc_sqlite_keep_wal_on_close(sqlite3 *db) {
    int enabled = 0;
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &enabled);
}
