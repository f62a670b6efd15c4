/*
 * store.h on SQLite: one connection in WAL mode, synchronous=FULL, serialized by a mutex.
 *
 * One connection and one mutex keep it simple and correct: every read sees every committed
 * write, and a multi-statement decision (enroll, commit a round) runs inside BEGIN IMMEDIATE
 * so no other caller can interleave. Rounds are group-committed (store_round_commit): the
 * fsync, not the SQL, is what a round costs, and one fsync can cover every round in flight. SQLite errors are converted to -EIO here,
 * logged with SQLite's code and message.
 */
#include "verifier/store.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "verifier/log.h"

/* Layout of the boot_state BLOB: u32 version, u32 sizeof(struct boot_state), the struct. */
#define BOOT_STATE_LAYOUT 1u

/* A round waiting in the commit queue; lives on its caller's stack. */
struct round_waiter {
	const struct store_round *r;
	struct round_waiter *next;
	int64_t verdict_id;
	int ret;
	bool done;
};

#define STORE_STMT_CACHE 32u /* more distinct statements than the store has */

struct store {
	sqlite3 *db;
	pthread_mutex_t lock; /* the connection and the statement cache */
	struct {
		const char *sql;
		sqlite3_stmt *stmt;
	} stmts[STORE_STMT_CACHE];
	unsigned nstmts;
	/* Commit queue (store_round_commit): qlock guards the queue and `committing`. */
	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	struct round_waiter *qhead, **qtail;
	bool committing;
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS agents("
	" id TEXT PRIMARY KEY,"
	" ek_pub BLOB NOT NULL, ek_cert BLOB NOT NULL, ak_pub BLOB NOT NULL, ak_name BLOB NOT NULL,"
	" state TEXT NOT NULL CHECK(state IN ('pending','active')),"
	" cred_digest BLOB NOT NULL,"
	" policy TEXT NOT NULL DEFAULT '',"
	" created_at INTEGER NOT NULL, activated_at INTEGER NOT NULL DEFAULT 0);"
	/* Challenges live in memory now (nonces.h); older stores had them here. */
	"DROP TABLE IF EXISTS challenges;"
	"CREATE TABLE IF NOT EXISTS boot_state("
	" agent TEXT PRIMARY KEY, layout INTEGER NOT NULL, state BLOB NOT NULL,"
	" reset_count INTEGER NOT NULL, restart_count INTEGER NOT NULL,"
	" boot_number INTEGER NOT NULL, next_entry INTEGER NOT NULL, updated_at INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS verdicts("
	" id INTEGER PRIMARY KEY AUTOINCREMENT, agent TEXT NOT NULL, boot_number INTEGER NOT NULL,"
	" time INTEGER NOT NULL, trusted INTEGER NOT NULL, reasons TEXT NOT NULL,"
	" next_offset INTEGER NOT NULL);"
	"CREATE INDEX IF NOT EXISTS verdicts_agent ON verdicts(agent, id);"
	"CREATE TABLE IF NOT EXISTS violations("
	" id INTEGER PRIMARY KEY AUTOINCREMENT, agent TEXT NOT NULL, boot_number INTEGER NOT NULL,"
	" entry INTEGER NOT NULL, path TEXT NOT NULL, digest TEXT NOT NULL, template TEXT NOT NULL,"
	" reason TEXT NOT NULL, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
	" count INTEGER NOT NULL DEFAULT 1,"
	" state TEXT NOT NULL DEFAULT 'open' CHECK(state IN ('open','approved','dismissed')),"
	" UNIQUE(agent, digest, path));"
	"CREATE INDEX IF NOT EXISTS violations_state ON violations(state, last_seen);"
	"CREATE TABLE IF NOT EXISTS policies("
	" name TEXT NOT NULL, version INTEGER NOT NULL, json TEXT NOT NULL, actor TEXT NOT NULL,"
	" time INTEGER NOT NULL, PRIMARY KEY(name, version));";

const char *agent_state_str(enum agent_state s)
{
	return s == AGENT_ACTIVE ? "active" : "pending";
}

const char *violation_state_str(enum violation_state s)
{
	switch (s) {
	case VIOLATION_OPEN: return "open";
	case VIOLATION_APPROVED: return "approved";
	case VIOLATION_DISMISSED: return "dismissed";
	}
	return "open";
}

int violation_state_from_str(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "open"))
		return VIOLATION_OPEN;
	if (!strcmp(s, "approved"))
		return VIOLATION_APPROVED;
	if (!strcmp(s, "dismissed"))
		return VIOLATION_DISMISSED;
	return -1;
}

