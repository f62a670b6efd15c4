/*
 * store_sqlite: private to the SQLite backend (store_sqlite.c, store_sqlite_schema.c,
 * store_sqlite_backup.c), but for what a backup needs of it (store_sql.c, store.c).
 */
#ifndef VERIFIER_STORE_SQLITE_H
#define VERIFIER_STORE_SQLITE_H

#include <stdint.h>

#include <sqlite3.h>

struct store_backend;

/* Runs SQL without rows; 0, or -EIO logged with SQLite's code and message. */
int store_sqlite_exec(sqlite3 *db, const char *sql);

/*
 * Brings the database to STORE_SCHEMA_VERSION (store_schema.h, kept in PRAGMA user_version):
 * applies each missing migration in order, each in its own transaction with the version it
 * reaches. 0; -EPROTO (logged) if the database is newer than this build; -EIO or -EINVAL
 * (logged, that migration rolled back) if a migration fails. `path` is for messages.
 */
int store_sqlite_migrate(sqlite3 *db, const char *path);

/*
 * A new store in the (empty) file at path for a backup to be written into (store_sql.c): no
 * journal and nothing synced, the caller syncs the file once it is whole. 0, or what opening
 * a store returns (logged).
 */
int store_sqlite_open_scratch(const char *path, struct store_backend **out);

/*
 * store_sqlite_backup.c: 0 if the file at path is an intact store (its schema version in
 * *version), -EINVAL (logged) otherwise. Every backup is such a file (store.h, store_backup()).
 */
int store_sqlite_backup_check(const char *path, int64_t *version);

#endif
