/*
 * The store on PostgreSQL ("postgresql://USER@HOST:PORT/DB?PARAMS", a libpq URI): a driver
 * (store_driver.h) under the store's rules (store_sql.c). A pool of connections, each with
 * every statement of the table prepared, shared by the verifier's threads. Several verifiers
 * may use one database at once (docs: scale-out): what they must agree on is decided by the
 * database, never by one verifier's memory:
 *   - a round commits as a compare-and-swap on its agent's boot-state version (an UPDATE ...
 *     WHERE version = $n; row locks make a concurrent one wait and then find the new version),
 *     and its challenge is recorded as spent in the same transaction (spent_nonces' key);
 *   - decisions that read before they write take an advisory transaction lock (the locks of
 *     store_driver.h), as SQLite's BEGIN IMMEDIATE does for one verifier.
 *
 * When the server is away: every call fails with -EIO (the agent-facing calls answer 503
 * storage_unavailable), connections are re-made at the next call (at most every PG_RETRY_MS
 * while it stays away), and a call whose connection turns out to be dead before anything was
 * sent on it (the server restarted meanwhile) is retried once on a new one. Outages and
 * recoveries are logged once each.
 *
 * The migrations (store_schema.c) are run by store_pg_schema.c (the dialect's differences are
 * listed there). Parameters: numbers go as text, bytes as binary, text as text; results come in binary.
 * Server errors are converted to -EIO here, logged with SQLSTATE.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "common/log.h"
#include "verifier/store/store_pg.h"
#include "verifier/store/store_schema.h"
#include "verifier/store/store_sql.h"

#define PG_POOL 8u          /* connections per verifier */
#define PG_RETRY_MS 250     /* a new connection is tried at most this often while down */
#define PG_CONNECT_TIMEOUT "3"
#define PG_MAX_PARAMS 16
#define PG_SQL_MAX 2048     /* a statement of the table, rewritten to $N */

/* The advisory lock keys of store_driver.h's locks ("atst" ...). */
static const char *const lock_sql[] = {
	[STORE_LOCK_NONE] = NULL,
	[STORE_LOCK_ENROLL] = "SELECT pg_advisory_xact_lock(x'7833656e726f6c6c'::bigint)",
	[STORE_LOCK_POLICY] = "SELECT pg_advisory_xact_lock(x'78336f6c69637900'::bigint)",
};

struct store_conn {
	struct store_driver *d;
	PGconn *c;
	bool busy;
	bool sent;        /* something was sent on it during this call: no silent retry */
	PGresult *r;      /* the statement running */
	int row;          /* its current row, -1 before the first */
	enum store_stmt id;
	uint64_t changes; /* rows changed by the last statement */
};

struct store_driver {
	char *uri;                 /* "postgresql:" + location: libpq's URI */
	char where[160];           /* HOST:PORT/DB for messages, never the password */
	pthread_mutex_t lock;      /* the pool and the fields below */
	pthread_cond_t cond;
	struct store_conn pool[PG_POOL];
	bool down;                 /* the last connection attempt failed (logged once) */
	int64_t retry_at_ms;       /* no new connection attempt before this while down */
};

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Connections ---------------------------------------------------------------------------- */

static void conn_drop(struct store_conn *pc)
{
	PQclear(pc->r);
	pc->r = NULL;
	PQfinish(pc->c);
	pc->c = NULL;
}

/* Statement i of the table in this dialect, with ?N written $N. */
static int pg_sql(unsigned i, char *out, size_t cap)
{
	const char *s = store_statements[i].pg ? store_statements[i].pg : store_statements[i].sql;
	size_t n = 0;

	for (; *s; s++) {
		if (n + 2 > cap)
			return -ENAMETOOLONG;
		out[n++] = *s == '?' ? '$' : *s; /* no statement has a '?' in a literal */
	}
	out[n] = '\0';
	return 0;
}