void store_agent_release(struct store_agent *a)
{
	if (!a)
		return;
	free(a->ek_pub);
	free(a->ek_cert);
	free(a->ak_pub);
	a->ek_pub = a->ek_cert = a->ak_pub = NULL;
	a->ek_pub_len = a->ek_cert_len = a->ak_pub_len = 0;
}

/* Logs SQLite's own code and message, returns -EIO. */
static int db_fail(struct store *st, int rc, const char *what)
{
	log_error("store: %s failed: sqlite error %d \"%s\"", what, rc,
		  st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
	return -EIO;
}

static int exec(struct store *st, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK) {
		log_error("store: \"%.60s\" failed: sqlite error %d \"%s\"", sql, rc,
			  msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

/*
 * Statements are prepared once and kept (compiling SQL was most of the store's CPU). The cache
 * is keyed by the address of the SQL text: every caller passes a string literal. Caller holds
 * the lock; a statement from prepare() goes back with finish(), never sqlite3_finalize().
 */
static int prepare(struct store *st, const char *sql, sqlite3_stmt **stmt)
{
	bool keep = st->nstmts < STORE_STMT_CACHE;
	int rc;

	for (unsigned i = 0; i < st->nstmts; i++) {
		if (st->stmts[i].sql == sql) {
			*stmt = st->stmts[i].stmt;
			return 0;
		}
	}
	rc = sqlite3_prepare_v3(st->db, sql, -1, keep ? SQLITE_PREPARE_PERSISTENT : 0, stmt, NULL);
	if (rc != SQLITE_OK)
		return db_fail(st, rc, "prepare");
	if (keep) {
		st->stmts[st->nstmts].sql = sql;
		st->stmts[st->nstmts].stmt = *stmt;
		st->nstmts++;
	}
	return 0;
}

/*
 * Returns a statement to the cache: reset (which also ends its read transaction, so the next
 * use sees the newest commit) and unbound (bindings may point into the caller's memory).
 * NULL-safe; statements that did not fit the cache are finalized.
 */
static void finish(struct store *st, sqlite3_stmt *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < st->nstmts; i++) {
		if (st->stmts[i].stmt == s) {
			sqlite3_reset(s);
			sqlite3_clear_bindings(s);
			return;
		}
	}
	sqlite3_finalize(s);
}

/* One cached statement without rows (BEGIN, COMMIT, SAVEPOINT ...): not re-parsed per round. */
static int run(struct store *st, const char *sql)
{
	sqlite3_stmt *s = NULL;
	int ret, rc;

	if ((ret = prepare(st, sql, &s)))
		return ret;
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		ret = db_fail(st, rc, sql);
	finish(st, s);
	return ret;
}

static void lock(struct store *st)
{
	pthread_mutex_lock(&st->lock);
}

static void unlock(struct store *st)
{
	pthread_mutex_unlock(&st->lock);
}

static int begin(struct store *st)
{
	return run(st, "BEGIN IMMEDIATE");
}

static int commit(struct store *st)
{
	return run(st, "COMMIT");
}

static void rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		run(st, "ROLLBACK");
}

int store_open(const char *path, struct store **out)
{
	struct store *st;
	int rc, ret;

	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	pthread_mutex_init(&st->lock, NULL);
	pthread_mutex_init(&st->qlock, NULL);
	pthread_cond_init(&st->qcond, NULL);
	st->qtail = &st->qhead;
	rc = sqlite3_open_v2(path, &st->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
	if (rc != SQLITE_OK) {
		ret = db_fail(st, rc, "open");
		goto fail;
	}
	sqlite3_busy_timeout(st->db, 5000);
	/* WAL: readers do not block the writer; FULL: a COMMIT is on disk when it returns. */
	if ((ret = exec(st, "PRAGMA journal_mode=WAL")) ||
	    (ret = exec(st, "PRAGMA synchronous=FULL")) ||
	    (ret = exec(st, "PRAGMA foreign_keys=ON")) ||
	    (ret = exec(st, schema)))
		goto fail;
	*out = st;
	return 0;
fail:
	store_close(st);
	return ret;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	for (unsigned i = 0; i < st->nstmts; i++)
		sqlite3_finalize(st->stmts[i].stmt);
	if (st->db) {
		int rc = sqlite3_close(st->db);

		if (rc != SQLITE_OK)
			log_error("store: close failed: sqlite error %d", rc);
	}
	pthread_mutex_destroy(&st->lock);
	pthread_mutex_destroy(&st->qlock);
	pthread_cond_destroy(&st->qcond);
	free(st);
}

/* Agents ------------------------------------------------------------------------------- */

static int blob_copy(sqlite3_stmt *s, int col, uint8_t **out, size_t *len)
{
	const void *p = sqlite3_column_blob(s, col);
	int n = sqlite3_column_bytes(s, col);

	*out = NULL;
	*len = 0;
	if (n <= 0)
		return 0;
	*out = malloc((size_t)n);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, p, (size_t)n);
	*len = (size_t)n;
	return 0;
}

static void text_copy(sqlite3_stmt *s, int col, char *out, size_t cap)
{
	const unsigned char *t = sqlite3_column_text(s, col);

	snprintf(out, cap, "%s", t ? (const char *)t : "");
}

#define AGENT_SUMMARY_COLS                                                                  \
	"a.id, a.state, a.ak_name, a.cred_digest, a.policy, a.created_at, a.activated_at,"    \
	" COALESCE(b.boot_number, 0), COALESCE(b.next_entry, 0),"                              \
	" COALESCE((SELECT time FROM verdicts v WHERE v.agent = a.id ORDER BY id DESC LIMIT 1), 0)," \
	" COALESCE((SELECT trusted FROM verdicts v WHERE v.agent = a.id ORDER BY id DESC LIMIT 1), -1)," \
	" (SELECT COUNT(*) FROM violations x WHERE x.agent = a.id AND x.state = 'open')"

static void agent_summary_row(sqlite3_stmt *s, struct store_agent *a)
{
	const void *p;
	int n;

	text_copy(s, 0, a->id, sizeof(a->id));
	a->state = !strcmp((const char *)sqlite3_column_text(s, 1), "active") ? AGENT_ACTIVE
									       : AGENT_PENDING;
	p = sqlite3_column_blob(s, 2);
	n = sqlite3_column_bytes(s, 2);
	a->ak_name_len = 0;
	if (p && n > 0 && (size_t)n <= sizeof(a->ak_name)) {
		memcpy(a->ak_name, p, (size_t)n);
		a->ak_name_len = (size_t)n;
	}
	p = sqlite3_column_blob(s, 3);
	n = sqlite3_column_bytes(s, 3);
	memset(a->cred_digest, 0, sizeof(a->cred_digest));
	if (p && n == STORE_CRED_DIGEST_LEN)
		memcpy(a->cred_digest, p, STORE_CRED_DIGEST_LEN);
	text_copy(s, 4, a->policy, sizeof(a->policy));
	a->created_at = sqlite3_column_int64(s, 5);
	a->activated_at = sqlite3_column_int64(s, 6);
	a->boot_number = (uint64_t)sqlite3_column_int64(s, 7);
	a->next_entry = (uint64_t)sqlite3_column_int64(s, 8);
	a->last_verdict_at = sqlite3_column_int64(s, 9);
	a->last_trusted = sqlite3_column_int(s, 10);
	a->open_violations = (uint64_t)sqlite3_column_int64(s, 11);
}

/* Caller holds the lock. */
static int agent_get_locked(struct store *st, const char *id, struct store_agent *out)
{
	sqlite3_stmt *s = NULL;
	int rc, ret;

	memset(out, 0, sizeof(*out));
	ret = prepare(st,
		      "SELECT " AGENT_SUMMARY_COLS ", a.ek_pub, a.ek_cert, a.ak_pub"
		      " FROM agents a LEFT JOIN boot_state b ON b.agent = a.id WHERE a.id = ?",
		      &s);
	if (ret)
		return ret;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		ret = -ENOENT;
		goto out;
	}
	if (rc != SQLITE_ROW) {
		ret = db_fail(st, rc, "agent lookup");
		goto out;
	}
	agent_summary_row(s, out);
	if ((ret = blob_copy(s, 12, &out->ek_pub, &out->ek_pub_len)) ||
	    (ret = blob_copy(s, 13, &out->ek_cert, &out->ek_cert_len)) ||
	    (ret = blob_copy(s, 14, &out->ak_pub, &out->ak_pub_len)))
		store_agent_release(out);
out:
	finish(st, s);
	return ret;
}

