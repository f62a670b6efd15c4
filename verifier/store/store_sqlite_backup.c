/*
 * The check of a backup before anyone relies on it (a backup of any store is a SQLite store:
 * store_sql.c, store_sql_backup()): the file is opened read-only and accepted only if SQLite's
 * integrity check passes and it has a schema version.
 */
#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "verifier/store/store_sqlite.h"

int store_sqlite_backup_check(const char *path, int64_t *version)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	const unsigned char *res;
	int rc, ret = -EINVAL;

	*version = 0;
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		goto bad;
	if ((rc = sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL)) != SQLITE_OK ||
	    (rc = sqlite3_step(s)) != SQLITE_ROW)
		goto bad;
	res = sqlite3_column_text(s, 0);
	if (!res || strcmp((const char *)res, "ok") != 0) {
		log_error("store: \"%s\" fails its integrity check: %s", path,
			  res ? (const char *)res : "(nothing)");
		goto out;
	}
	sqlite3_finalize(s);
	s = NULL;
	if ((rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL)) != SQLITE_OK ||
	    (rc = sqlite3_step(s)) != SQLITE_ROW)
		goto bad;
	*version = sqlite3_column_int64(s, 0);
	if (*version < 1) {
		log_error("store: \"%s\" has no schema version: not a verifier's store", path);
		goto out;
	}
	ret = 0;
	goto out;
bad:
	log_error("store: \"%s\" is not a readable SQLite database: sqlite error %d \"%s\"", path,
		  rc, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
out:
	sqlite3_finalize(s);
	sqlite3_close(db);
	return ret;
}