/* A new session: checks the schema version and prepares every statement as "s<N>". */
static int session_setup(struct store_driver *d, PGconn *c)
{
	char name[16], sql[PG_SQL_MAX];
	PGresult *r;
	int ret;

	if ((ret = store_pg_exec(c, "SET synchronous_commit = on")) ||
	    (ret = store_pg_exec(c, "SET client_min_messages = warning")))
		return ret;
	r = PQexec(c, "SELECT version FROM schema_version");
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1 ||
	    strtol(PQgetvalue(r, 0, 0), NULL, 10) != STORE_SCHEMA_VERSION) {
		log_error("store: %s is not at schema version %d any more (restored from an older"
			  " backup, or upgraded by a newer verifier?): this verifier stops using it",
			  d->where, STORE_SCHEMA_VERSION);
		PQclear(r);
		return -EPROTO;
	}
	PQclear(r);
	for (unsigned i = 0; i < STMT_COUNT; i++) {
		if (pg_sql(i, sql, sizeof(sql))) {
			log_error("store: statement %u is longer than %d bytes", i, PG_SQL_MAX);
			return -EINVAL;
		}
		snprintf(name, sizeof(name), "s%u", i);
		r = PQprepare(c, name, sql, 0, NULL);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			ret = store_pg_fail(c, r, "prepare");
			PQclear(r);
			return ret;
		}
		PQclear(r);
	}
	return 0;
}

static PGconn *connect_db(struct store_driver *d)
{
	/* The URI's own settings come later and win over these defaults. */
	static const char *const keys[] = { "connect_timeout", "application_name",
					    "client_encoding", "dbname", NULL };
	const char *vals[] = { PG_CONNECT_TIMEOUT, "attest-verifier", "UTF8", d->uri, NULL };

	return PQconnectdbParams(keys, vals, 1);
}

/* The state of the server as this store last saw it, logged when it changes. */
static void set_down(struct store_driver *d, bool down, const char *why)
{
	pthread_mutex_lock(&d->lock);
	if (down && !d->down)
		log_error("store: postgresql %s unavailable: %.*s; agents are answered 503 until it is"
			  " back (retried every %d ms)", d->where, (int)strcspn(why, "\n"), why,
			  PG_RETRY_MS);
	else if (!down && d->down)
		log_info("store: postgresql %s reachable again", d->where);
	d->down = down;
	if (down)
		d->retry_at_ms = now_ms() + PG_RETRY_MS;
	pthread_mutex_unlock(&d->lock);
}

/* Makes pc usable: 0, or -EIO (the server is away; logged once per outage). */
static int conn_ensure(struct store_driver *d, struct store_conn *pc)
{
	bool wait;

	if (pc->c && PQstatus(pc->c) == CONNECTION_OK)
		return 0;
	conn_drop(pc);
	pthread_mutex_lock(&d->lock);
	wait = d->down && now_ms() < d->retry_at_ms;
	pthread_mutex_unlock(&d->lock);
	if (wait)
		return -EIO;
	pc->c = connect_db(d);
	if (!pc->c || PQstatus(pc->c) != CONNECTION_OK) {
		set_down(d, true, pc->c ? PQerrorMessage(pc->c) : "out of memory");
		conn_drop(pc);
		return -EIO;
	}
	if (session_setup(d, pc->c)) {
		if (PQstatus(pc->c) != CONNECTION_OK)
			set_down(d, true, PQerrorMessage(pc->c));
		conn_drop(pc);
		return -EIO;
	}
	set_down(d, false, NULL);
	return 0;
}

static int pg_acquire(struct store_driver *d, struct store_conn **out)
{
	struct store_conn *pc = NULL;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		for (unsigned i = 0; i < PG_POOL && !pc; i++)
			if (!d->pool[i].busy)
				pc = &d->pool[i];
		if (pc)
			break;
		pthread_cond_wait(&d->cond, &d->lock);
	}
	pc->busy = true;
	pthread_mutex_unlock(&d->lock);
	pc->sent = false;
	pc->changes = 0;
	*out = NULL;
	if (conn_ensure(d, pc)) {
		pthread_mutex_lock(&d->lock);
		pc->busy = false;
		pthread_cond_signal(&d->cond);
		pthread_mutex_unlock(&d->lock);
		return -EIO;
	}
	*out = pc;
	return 0;
}

static void pg_reset(struct store_conn *pc)
{
	PQclear(pc->r);
	pc->r = NULL;
}