int store_agent_get(struct store *st, const char *id, struct store_agent *out)
{
	int ret;

	lock(st);
	ret = agent_get_locked(st, id, out);
	unlock(st);
	return ret;
}

static bool same_blob(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

int store_agent_enroll(struct store *st, const struct store_agent *a, int64_t now,
		       enum store_enroll_result *result)
{
	struct store_agent cur;
	sqlite3_stmt *s = NULL;
	int ret, rc;
	bool exists;

	*result = STORE_ENROLL_CONFLICT;
	lock(st);
	if ((ret = begin(st)))
		goto out_unlock;
	ret = agent_get_locked(st, a->id, &cur);
	if (ret && ret != -ENOENT)
		goto out;
	exists = ret == 0;
	if (exists) {
		bool same_ek = same_blob(cur.ek_pub, cur.ek_pub_len, a->ek_pub, a->ek_pub_len);
		bool same_ak = same_blob(cur.ak_pub, cur.ak_pub_len, a->ak_pub, a->ak_pub_len);

		store_agent_release(&cur);
		/* The EK identifies the TPM: no other TPM may take over an id, pending or not. */
		if (!same_ek || (cur.state == AGENT_ACTIVE && !same_ak)) {
			*result = STORE_ENROLL_CONFLICT;
			ret = 0;
			goto out;
		}
		if (cur.state == AGENT_ACTIVE) {
			*result = STORE_ENROLL_ALREADY;
			ret = 0;
			goto out;
		}
		ret = prepare(st,
			      "UPDATE agents SET ek_cert = ?2, ak_pub = ?3, ak_name = ?4,"
			      " cred_digest = ?5 WHERE id = ?1 AND state = 'pending'",
			      &s);
	} else {
		ret = prepare(st,
			      "INSERT INTO agents(id, ek_cert, ak_pub, ak_name, cred_digest, ek_pub,"
			      " policy, state, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
			      " 'pending', ?8)",
			      &s);
	}
	if (ret)
		goto out;
	sqlite3_bind_text(s, 1, a->id, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s, 2, a->ek_cert, (int)a->ek_cert_len, SQLITE_STATIC);
	sqlite3_bind_blob(s, 3, a->ak_pub, (int)a->ak_pub_len, SQLITE_STATIC);
	sqlite3_bind_blob(s, 4, a->ak_name, (int)a->ak_name_len, SQLITE_STATIC);
	sqlite3_bind_blob(s, 5, a->cred_digest, STORE_CRED_DIGEST_LEN, SQLITE_STATIC);
	if (!exists) {
		sqlite3_bind_blob(s, 6, a->ek_pub, (int)a->ek_pub_len, SQLITE_STATIC);
		sqlite3_bind_text(s, 7, a->policy, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 8, now);
	}
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		ret = db_fail(st, rc, "agent enroll");
		goto out;
	}
	/* The old credential dies with the update: a pending activation with it now fails. */
	ret = commit(st);
	if (!ret)
		*result = exists ? STORE_ENROLL_REFRESHED : STORE_ENROLL_NEW;
out:
	finish(st, s);
	if (ret || *result == STORE_ENROLL_ALREADY || *result == STORE_ENROLL_CONFLICT)
		rollback(st);
out_unlock:
	unlock(st);
	return ret;
}

