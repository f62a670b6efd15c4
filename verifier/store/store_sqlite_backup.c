/*
 * The SQLite store's backups: a consistent copy taken while the verifier runs, and the check of
 * a copy before anyone relies on it.
 *
 * store_sqlite_backup(): a second, read-only connection to the database runs VACUUM INTO a new
 * file beside it. VACUUM INTO reads in one transaction, so the copy is the database as of one
 * commit: every round acknowledged before it began is in it. In WAL mode this reader and the
 * store's own connection do not wait for each other, so rounds go on meanwhile (and the store's
 * lock is never taken). The copy is unlinked once written and handed over as an open file, so
 * nothing is left behind whatever the caller does with it.
 *
 * store_sqlite_backup_check(): opens a file read-only and accepts it only if SQLite's
 * integrity check passes and it has a schema version.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "verifier/store/store_sqlite.h"

/* VACUUM INTO fails when the disk fills; say so rather than "I/O error". */
static int sqlite_errno(int rc)
{
	return (rc & 0xff) == SQLITE_FULL ? -ENOSPC : -EIO;
}

int store_sqlite_backup(const char *db_path, int *fd_out, uint64_t *size)
{
	char tmp[PATH_MAX];
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	struct stat stbuf;
	int fd = -1, rc, ret = -EIO;

	*fd_out = -1;
	*size = 0;
	if (snprintf(tmp, sizeof(tmp), "%s.backup-XXXXXX", db_path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		log_error("store: backup: cannot create \"%s\": %s", tmp, strerror(-ret));
		return ret;
	}
	/* The store's directory is private; the copy holds the same data: keep it 0600. */
	(void)fchmod(fd, 0600);
	rc = sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(db, 10000);
		rc = sqlite3_prepare_v2(db, "VACUUM INTO ?1", -1, &s, NULL);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(s, 1, tmp, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_DONE)
		rc = SQLITE_OK;
	if (rc != SQLITE_OK) {
		ret = sqlite_errno(rc);
		log_error("store: backup of \"%s\" failed: sqlite error %d \"%s\"", db_path, rc,
			  db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		goto out;
	}
	if (fstat(fd, &stbuf) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		ret = -errno;
		goto out;
	}
	*size = (uint64_t)stbuf.st_size;
	*fd_out = fd;
	fd = -1;
	ret = 0;
out:
	sqlite3_finalize(s);
	sqlite3_close(db);
	unlink(tmp);
	if (fd >= 0)
		close(fd);
	return ret;
}

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