static void pg_rollback(struct store_conn *pc)
{
	if (pc->c && PQtransactionStatus(pc->c) != PQTRANS_IDLE)
		PQclear(PQexec(pc->c, "ROLLBACK"));
}

static void pg_release(struct store_driver *d, struct store_conn *pc)
{
	pg_reset(pc);
	/* A connection left inside a transaction (a failed call) is not reused as it is. */
	if (pc->c && PQtransactionStatus(pc->c) != PQTRANS_IDLE)
		conn_drop(pc);
	pthread_mutex_lock(&d->lock);
	pc->busy = false;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

/*
 * Runs one statement (the table's id, or sql when id is STMT_COUNT) and keeps its result. A
 * connection found dead by the first statement of a call is made again and the statement sent
 * once more: nothing of the call reached the server.
 */
static int run(struct store_conn *pc, enum store_stmt id, const char *sql, int n,
	       const char *const *val, const int *len, const int *fmt)
{
	const char *what = sql ? sql : store_statements[id].what;
	char name[16];
	ExecStatusType s;
	PGresult *r;

	pg_reset(pc);
	snprintf(name, sizeof(name), "s%u", (unsigned)id);
	for (int attempt = 0;; attempt++) {
		if (!pc->c)
			return -EIO;
		r = sql ? PQexecParams(pc->c, sql, n, NULL, val, len, fmt, 1)
			: PQexecPrepared(pc->c, name, n, val, len, fmt, 1);
		s = PQresultStatus(r);
		if (s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK)
			break;
		if (PQstatus(pc->c) == CONNECTION_OK) {
			int ret = store_pg_fail(pc->c, r, what);

			PQclear(r);
			return ret;
		}
		set_down(pc->d, true, PQerrorMessage(pc->c));
		PQclear(r);
		if (pc->sent || attempt > 0) {
			log_error("store: %s failed: the connection to postgresql %s was lost", what,
				  pc->d->where);
			return -EIO;
		}
		conn_drop(pc);
		if (conn_ensure(pc->d, pc))
			return -EIO;
	}
	pc->sent = true;
	pc->r = r;
	pc->row = -1;
	pc->id = id;
	pc->changes = strtoull(PQcmdTuples(r), NULL, 10);
	return 0;
}

static int run_sql(struct store_conn *pc, const char *sql)
{
	int ret = run(pc, STMT_COUNT, sql, 0, NULL, NULL, NULL);

	pg_reset(pc);
	return ret;
}

static int pg_begin(struct store_conn *pc, enum store_lock lock)
{
	int ret = run_sql(pc, "BEGIN");

	return ret || !lock_sql[lock] ? ret : run_sql(pc, lock_sql[lock]);
}

static int pg_commit(struct store_conn *pc)
{
	return run_sql(pc, "COMMIT");
}

static int pg_savepoint(struct store_conn *pc)
{
	return run_sql(pc, "SAVEPOINT round");
}

static int pg_savepoint_release(struct store_conn *pc)
{
	return run_sql(pc, "RELEASE round");
}

static int pg_savepoint_rollback(struct store_conn *pc)
{
	return run_sql(pc, "ROLLBACK TO round");
}

/* Parameters as libpq takes them: numbers as text, bytes as binary, text as text. */
struct pg_params {
	const char *val[PG_MAX_PARAMS];
	int len[PG_MAX_PARAMS], fmt[PG_MAX_PARAMS];
	char num[PG_MAX_PARAMS][24];
};

static int pg_params(const struct store_value *p, unsigned n, struct pg_params *out)
{
	if (n > PG_MAX_PARAMS)
		return -E2BIG;
	for (unsigned i = 0; i < n; i++) {
		out->len[i] = 0;
		out->fmt[i] = 0;
		switch (p[i].type) {
		case STORE_V_NULL:
			out->val[i] = NULL;
			break;
		case STORE_V_INT:
			snprintf(out->num[i], sizeof(out->num[i]), "%" PRId64, p[i].i);
			out->val[i] = out->num[i];
			break;
		case STORE_V_TEXT:
			out->val[i] = p[i].p;
			break;
		case STORE_V_BLOB: /* no pointer is NULL; no bytes an empty value */
			out->val[i] = p[i].p ? (p[i].len ? p[i].p : "") : NULL;
			out->len[i] = (int)p[i].len;
			out->fmt[i] = 1;
			break;
		}
	}
	return 0;
}

static int pg_query(struct store_conn *pc, enum store_stmt id, const struct store_value *p,
		    unsigned n)
{
	struct pg_params pp;
	int ret = pg_params(p, n, &pp);

	return ret ? ret : run(pc, id, NULL, (int)n, pp.val, pp.len, pp.fmt);
}

static int pg_query_sql(struct store_conn *pc, const char *sql, const struct store_value *p,
			unsigned n)
{
	char text[PG_SQL_MAX];
	struct pg_params pp;
	int ret;

	if (strlen(sql) >= sizeof(text))
		return -E2BIG;
	for (size_t i = 0; (text[i] = sql[i] == '?' ? '$' : sql[i]) != '\0'; i++)
		;
	if ((ret = pg_params(p, n, &pp)))
		return ret;
	return run(pc, STMT_COUNT, text, (int)n, pp.val, pp.len, pp.fmt);
}

static int pg_step(struct store_conn *pc)
{
	if (!pc->r)
		return 0;
	return ++pc->row < PQntuples(pc->r) ? 1 : 0;
}

static uint64_t pg_changes(struct store_conn *pc)
{
	return pc->changes;
}

static bool pg_col_null(struct store_conn *pc, unsigned col)
{
	return PQgetisnull(pc->r, pc->row, (int)col);
}

/* An integer column of any width (int2, int4, int8, bool); 0 for NULL. */
static int64_t pg_col_int(struct store_conn *pc, unsigned col)
{
	const unsigned char *v = (const unsigned char *)PQgetvalue(pc->r, pc->row, (int)col);
	int len = PQgetlength(pc->r, pc->row, (int)col);
	uint64_t x = 0;

	if (PQgetisnull(pc->r, pc->row, (int)col) || len < 1 || len > 8)
		return 0;
	for (int i = 0; i < len; i++)
		x = x << 8 | v[i];
	if (len < 8 && (v[0] & 0x80))
		x |= ~(uint64_t)0 << (8 * len); /* sign-extend */
	return (int64_t)x;
}

/* Text and bytea columns: libpq puts a NUL after every value. */
static const char *pg_col_text(struct store_conn *pc, unsigned col, size_t *len)
{
	if (len)
		*len = (size_t)PQgetlength(pc->r, pc->row, (int)col);
	return PQgetvalue(pc->r, pc->row, (int)col);
}

static const void *pg_col_blob(struct store_conn *pc, unsigned col, size_t *len)
{
	if (PQgetisnull(pc->r, pc->row, (int)col)) {
		*len = 0;
		return NULL;
	}
	return pg_col_text(pc, col, len);
}

/* The identity's sequence: its last value, one before it while none was taken from it. */
static int pg_identity_last(struct store_conn *pc, const char *table, int64_t *last)
{
	char sql[256], seq[128];
	int ret;

	*last = 0;
	if ((size_t)snprintf(sql, sizeof(sql), "SELECT pg_get_serial_sequence('%s', 'id')", table) >=
	    sizeof(sql))
		return -E2BIG;
	if ((ret = run(pc, STMT_COUNT, sql, 0, NULL, NULL, NULL)))
		return ret;
	if (pg_step(pc) != 1 || pg_col_null(pc, 0) ||
	    (size_t)snprintf(seq, sizeof(seq), "%s", PQgetvalue(pc->r, 0, 0)) >= sizeof(seq)) {
		log_error("store: table %s has no identity sequence", table);
		ret = -EIO;
	}
	pg_reset(pc);
	if (!ret)
		snprintf(sql, sizeof(sql),
			 "SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END"
			 " FROM %s", seq);
	if (!ret && !(ret = run(pc, STMT_COUNT, sql, 0, NULL, NULL, NULL)) && pg_step(pc) == 1)
		*last = pg_col_int(pc, 0);
	pg_reset(pc);
	return ret;
}

static int pg_identity_follow(struct store_conn *pc, const char *table, int64_t last)
{
	char sql[256];

	if ((size_t)snprintf(sql, sizeof(sql),
			     "SELECT setval(pg_get_serial_sequence('%s', 'id'),"
			     " GREATEST(COALESCE(max(id), 0), %" PRId64 ") + 1, false) FROM %s",
			     table, last, table) >= sizeof(sql))
		return -E2BIG;
	return run_sql(pc, sql);
}

/* Open and close ---------------------------------------------------------------------------- */

static void pg_close(struct store_driver *d)
{
	for (unsigned i = 0; i < PG_POOL; i++)
		conn_drop(&d->pool[i]);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	free(d->uri);
	free(d);
}

static int pg_open(const char *location, struct store_driver **out)
{
	struct store_driver *d;
	PGconn *c = NULL;
	size_t n = strlen(location);
	int ret = -EIO;

	*out = NULL;
	if (strncmp(location, "//", 2) != 0) {
		log_error("store: give a PostgreSQL store as postgresql://[USER@]HOST[:PORT]/DATABASE"
			  "[?PARAMS], not \"postgresql:%s\"", location);
		return -EINVAL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	for (unsigned i = 0; i < PG_POOL; i++)
		d->pool[i].d = d;
	d->uri = malloc(n + 12);
	if (!d->uri) {
		ret = -ENOMEM;
		goto fail;
	}
	memcpy(d->uri, "postgresql:", 11);
	memcpy(d->uri + 11, location, n + 1);
	c = connect_db(d);
	if (!c || PQstatus(c) != CONNECTION_OK) {
		log_error("store: cannot connect to PostgreSQL: %.*s",
			  c ? (int)strcspn(PQerrorMessage(c), "\n") : 13,
			  c ? PQerrorMessage(c) : "out of memory");
		goto fail;
	}
	snprintf(d->where, sizeof(d->where), "%s:%s/%s", PQhost(c), PQport(c), PQdb(c));
	if ((ret = store_pg_exec(c, "SET client_min_messages = warning")) ||
	    (ret = store_pg_migrate(c, d->where)))
		goto fail;
	/* The first connection of the pool. */
	if ((ret = session_setup(d, c)))
		goto fail;
	d->pool[0].c = c;
	log_info("store: postgresql %s, schema version %d", d->where, STORE_SCHEMA_VERSION);
	*out = d;
	return 0;
fail:
	PQfinish(c);
	pg_close(d);
	return ret == -EPROTO || ret == -ENOMEM ? ret : -EIO;
}

/*
 * A connection of the pool in one REPEATABLE READ, READ ONLY transaction: one snapshot, as of
 * its first statement; readers never block writers.
 */
static int pg_snapshot(struct store_driver *d, struct store_conn **out)
{
	int ret = pg_acquire(d, out);

	if (!ret && (ret = run_sql(*out, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"))) {
		pg_release(d, *out);
		*out = NULL;
	}
	return ret;
}

static void pg_snapshot_end(struct store_driver *d, struct store_conn *pc)
{
	pg_reset(pc);
	pg_rollback(pc); /* read only: nothing to keep */
	pg_release(d, pc);
}

static const struct store_driver_ops pg_driver = {
	.scheme = "postgresql",
	.open = pg_open,
	.close = pg_close,
	.acquire = pg_acquire,
	.release = pg_release,
	.begin = pg_begin,
	.commit = pg_commit,
	.rollback = pg_rollback,
	.savepoint = pg_savepoint,
	.savepoint_release = pg_savepoint_release,
	.savepoint_rollback = pg_savepoint_rollback,
	.query = pg_query,
	.query_sql = pg_query_sql,
	.step = pg_step,
	.reset = pg_reset,
	.changes = pg_changes,
	.col_null = pg_col_null,
	.col_int = pg_col_int,
	.col_text = pg_col_text,
	.col_blob = pg_col_blob,
	.identity_last = pg_identity_last,
	.identity_follow = pg_identity_follow,
	.snapshot = pg_snapshot,
	.snapshot_end = pg_snapshot_end,
};

static int pg_store_open(const char *location, struct store_backend **out)
{
	return store_sql_open(&pg_driver, &store_pg_ops, location, out);
}

const struct store_ops store_pg_ops = STORE_SQL_OPS("postgresql", pg_store_open);