int store_agent_activate(struct store *st, const char *id,
			 const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now)
{
	sqlite3_stmt *s = NULL;
	int ret, rc;

	lock(st);
	ret = prepare(st,
		      "UPDATE agents SET state = 'active', activated_at = ?3"
		      " WHERE id = ?1 AND state = 'pending' AND cred_digest = ?2",
		      &s);
	if (ret)
		goto out;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s, 2, digest, STORE_CRED_DIGEST_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, now);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		ret = db_fail(st, rc, "agent activate");
		goto out;
	}
	if (sqlite3_changes(st->db) != 1)
		ret = -ESTALE;
out:
	finish(st, s);
	unlock(st);
	return ret;
}

int store_agent_set_policy(struct store *st, const char *id, const char *policy)
{
	sqlite3_stmt *s = NULL;
	int ret, rc;

	lock(st);
	if ((ret = prepare(st, "UPDATE agents SET policy = ?2 WHERE id = ?1", &s)))
		goto out;
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, policy, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		ret = db_fail(st, rc, "agent policy");
	else if (sqlite3_changes(st->db) != 1)
		ret = -ENOENT;
out:
	finish(st, s);
	unlock(st);
	return ret;
}

int store_agents_list(struct store *st, store_agent_cb cb, void *arg)
{
	sqlite3_stmt *s = NULL;
	struct store_agent a;
	int ret, rc;

	lock(st);
	ret = prepare(st,
		      "SELECT " AGENT_SUMMARY_COLS
		      " FROM agents a LEFT JOIN boot_state b ON b.agent = a.id ORDER BY a.id",
		      &s);
	if (ret)
		goto out;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		memset(&a, 0, sizeof(a));
		agent_summary_row(s, &a);
		if ((ret = cb(arg, &a)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(st, rc, "agents list");
out:
	finish(st, s);
	unlock(st);
	return ret;
}

/* Boot state and rounds ------------------------------------------------------------------ */

int store_boot_get(struct store *st, const char *agent, struct boot_state *out)
{
	sqlite3_stmt *s = NULL;
	int ret, rc;

	memset(out, 0, sizeof(*out));
	lock(st);
	if ((ret = prepare(st, "SELECT layout, state FROM boot_state WHERE agent = ?1", &s)))
		goto out;
	sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE)
		goto out; /* no evidence yet: started = false */
	if (rc != SQLITE_ROW) {
		ret = db_fail(st, rc, "boot state lookup");
		goto out;
	}
	{
		const uint8_t *p = sqlite3_column_blob(s, 1);
		int n = sqlite3_column_bytes(s, 1);
		uint32_t hdr[2];

		if (sqlite3_column_int(s, 0) != BOOT_STATE_LAYOUT || !p ||
		    n != (int)(sizeof(hdr) + sizeof(*out))) {
			log_error("store: boot state of agent \"%s\" has layout %d, size %d;"
				  " expected %u, %zu", agent, sqlite3_column_int(s, 0), n,
				  BOOT_STATE_LAYOUT, sizeof(hdr) + sizeof(*out));
			ret = -EINVAL;
			goto out;
		}
		memcpy(hdr, p, sizeof(hdr));
		if (hdr[0] != BOOT_STATE_LAYOUT || hdr[1] != sizeof(*out)) {
			ret = -EINVAL;
			goto out;
		}
		memcpy(out, p + sizeof(hdr), sizeof(*out));
	}
out:
	finish(st, s);
	unlock(st);
	return ret;
}

static int step_done(struct store *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);

	return rc == SQLITE_DONE ? 0 : db_fail(st, rc, what);
}

