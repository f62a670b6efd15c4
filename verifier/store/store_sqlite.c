/*
 * The store on SQLite ("sqlite:PATH"): a driver (store_driver.h) under the store's rules
 * (store_sql.c). One connection in WAL mode, synchronous=FULL, serialized by a mutex.
 *
 * One connection and one mutex keep it simple and correct: every read sees every committed
 * write, and a transaction that writes begins IMMEDIATE, so no other caller can interleave
 * (every lock of store_driver.h is this one). The fsync, not the SQL, is what a batch of
 * rounds costs. Every statement is prepared once when the store opens (compiling SQL was most
 * of the store's CPU). The migrations (store_schema.c) are run by store_sqlite_schema.c. SQLite
 * errors are converted to -EIO here, logged with SQLite's code and message.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/log.h"
#include "verifier/store/store_sql.h"
#include "verifier/store/store_sqlite.h"

/* The transaction statements, prepared beside the table's. */
enum tx_stmt { TX_BEGIN, TX_COMMIT, TX_ROLLBACK, TX_SAVEPOINT, TX_ROLLBACK_TO, TX_RELEASE, TX_COUNT };

static const char *const tx_sql[TX_COUNT] = {
	[TX_BEGIN] = "BEGIN IMMEDIATE",
	[TX_COMMIT] = "COMMIT",
	[TX_ROLLBACK] = "ROLLBACK",
	[TX_SAVEPOINT] = "SAVEPOINT round",
	[TX_ROLLBACK_TO] = "ROLLBACK TO round",
	[TX_RELEASE] = "RELEASE round",
};

/* The driver is its one connection. */
struct store_driver {
	sqlite3 *db;
	pthread_mutex_t lock; /* the connection and the statements */
	sqlite3_stmt *stmt[STMT_COUNT];
	sqlite3_stmt *tx[TX_COUNT];
	sqlite3_stmt *cur;    /* the statement running, or NULL */
	const char *cur_what; /* its name in messages */
	sqlite3_stmt *own;    /* the last statement of query_sql(), kept for the same text again */
	char *own_sql;        /* its text */
};

static struct store_driver *drv_of(struct store_conn *c)
{
	return (struct store_driver *)c;
}

/* Logs SQLite's own code and message; -ENOSPC when the disk is full, else -EIO. */
static int db_fail(struct store_driver *d, int rc, const char *what)
{
	log_error("store: %s failed: sqlite error %d \"%s\"", what, rc,
		  d->db ? sqlite3_errmsg(d->db) : sqlite3_errstr(rc));
	return (rc & 0xff) == SQLITE_FULL ? -ENOSPC : -EIO;
}

static int tx_run(struct store_driver *d, enum tx_stmt id)
{
	sqlite3_stmt *s = d->tx[id];
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	return rc == SQLITE_DONE ? 0 : db_fail(d, rc, tx_sql[id]);
}

