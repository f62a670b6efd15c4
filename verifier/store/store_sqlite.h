/*
 * store_sqlite: private to the SQLite backend (store_sqlite.c, store_sqlite_schema.c,
 * store_sqlite_backup.c).
 */
#ifndef VERIFIER_STORE_SQLITE_H
#define VERIFIER_STORE_SQLITE_H

#include <stdint.h>

#include <sqlite3.h>

/* Runs SQL without rows; 0, or -EIO logged with SQLite's code and message. */
int store_sqlite_exec(sqlite3 *db, const char *sql);

/*
 * Brings the database to STORE_SCHEMA_VERSION (store_schema.h, kept in PRAGMA user_version):
 * applies each missing migration in order, each in its own transaction with the version it
 * reaches. 0; -EPROTO (logged) if the
 * database is newer than this build; -EIO or -EINVAL (logged, that migration rolled back) if
 * a migration fails. `path` is for messages.
 */
int store_sqlite_migrate(sqlite3 *db, const char *path);

/*
 * store_sqlite_backup.c: a consistent copy of the database at db_path (which another
 * connection may be writing) as an open, unlinked file: *fd at offset 0, *size. 0, -ENOSPC,
 * -EIO (logged). store_sqlite_backup_check(): 0 if the file at path is an intact store (its
 * schema version in *version), -EINVAL (logged) otherwise.
 */
int store_sqlite_backup(const char *db_path, int *fd, uint64_t *size);
int store_sqlite_backup_check(const char *path, int64_t *version);

#endif