/* Writes one round inside the caller's transaction; the caller holds the lock. */
static int round_write(struct store *st, const struct store_round *r, int64_t *verdict_id)
{
	sqlite3_stmt *s = NULL;
	uint8_t blob[2 * sizeof(uint32_t) + sizeof(struct boot_state)];
	uint32_t hdr[2] = { BOOT_STATE_LAYOUT, sizeof(struct boot_state) };
	int ret;

	memcpy(blob, hdr, sizeof(hdr));
	memcpy(blob + sizeof(hdr), r->next, sizeof(*r->next));
	if ((ret = prepare(st,
			   "INSERT INTO boot_state(agent, layout, state, reset_count, restart_count,"
			   " boot_number, next_entry, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
			   " ON CONFLICT(agent) DO UPDATE SET layout = excluded.layout,"
			   " state = excluded.state, reset_count = excluded.reset_count,"
			   " restart_count = excluded.restart_count, boot_number = excluded.boot_number,"
			   " next_entry = excluded.next_entry, updated_at = excluded.updated_at",
			   &s)))
		goto out;
	sqlite3_bind_text(s, 1, r->agent, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, BOOT_STATE_LAYOUT);
	sqlite3_bind_blob(s, 3, blob, (int)sizeof(blob), SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, r->next->reset_count);
	sqlite3_bind_int64(s, 5, r->next->restart_count);
	sqlite3_bind_int64(s, 6, (int64_t)r->next->boot_number);
	sqlite3_bind_int64(s, 7, (int64_t)r->next->next_entry);
	sqlite3_bind_int64(s, 8, r->now);
	if ((ret = step_done(st, s, "boot state write")))
		goto out;
	finish(st, s);
	s = NULL;

	if ((ret = prepare(st,
			   "INSERT INTO verdicts(agent, boot_number, time, trusted, reasons,"
			   " next_offset) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
			   &s)))
		goto out;
	sqlite3_bind_text(s, 1, r->agent, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (int64_t)r->next->boot_number);
	sqlite3_bind_int64(s, 3, r->now);
	sqlite3_bind_int(s, 4, r->trusted ? 1 : 0);
	sqlite3_bind_text(s, 5, r->reasons_json ? r->reasons_json : "[]", -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 6, (int64_t)r->next_offset);
	if ((ret = step_done(st, s, "verdict write")))
		goto out;
	*verdict_id = sqlite3_last_insert_rowid(st->db);
	finish(st, s);
	s = NULL;

	/* One row per (agent, digest, path): a file seen again bumps count and last_seen. */
	if ((ret = prepare(st,
			   "INSERT INTO violations(agent, boot_number, entry, path, digest, template,"
			   " reason, first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)"
			   " ON CONFLICT(agent, digest, path) DO UPDATE SET"
			   " boot_number = excluded.boot_number, entry = excluded.entry,"
			   " reason = excluded.reason, last_seen = excluded.last_seen,"
			   " count = count + 1",
			   &s)))
		goto out;
	for (size_t i = 0; i < r->nviolations; i++) {
		const struct attest_violation *v = &r->violations[i];

		sqlite3_reset(s);
		sqlite3_bind_text(s, 1, r->agent, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (int64_t)r->next->boot_number);
		sqlite3_bind_int64(s, 3, (int64_t)v->entry);
		sqlite3_bind_text(s, 4, v->path, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 5, v->digest, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 6, v->template_name, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 7, reason_name(v->reason), -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 8, r->now);
		if ((ret = step_done(st, s, "violation write")))
			goto out;
	}
out:
	finish(st, s);
	return ret;
}

