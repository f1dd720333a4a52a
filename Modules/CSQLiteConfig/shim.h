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

/// Runs a prepared statement of three parameters (text, text, blob) once: reset, bind, step.
/// The store writes one `records` row per changed object through it; binding through GRDB's
/// `StatementArguments` boxed every value (a sixth of writing a backlog). The bytes are
/// copied by SQLite (SQLITE_TRANSIENT), so the caller's buffers may go when it returns.
/// Returns SQLite's result code (SQLITE_DONE on success).
static inline int multidoc_sqlite_step_text_text_blob(
    sqlite3_stmt *statement, const char *first, int firstLength, const char *second, int secondLength,
    const void *blob, int blobLength) {
    sqlite3_reset(statement);
    // An empty Swift string may have no buffer: bind "", never NULL.
    int code = sqlite3_bind_text(statement, 1, first ? first : "", firstLength, SQLITE_TRANSIENT);
    if (code == SQLITE_OK) code = sqlite3_bind_text(statement, 2, second ? second : "", secondLength, SQLITE_TRANSIENT);
    if (code == SQLITE_OK) code = sqlite3_bind_blob(statement, 3, blob, blobLength, SQLITE_TRANSIENT);
    if (code != SQLITE_OK) return code;
    code = sqlite3_step(statement);
    sqlite3_reset(statement);
    return code;
}