static void sq_close(struct store_driver *d)
{
	for (unsigned i = 0; i < STMT_COUNT; i++)
		sqlite3_finalize(d->stmt[i]);
	for (unsigned i = 0; i < TX_COUNT; i++)
		sqlite3_finalize(d->tx[i]);
	sqlite3_finalize(d->own);
	free(d->own_sql);
	if (d->db) {
		int rc = sqlite3_close(d->db);

		if (rc != SQLITE_OK)
			log_error("store: close failed: sqlite error %d", rc);
	}
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/*
 * The database's file as SQLite resolved it (links followed), for messages: the verifier names
 * its own through /proc/self/fd (statedir.h), which says nothing to an operator.
 */
static const char *db_name(sqlite3 *db, const char *path)
{
	const char *name = sqlite3_db_filename(db, "main");

	return name && name[0] ? name : path;
}

static int prepare(struct store_driver *d, const char *sql, sqlite3_stmt **out)
{
	int rc = sqlite3_prepare_v3(d->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);

	return rc == SQLITE_OK ? 0 : db_fail(d, rc, "prepare");
}

/*
 * scratch: a new file a backup is written into (store_sql_backup()): no journal and nothing
 * synced, the caller syncs the file once it is whole; else the store's own database.
 */
static int sq_open_file(const char *path, bool scratch, struct store_driver **out)
{
	struct store_driver *d;
	int rc, ret = 0;

	*out = NULL;
	if (!path[0]) {
		log_error("store: \"sqlite:\" names no file: give sqlite:PATH");
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	rc = sqlite3_open_v2(path, &d->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
	if (rc != SQLITE_OK) {
		ret = db_fail(d, rc, "open");
		goto fail;
	}
	sqlite3_busy_timeout(d->db, 5000);
	/* WAL: readers do not block the writer; FULL: a COMMIT is on disk when it returns. */
	if ((ret = store_sqlite_exec(d->db, scratch ? "PRAGMA journal_mode=OFF"
						    : "PRAGMA journal_mode=WAL")) ||
	    (ret = store_sqlite_exec(d->db, scratch ? "PRAGMA synchronous=OFF"
						    : "PRAGMA synchronous=FULL")) ||
	    (scratch && (ret = store_sqlite_exec(d->db, "PRAGMA cache_size=-32768"))) ||
	    (ret = store_sqlite_exec(d->db, "PRAGMA foreign_keys=ON")) ||
	    (ret = store_sqlite_migrate(d->db, db_name(d->db, path))))
		goto fail;
	for (unsigned i = 0; !ret && i < STMT_COUNT; i++)
		ret = prepare(d, store_statements[i].sql, &d->stmt[i]);
	for (unsigned i = 0; !ret && i < TX_COUNT; i++)
		ret = prepare(d, tx_sql[i], &d->tx[i]);
	if (ret)
		goto fail;
	*out = d;
	return 0;
fail:
	sq_close(d);
	return ret;
}

static int sq_open(const char *path, struct store_driver **out)
{
	return sq_open_file(path, false, out);
}

static int sq_open_scratch(const char *path, struct store_driver **out)
{
	return sq_open_file(path, true, out);
}

static int sq_acquire(struct store_driver *d, struct store_conn **out)
{
	pthread_mutex_lock(&d->lock);
	*out = (struct store_conn *)d;
	return 0;
}

/*
 * Returns a statement: reset (which also ends its read transaction, so the next use sees the
 * newest commit) and unbound (bindings point into the caller's memory).
 */
static void sq_reset(struct store_conn *c)
{
	struct store_driver *d = drv_of(c);

	if (!d->cur)
		return;
	sqlite3_reset(d->cur);
	sqlite3_clear_bindings(d->cur);
	d->cur = NULL;
}

static void sq_rollback(struct store_conn *c)
{
	struct store_driver *d = drv_of(c);

	if (!sqlite3_get_autocommit(d->db))
		tx_run(d, TX_ROLLBACK);
}

static void sq_release(struct store_driver *d, struct store_conn *c)
{
	sq_reset(c);
	sq_rollback(c);
	pthread_mutex_unlock(&d->lock);
}

static int sq_begin(struct store_conn *c, enum store_lock lock)
{
	(void)lock; /* BEGIN IMMEDIATE: SQLite has one writer at a time */
	return tx_run(drv_of(c), TX_BEGIN);
}

static int sq_commit(struct store_conn *c)
{
	return tx_run(drv_of(c), TX_COMMIT);
}

static int sq_savepoint(struct store_conn *c)
{
	return tx_run(drv_of(c), TX_SAVEPOINT);
}

static int sq_savepoint_release(struct store_conn *c)
{
	return tx_run(drv_of(c), TX_RELEASE);
}

static int sq_savepoint_rollback(struct store_conn *c)
{
	return tx_run(drv_of(c), TX_ROLLBACK_TO);
}

/* Binds p to s (?1 is p[0]); 0 or an SQLite code. */
static int bind_all(sqlite3_stmt *s, const struct store_value *p, unsigned n)
{
	int rc = SQLITE_OK;

	for (unsigned i = 0; rc == SQLITE_OK && i < n; i++) {
		int col = (int)i + 1;

		switch (p[i].type) {
		case STORE_V_NULL:
			rc = sqlite3_bind_null(s, col);
			break;
		case STORE_V_INT:
			rc = sqlite3_bind_int64(s, col, p[i].i);
			break;
		case STORE_V_TEXT:
			rc = sqlite3_bind_text(s, col, p[i].p, -1, SQLITE_STATIC);
			break;
		case STORE_V_BLOB: /* a NULL pointer binds NULL */
			rc = sqlite3_bind_blob(s, col, p[i].p, (int)p[i].len, SQLITE_STATIC);
			break;
		}
	}
	return rc;
}

static int sq_query(struct store_conn *c, enum store_stmt id, const struct store_value *p,
		    unsigned n)
{
	struct store_driver *d = drv_of(c);
	int rc;

	sq_reset(c);
	d->cur = d->stmt[id];
	d->cur_what = store_statements[id].what;
	rc = bind_all(d->cur, p, n);
	return rc == SQLITE_OK ? 0 : db_fail(d, rc, d->cur_what);
}

/* A copy runs one text once per row or page: the last one stays prepared. */
static int sq_query_sql(struct store_conn *c, const char *sql, const struct store_value *p,
			unsigned n)
{
	struct store_driver *d = drv_of(c);
	int rc;

	sq_reset(c);
	if (!d->own_sql || strcmp(d->own_sql, sql) != 0) {
		sqlite3_finalize(d->own);
		free(d->own_sql);
		d->own = NULL;
		if (!(d->own_sql = strdup(sql)))
			return -ENOMEM;
		rc = sqlite3_prepare_v2(d->db, sql, -1, &d->own, NULL);
		if (rc != SQLITE_OK) {
			free(d->own_sql);
			d->own_sql = NULL;
			return db_fail(d, rc, sql);
		}
	}
	d->cur = d->own;
	d->cur_what = d->own_sql;
	rc = bind_all(d->cur, p, n);
	return rc == SQLITE_OK ? 0 : db_fail(d, rc, sql);
}

static int sq_step(struct store_conn *c)
{
	struct store_driver *d = drv_of(c);
	int rc = sqlite3_step(d->cur);

	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : db_fail(d, rc, d->cur_what);
}

static uint64_t sq_changes(struct store_conn *c)
{
	return (uint64_t)sqlite3_changes(drv_of(c)->db);
}

static bool sq_col_null(struct store_conn *c, unsigned col)
{
	return sqlite3_column_type(drv_of(c)->cur, (int)col) == SQLITE_NULL;
}

static int64_t sq_col_int(struct store_conn *c, unsigned col)
{
	return sqlite3_column_int64(drv_of(c)->cur, (int)col);
}

static const char *sq_col_text(struct store_conn *c, unsigned col, size_t *len)
{
	sqlite3_stmt *s = drv_of(c)->cur;
	const unsigned char *t = sqlite3_column_text(s, (int)col);

	if (len)
		*len = t ? (size_t)sqlite3_column_bytes(s, (int)col) : 0;
	return t ? (const char *)t : "";
}

static const void *sq_col_blob(struct store_conn *c, unsigned col, size_t *len)
{
	sqlite3_stmt *s = drv_of(c)->cur;
	const void *p = sqlite3_column_blob(s, (int)col);
	int n = sqlite3_column_bytes(s, (int)col);

	*len = p && n > 0 ? (size_t)n : 0;
	return p;
}

/* The largest id an AUTOINCREMENT table has given: sqlite_sequence keeps it. */
static int sq_identity_last(struct store_conn *c, const char *table, int64_t *last)
{
	int ret = sq_query_sql(c, "SELECT seq FROM sqlite_sequence WHERE name = ?1",
			       (const struct store_value[]){ SV_TEXT(table) }, 1);

	*last = 0;
	if (!ret && (ret = sq_step(c)) == 1)
		*last = sq_col_int(c, 0);
	sq_reset(c);
	return ret < 0 ? ret : 0;
}

/* Rows inserted with their ids moved sqlite_sequence past them already: past `last` too. */
static int sq_identity_follow(struct store_conn *c, const char *table, int64_t last)
{
	static const char *const sql[] = {
		"INSERT INTO sqlite_sequence(name, seq) SELECT ?1, ?2 WHERE NOT EXISTS"
		" (SELECT 1 FROM sqlite_sequence WHERE name = ?1)",
		"UPDATE sqlite_sequence SET seq = max(seq, ?2) WHERE name = ?1",
	};
	const struct store_value p[] = { SV_TEXT(table), SV_INT(last) };
	int ret = 0;

	for (size_t i = 0; !ret && last > 0 && i < sizeof(sql) / sizeof(sql[0]); i++) {
		if (!(ret = sq_query_sql(c, sql[i], p, 2)))
			ret = sq_step(c);
		sq_reset(c);
	}
	return ret < 0 ? ret : 0;
}

/*
 * A second connection of its own, read-only, on the same file: in WAL mode it reads the
 * database as of its transaction's first read while the store's connection goes on writing,
 * and the store's lock is never taken.
 */
static int sq_snapshot(struct store_driver *d, struct store_conn **out)
{
	const char *path = sqlite3_db_filename(d->db, "main");
	struct store_driver *s;
	int rc, ret = -EIO;

	*out = NULL;
	if (!path || !path[0]) {
		log_error("store: the database has no file name to read a snapshot from");
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		db_fail(s, rc, "snapshot");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 10000);
	if ((ret = store_sqlite_exec(s->db, "BEGIN")))
		goto fail;
	*out = (struct store_conn *)s;
	return 0;
fail:
	sq_close(s);
	return ret;
}

static void sq_snapshot_end(struct store_driver *d, struct store_conn *c)
{
	(void)d;
	sq_reset(c);
	sq_close(drv_of(c)); /* its read transaction ends with it */
}

#define SQLITE_DRIVER(open_)                                                                \
	{                                                                                   \
		.scheme = "sqlite", .open = (open_), .close = sq_close,                     \
		.acquire = sq_acquire, .release = sq_release, .begin = sq_begin,            \
		.commit = sq_commit, .rollback = sq_rollback, .savepoint = sq_savepoint,    \
		.savepoint_release = sq_savepoint_release,                                  \
		.savepoint_rollback = sq_savepoint_rollback, .query = sq_query,             \
		.query_sql = sq_query_sql, .step = sq_step, .reset = sq_reset,              \
		.changes = sq_changes, .col_null = sq_col_null, .col_int = sq_col_int,      \
		.col_text = sq_col_text, .col_blob = sq_col_blob,                           \
		.identity_last = sq_identity_last, .identity_follow = sq_identity_follow,   \
		.snapshot = sq_snapshot, .snapshot_end = sq_snapshot_end,                   \
	}

static const struct store_driver_ops sqlite_driver = SQLITE_DRIVER(sq_open);
static const struct store_driver_ops sqlite_scratch_driver = SQLITE_DRIVER(sq_open_scratch);

static int sq_store_open(const char *location, struct store_backend **out)
{
	return store_sql_open(&sqlite_driver, &store_sqlite_ops, location, out);
}

const struct store_ops store_sqlite_ops = STORE_SQL_OPS("sqlite", sq_store_open);

int store_sqlite_open_scratch(const char *path, struct store_backend **out)
{
	return store_sql_open(&sqlite_scratch_driver, &store_sqlite_ops, path, out);
}