/*
 * Group commit. Every caller queues its round; whoever finds no commit running becomes the
 * leader: it takes everything queued, writes it in one transaction (one fsync for all), marks
 * each round done with its own result and wakes the others. Those whose round was not in that
 * batch elect the next leader among themselves. A round's failure (a constraint, a full disk
 * while writing) is confined to that round by its savepoint; a failed COMMIT fails the batch.
 * No caller returns before the transaction holding its round has committed or failed.
 */
static void batch_commit(struct store *st, struct round_waiter *batch)
{
	struct round_waiter *w;
	int ret;

	lock(st);
	ret = begin(st);
	for (w = batch; w; w = w->next) {
		if (ret) {
			w->ret = ret;
			continue;
		}
		if ((w->ret = run(st, "SAVEPOINT round")))
			continue;
		w->ret = round_write(st, w->r, &w->verdict_id);
		if (w->ret)
			run(st, "ROLLBACK TO round");
		run(st, "RELEASE round");
	}
	if (!ret && (ret = commit(st)) != 0)
		rollback(st);
	if (ret)
		for (w = batch; w; w = w->next)
			w->ret = w->ret ? w->ret : ret;
	unlock(st);
}

int store_round_commit(struct store *st, const struct store_round *r, int64_t *verdict_id)
{
	struct round_waiter me = { .r = r };

	pthread_mutex_lock(&st->qlock);
	*st->qtail = &me;
	st->qtail = &me.next;
	while (!me.done) {
		struct round_waiter *batch, *w, *next;

		if (st->committing) {
			pthread_cond_wait(&st->qcond, &st->qlock);
			continue;
		}
		st->committing = true;
		batch = st->qhead;
		st->qhead = NULL;
		st->qtail = &st->qhead;
		pthread_mutex_unlock(&st->qlock);
		batch_commit(st, batch);
		pthread_mutex_lock(&st->qlock);
		/* After done is set a waiter may return and its `me` vanish: read next first. */
		for (w = batch; w; w = next) {
			next = w->next;
			w->done = true;
		}
		st->committing = false;
		pthread_cond_broadcast(&st->qcond);
	}
	pthread_mutex_unlock(&st->qlock);
	if (!me.ret)
		*verdict_id = me.verdict_id;
	return me.ret;
}

