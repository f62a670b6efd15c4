/*
 * The PostgreSQL store's backups (store.h, store_backup()): a consistent copy of the whole
 * store, written as a SQLite store of the same schema version.
 *
 * Why SQLite: the copy is one file that attestctl backup checks (store_backup_check(), SQLite's
 * integrity check) and that a verifier opens as it is (--store sqlite:FILE), the same whatever
 * the backend that made it; PostgreSQL's own tools (pg_dump, base backups) remain the way to
 * back up the database server as a whole.
 *
 * Consistent: every table is read in one REPEATABLE READ, READ ONLY transaction, i.e. one
 * snapshot: every round acknowledged before the backup began is in it, and rounds go on
 * meanwhile (readers never block writers). The tables and columns copied are the SQLite
 * schema's, made by the same numbered migrations, so a table a later migration adds is copied
 * without a change here. Rows are read through a cursor, a few at a time (a boot log may be
 * megabytes). The copy is written to a new file in $TMPDIR (else /tmp), unlinked once done and
 * handed over as an open file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/log.h"
#include "verifier/store/store_pg.h"
#include "verifier/store/store_sqlite.h"

#define BACKUP_FETCH_ROWS 64
#define BACKUP_SQL_MAX 4096u
#define BACKUP_MAX_COLUMNS 32

/* PostgreSQL's type OIDs (catalog/pg_type.dat; stable across versions). */
#define OID_BOOL 16
#define OID_BYTEA 17
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_TEXT 25
#define OID_VARCHAR 1043

static int sqlite_fail(sqlite3 *db, int rc, const char *what)
{
	log_error("store: backup: %s failed: sqlite error %d \"%s\"", what, rc,
		  db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	return (rc & 0xff) == SQLITE_FULL ? -ENOSPC : -EIO;
}

/* Binary int2/int4/int8/bool as int64. */
static sqlite3_int64 bin_int(const unsigned char *v, int len)
{
	uint64_t x = 0;

	for (int i = 0; i < len; i++)
		x = x << 8 | v[i];
	if (len > 0 && len < 8 && (v[0] & 0x80))
		x |= ~(uint64_t)0 << (8 * len);
	return (sqlite3_int64)x;
}

/* Binds column col of row i of r to parameter col + 1 of ins, by the column's type. */
static int bind_value(const PGresult *r, int i, int col, sqlite3_stmt *ins)
{
	const char *v = PQgetvalue(r, i, col);
	int len = PQgetlength(r, i, col), rc;

	if (PQgetisnull(r, i, col))
		return sqlite3_bind_null(ins, col + 1);
	switch (PQftype(r, col)) {
	case OID_BOOL:
	case OID_INT2:
	case OID_INT4:
	case OID_INT8:
		if (len < 1 || len > 8)
			return SQLITE_MISMATCH;
		rc = sqlite3_bind_int64(ins, col + 1, bin_int((const unsigned char *)v, len));
		break;
	case OID_BYTEA:
		rc = sqlite3_bind_blob(ins, col + 1, v, len, SQLITE_TRANSIENT);
		break;
	case OID_TEXT:
	case OID_VARCHAR:
		rc = sqlite3_bind_text(ins, col + 1, v, len, SQLITE_TRANSIENT);
		break;
	default:
		log_error("store: backup: column %d has PostgreSQL type %u, which a SQLite store"
			  " does not hold", col, (unsigned)PQftype(r, col));
		return SQLITE_MISMATCH;
	}
	return rc;
}

/* SELECT and INSERT of every column SQLite's table `table` has, in its order. */
static int table_sql(sqlite3 *db, const char *table, char *sel, char *ins, int *ncols)
{
	char sql[128];
	sqlite3_stmt *s = NULL;
	size_t sl, il;
	int rc, n = 0;

	snprintf(sql, sizeof(sql), "PRAGMA table_info(\"%s\")", table);
	if ((rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL)) != SQLITE_OK)
		return sqlite_fail(db, rc, "table columns");
	sl = (size_t)snprintf(sel, BACKUP_SQL_MAX, "SELECT ");
	il = (size_t)snprintf(ins, BACKUP_SQL_MAX, "INSERT INTO \"%s\" VALUES (", table);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW && n < BACKUP_MAX_COLUMNS) {
		const char *col = (const char *)sqlite3_column_text(s, 1);

		sl += (size_t)snprintf(sel + sl, sl < BACKUP_SQL_MAX ? BACKUP_SQL_MAX - sl : 0,
				       "%s\"%s\"", n ? ", " : "", col ? col : "");
		il += (size_t)snprintf(ins + il, il < BACKUP_SQL_MAX ? BACKUP_SQL_MAX - il : 0,
				       "%s?", n ? ", " : "");
		n++;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE || n == 0)
		return sqlite_fail(db, rc == SQLITE_ROW ? SQLITE_TOOBIG : rc, "table columns");
	sl += (size_t)snprintf(sel + sl, sl < BACKUP_SQL_MAX ? BACKUP_SQL_MAX - sl : 0,
			       " FROM \"%s\"", table);
	il += (size_t)snprintf(ins + il, il < BACKUP_SQL_MAX ? BACKUP_SQL_MAX - il : 0, ")");
	if (sl >= BACKUP_SQL_MAX || il >= BACKUP_SQL_MAX)
		return -ENAMETOOLONG;
	*ncols = n;
	return 0;
}