int store_verdicts_list(struct store *st, const char *agent, unsigned limit,
			store_verdict_cb cb, void *arg)
{
	sqlite3_stmt *s = NULL;
	struct store_verdict v;
	int ret, rc;

	lock(st);
	if ((ret = prepare(st,
			   "SELECT id, agent, boot_number, time, trusted, reasons, next_offset"
			   " FROM verdicts WHERE agent = ?1 ORDER BY id DESC LIMIT ?2",
			   &s)))
		goto out;
	sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		memset(&v, 0, sizeof(v));
		v.id = sqlite3_column_int64(s, 0);
		text_copy(s, 1, v.agent, sizeof(v.agent));
		v.boot_number = (uint64_t)sqlite3_column_int64(s, 2);
		v.time = sqlite3_column_int64(s, 3);
		v.trusted = sqlite3_column_int(s, 4) != 0;
		v.reasons_json = (const char *)sqlite3_column_text(s, 5);
		v.next_offset = (uint64_t)sqlite3_column_int64(s, 6);
		if ((ret = cb(arg, &v)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(st, rc, "verdicts list");
out:
	finish(st, s);
	unlock(st);
	return ret;
}

/* Violations ----------------------------------------------------------------------------- */

static const char *col_text(sqlite3_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(s, col);

	return t ? (const char *)t : "";
}

#define VIOLATION_COLUMNS                                                                  \
	"id, agent, boot_number, entry, path, digest, template, reason, first_seen, last_seen," \
	" count, state"

/* Reads a row selected with VIOLATION_COLUMNS; the strings live until the next step. */
static void violation_from_row(sqlite3_stmt *s, struct store_violation *v)
{
	int vs;

	memset(v, 0, sizeof(*v));
	v->id = sqlite3_column_int64(s, 0);
	v->agent = col_text(s, 1);
	v->boot_number = (uint64_t)sqlite3_column_int64(s, 2);
	v->entry = (uint64_t)sqlite3_column_int64(s, 3);
	v->path = col_text(s, 4);
	v->digest = col_text(s, 5);
	v->template_name = col_text(s, 6);
	v->reason = col_text(s, 7);
	v->first_seen = sqlite3_column_int64(s, 8);
	v->last_seen = sqlite3_column_int64(s, 9);
	v->count = (uint64_t)sqlite3_column_int64(s, 10);
	vs = violation_state_from_str(col_text(s, 11));
	v->state = vs < 0 ? VIOLATION_OPEN : (enum violation_state)vs;
}

int store_violation_get(struct store *st, int64_t id, store_violation_cb cb, void *arg)
{
	sqlite3_stmt *s = NULL;
	struct store_violation v;
	int ret, rc;

	lock(st);
	if ((ret = prepare(st, "SELECT " VIOLATION_COLUMNS " FROM violations WHERE id = ?1", &s)))
		goto out;
	sqlite3_bind_int64(s, 1, id);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		violation_from_row(s, &v);
		ret = cb(arg, &v);
	} else if (rc == SQLITE_DONE) {
		ret = -ENOENT;
	} else {
		ret = db_fail(st, rc, "violation get");
	}
out:
	finish(st, s);
	unlock(st);
	return ret;
}

int store_violations_open_count(struct store *st, const char *agent, uint64_t boot_number,
				uint64_t *count)
{
	sqlite3_stmt *s = NULL;
	int ret, rc;

	*count = 0;
	lock(st);
	if ((ret = prepare(st,
			   "SELECT COUNT(*) FROM violations WHERE agent = ?1 AND boot_number = ?2"
			   " AND state = 'open'",
			   &s)))
		goto out;
	sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)boot_number);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*count = (uint64_t)sqlite3_column_int64(s, 0);
	else
		ret = db_fail(st, rc, "open violations");
out:
	finish(st, s);
	unlock(st);
	return ret;
}

int store_violations_list(struct store *st, int state, const char *agent, unsigned limit,
			  store_violation_cb cb, void *arg)
{
	sqlite3_stmt *s = NULL;
	struct store_violation v;
	int ret, rc;

	lock(st);
	if ((ret = prepare(st,
			   "SELECT " VIOLATION_COLUMNS " FROM violations"
			   " WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR agent = ?2)"
			   " ORDER BY last_seen DESC, id DESC LIMIT ?3",
			   &s)))
		goto out;
	if (state >= 0)
		sqlite3_bind_text(s, 1, violation_state_str((enum violation_state)state), -1,
				  SQLITE_STATIC);
	if (agent)
		sqlite3_bind_text(s, 2, agent, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		violation_from_row(s, &v);
		if ((ret = cb(arg, &v)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(st, rc, "violations list");
out:
	finish(st, s);
	unlock(st);
	return ret;
}

int store_violation_set_state(struct store *st, int64_t id, enum violation_state state)
{
	sqlite3_stmt *s = NULL;
	int ret;

	lock(st);
	if ((ret = prepare(st, "UPDATE violations SET state = ?2 WHERE id = ?1", &s)))
		goto out;
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, violation_state_str(state), -1, SQLITE_STATIC);
	if ((ret = step_done(st, s, "violation state")))
		goto out;
	if (sqlite3_changes(st->db) != 1)
		ret = -ENOENT;
out:
	finish(st, s);
	unlock(st);
	return ret;
}

/* Policies ------------------------------------------------------------------------------- */

int store_policy_put(struct store *st, const char *name, const char *json, const char *actor,
		     int64_t now, int64_t *version)
{
	sqlite3_stmt *s = NULL;
	int64_t cur = 0;
	int ret, rc;

	lock(st);
	if ((ret = begin(st)))
		goto out_unlock;
	if ((ret = prepare(st,
			   "SELECT version, json FROM policies WHERE name = ?1"
			   " ORDER BY version DESC LIMIT 1",
			   &s)))
		goto out;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		cur = sqlite3_column_int64(s, 0);
		if (!strcmp(col_text(s, 1), json)) {
			*version = cur;
			goto out; /* unchanged: no new version */
		}
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(st, rc, "policy lookup");
		goto out;
	}
	finish(st, s);
	s = NULL;
	if ((ret = prepare(st,
			   "INSERT INTO policies(name, version, json, actor, time)"
			   " VALUES (?1, ?2, ?3, ?4, ?5)",
			   &s)))
		goto out;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, cur + 1);
	sqlite3_bind_text(s, 3, json, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, actor, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, now);
	if ((ret = step_done(st, s, "policy write")))
		goto out;
	if (!(ret = commit(st)))
		*version = cur + 1;
out:
	finish(st, s);
	rollback(st);
out_unlock:
	unlock(st);
	return ret;
}

int store_policy_version(struct store *st, const char *name, int64_t *version)
{
	sqlite3_stmt *s = NULL;
	int ret, rc;

	*version = 0;
	lock(st);
	if ((ret = prepare(st, "SELECT max(version) FROM policies WHERE name = ?1", &s)))
		goto out;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW)
		ret = db_fail(st, rc, "policy version");
	else if (sqlite3_column_type(s, 0) == SQLITE_NULL)
		ret = -ENOENT;
	else
		*version = sqlite3_column_int64(s, 0);
out:
	finish(st, s);
	unlock(st);
	return ret;
}

int store_policy_get(struct store *st, const char *name, char **json, int64_t *version)
{
	sqlite3_stmt *s = NULL;
	int ret, rc;

	*json = NULL;
	lock(st);
	if ((ret = prepare(st,
			   "SELECT version, json FROM policies WHERE name = ?1"
			   " ORDER BY version DESC LIMIT 1",
			   &s)))
		goto out;
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		ret = -ENOENT;
		goto out;
	}
	if (rc != SQLITE_ROW) {
		ret = db_fail(st, rc, "policy lookup");
		goto out;
	}
	*version = sqlite3_column_int64(s, 0);
	*json = strdup(col_text(s, 1));
	if (!*json)
		ret = -ENOMEM;
out:
	finish(st, s);
	unlock(st);
	return ret;
}

/* Metrics -------------------------------------------------------------------------------- */

int store_counts(struct store *st, struct store_counts *out)
{
	sqlite3_stmt *s = NULL;
	int ret, rc;

	memset(out, 0, sizeof(*out));
	lock(st);
	if ((ret = prepare(st,
			   "SELECT (SELECT COUNT(*) FROM agents WHERE state = 'pending'),"
			   " (SELECT COUNT(*) FROM agents WHERE state = 'active'),"
			   " (SELECT COUNT(*) FROM violations WHERE state = 'open'),"
			   " (SELECT COUNT(*) FROM verdicts WHERE trusted = 1),"
			   " (SELECT COUNT(*) FROM verdicts WHERE trusted = 0)",
			   &s)))
		goto out;
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		ret = db_fail(st, rc, "counts");
		goto out;
	}
	out->agents_pending = (uint64_t)sqlite3_column_int64(s, 0);
	out->agents_active = (uint64_t)sqlite3_column_int64(s, 1);
	out->violations_open = (uint64_t)sqlite3_column_int64(s, 2);
	out->verdicts_trusted = (uint64_t)sqlite3_column_int64(s, 3);
	out->verdicts_untrusted = (uint64_t)sqlite3_column_int64(s, 4);
out:
	finish(st, s);
	unlock(st);
	return ret;
}