/* Copies one table, the caller holding both transactions. */
static int copy_table(PGconn *c, sqlite3 *db, const char *table)
{
	char sel[BACKUP_SQL_MAX], ins_sql[BACKUP_SQL_MAX], decl[BACKUP_SQL_MAX + 64];
	char fetch[64];
	sqlite3_stmt *ins = NULL;
	PGresult *r = NULL;
	int ncols = 0, rc, ret;

	if ((ret = table_sql(db, table, sel, ins_sql, &ncols)))
		return ret;
	if ((rc = sqlite3_prepare_v2(db, ins_sql, -1, &ins, NULL)) != SQLITE_OK)
		return sqlite_fail(db, rc, "insert");
	snprintf(decl, sizeof(decl), "DECLARE backup_rows NO SCROLL CURSOR FOR %s", sel);
	if ((ret = store_pg_exec(c, decl)))
		goto out;
	snprintf(fetch, sizeof(fetch), "FETCH %d FROM backup_rows", BACKUP_FETCH_ROWS);
	for (;;) {
		r = PQexecParams(c, fetch, 0, NULL, NULL, NULL, NULL, 1);
		if (PQresultStatus(r) != PGRES_TUPLES_OK || PQnfields(r) != ncols) {
			ret = store_pg_fail(c, r, table);
			goto out;
		}
		if (PQntuples(r) == 0)
			break;
		for (int i = 0; i < PQntuples(r); i++) {
			for (int col = 0; col < ncols; col++)
				if ((rc = bind_value(r, i, col, ins)) != SQLITE_OK) {
					ret = sqlite_fail(db, rc, table);
					goto out;
				}
			rc = sqlite3_step(ins);
			sqlite3_reset(ins);
			if (rc != SQLITE_DONE) {
				ret = sqlite_fail(db, rc, table);
				goto out;
			}
		}
		PQclear(r);
		r = NULL;
	}
	ret = store_pg_exec(c, "CLOSE backup_rows");
out:
	PQclear(r);
	sqlite3_finalize(ins);
	return ret;
}

static int copy_all(PGconn *c, sqlite3 *db)
{
	sqlite3_stmt *s = NULL;
	int rc, ret;

	if ((ret = store_pg_exec(c, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")))
		return ret;
	if ((ret = store_sqlite_exec(db, "BEGIN")))
		goto out;
	rc = sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND"
				" name NOT LIKE 'sqlite_%' ORDER BY name", -1, &s, NULL);
	if (rc != SQLITE_OK) {
		ret = sqlite_fail(db, rc, "tables");
		goto out;
	}
	while (!ret && (rc = sqlite3_step(s)) == SQLITE_ROW)
		ret = copy_table(c, db, (const char *)sqlite3_column_text(s, 0));
	if (!ret && rc != SQLITE_DONE)
		ret = sqlite_fail(db, rc, "tables");
	sqlite3_finalize(s);
	if (!ret)
		ret = store_sqlite_exec(db, "COMMIT");
out:
	PQclear(PQexec(c, "ROLLBACK")); /* read only: nothing to keep */
	return ret;
}

int store_pg_backup(PGconn *c, int *fd_out, uint64_t *size)
{
	const char *dir = getenv("TMPDIR");
	char tmp[PATH_MAX];
	sqlite3 *db = NULL;
	struct stat stbuf;
	int fd = -1, rc, ret;

	*fd_out = -1;
	*size = 0;
	if (!dir || !dir[0])
		dir = "/tmp";
	if (snprintf(tmp, sizeof(tmp), "%s/attest-backup-XXXXXX", dir) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		log_error("store: backup: cannot create \"%s\": %s", tmp, strerror(-ret));
		return ret;
	}
	(void)fchmod(fd, 0600); /* EK certificates, policies, the fleet's history */
	rc = sqlite3_open_v2(tmp, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		ret = sqlite_fail(db, rc, "open");
		goto out;
	}
	/* A scratch file until it is whole: no journal; fsync'ed once at the end. */
	if ((ret = store_sqlite_exec(db, "PRAGMA journal_mode = OFF")) ||
	    (ret = store_sqlite_exec(db, "PRAGMA synchronous = OFF")) ||
	    (ret = store_sqlite_migrate(db, tmp)) || (ret = copy_all(c, db)))
		goto out;
	rc = sqlite3_close(db);
	db = NULL;
	if (rc != SQLITE_OK) {
		ret = sqlite_fail(NULL, rc, "close");
		goto out;
	}
	if (fsync(fd) < 0 || fstat(fd, &stbuf) < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		ret = -errno;
		log_error("store: backup: \"%s\": %s", tmp, strerror(-ret));
		goto out;
	}
	*size = (uint64_t)stbuf.st_size;
	*fd_out = fd;
	fd = -1;
	ret = 0;
out:
	sqlite3_close(db);
	unlink(tmp);
	if (fd >= 0)
		close(fd);
	return ret;
}
