/*
 * store_backend.h on SQLite ("sqlite:PATH"): one connection in WAL mode, synchronous=FULL,
 * serialized by a mutex.
 *
 * One connection and one mutex keep it simple and correct: every read sees every committed
 * write, and a multi-statement decision (enroll, commit a round) runs inside BEGIN IMMEDIATE
 * so no other caller can interleave. Rounds come in batches from store.c's group commit: the
 * fsync, not the SQL, is what a round costs, and one fsync covers every round of a batch.
 * The schema and its migrations are in store_sqlite_schema.c. SQLite errors are converted to
 * -EIO here, logged with SQLite's code and message.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/log.h"
#include "verifier/store/store_backend.h"
#include "verifier/store/store_sqlite.h"

#define AGENT_SUMMARY_COLS                                                                  \
	"a.id, a.state, a.ak_name, a.cred_digest, a.policy, a.created_at, a.activated_at,"    \
	" COALESCE(b.boot_number, 0), COALESCE(b.next_entry, 0),"                              \
	" COALESCE((SELECT time FROM verdicts v WHERE v.agent = a.id ORDER BY id DESC LIMIT 1), 0)," \
	" COALESCE((SELECT trusted FROM verdicts v WHERE v.agent = a.id ORDER BY id DESC LIMIT 1), -1)," \
	" (SELECT COUNT(*) FROM violations x WHERE x.agent = a.id AND x.state = 'open'),"     \
	" a.retired_at, a.reset_at, a.round_interval, a.stale_event_for,"                   \
	" COALESCE((SELECT v.policy || ' ' || v.policy_version || ' ' || v.amendment_version"  \
	"  FROM verdicts v WHERE v.agent = a.id ORDER BY id DESC LIMIT 1), ''),"               \
	" COALESCE((SELECT max(version) FROM policies WHERE name = 'agent/' || a.id), 0),"     \
	" COALESCE((SELECT max(version) FROM policies WHERE name = a.policy), 0)"

#define AGENT_SUMMARY_NCOLS 19 /* the columns above; what a query selects after them follows */

/* The fleet list's last column: the reasons of each agent's last verdict, in the same query. */
#define LAST_REASONS_COL                                                                    \
	"COALESCE((SELECT reasons FROM verdicts v WHERE v.agent = a.id ORDER BY id DESC LIMIT 1), '[]')"

#define VIOLATION_COLUMNS                                                                  \
	"id, agent, boot_number, entry, path, digest, template, reason, first_seen, last_seen," \
	" count, state, COALESCE(recurs, 0), decided_at, decision"

/*
 * Every statement the store runs, prepared once when the store opens (compiling SQL was
 * most of the store's CPU) and used by its name. A statement is used by one caller at a time
 * (the lock) and goes back with finish().
 */
enum stmt {
	STMT_BEGIN,
	STMT_COMMIT,
	STMT_ROLLBACK,
	STMT_SAVEPOINT,
	STMT_ROLLBACK_TO,
	STMT_RELEASE,
	STMT_AGENT_GET,
	STMT_AGENT_REFRESH,
	STMT_AGENT_INSERT,
	STMT_AGENT_ACTIVATE,
	STMT_ACTIVATE_FACTS,
	STMT_PENDING_EXPIRE,
	STMT_ENROLL_FACTS,
	STMT_AGENT_SET_POLICY,
	STMT_AGENTS_LIST,
	STMT_BOOT_GET,
	STMT_BOOT_INSERT,
	STMT_BOOT_UPDATE,
	STMT_BOOT_LOG_GET,
	STMT_BOOT_LOG_PUT,
	STMT_VERDICT_INSERT,
	STMT_VIOLATION_NEWEST,
	STMT_VIOLATION_INSERT,
	STMT_VIOLATION_AGAIN,
	STMT_VERDICTS_LIST,
	STMT_VIOLATION_GET,
	STMT_VIOLATIONS_OPEN_COUNT,
	STMT_VIOLATIONS_LIST,
	STMT_VIOLATION_DECIDE,
	STMT_POLICY_NEWEST,
	STMT_POLICY_INSERT,
	STMT_POLICY_VERSION,
	STMT_POLICY_GET_VERSION,
	STMT_POLICY_VERSIONS,
	STMT_POLICY_AGENTS,
	STMT_COUNTS,
	STMT_NONCE_SPEND,
	STMT_NONCES_PRUNE,
	STMT_ROUND_CONTEXT,
	/* issue 16 */
	STMT_AGENT_REPLACE,
	STMT_AGENT_STATE,
	STMT_AGENT_INTERVAL,
	STMT_AGENT_RETIRE,
	STMT_AGENT_RESET,
	STMT_AGENT_MARK_STALE,
	STMT_BOOT_RESTART,
	STMT_BOOT_LOG_DELETE,
	STMT_LAST_TRUSTED,
	STMT_HISTORY_ADD,
	STMT_HISTORY_LIST,
	STMT_OUTBOX_ADD,
	STMT_OUTBOX_DUE,
	STMT_OUTBOX_CLAIM,
	STMT_OUTBOX_DELETE,
	STMT_OUTBOX_RETRY,
	STMT_OUTBOX_PENDING,
	STMT_PURGE_AGENT,
	STMT_PURGE_BOOT_STATE,
	STMT_PURGE_BOOT_LOG,
	STMT_PURGE_VERDICTS,
	STMT_PURGE_VIOLATIONS,
	STMT_PURGE_AMENDMENT,
	STMT_PURGE_HISTORY,
	STMT_COUNT /* the number of statements */
};

static const char *const stmt_sql[STMT_COUNT] = {
	[STMT_BEGIN] = "BEGIN IMMEDIATE",
	[STMT_COMMIT] = "COMMIT",
	[STMT_ROLLBACK] = "ROLLBACK",
	[STMT_SAVEPOINT] = "SAVEPOINT round",
	[STMT_ROLLBACK_TO] = "ROLLBACK TO round",
	[STMT_RELEASE] = "RELEASE round",
	[STMT_AGENT_GET] =
		"SELECT " AGENT_SUMMARY_COLS ", a.ek_pub, a.ek_cert, a.ak_pub"
		" FROM agents a LEFT JOIN boot_state b ON b.agent = a.id WHERE a.id = ?",
	/* A re-enrollment restarts the pending enrollment's time to live. */
	[STMT_AGENT_REFRESH] =
		"UPDATE agents SET ek_cert = ?2, ak_pub = ?3, ak_name = ?4,"
		" cred_digest = ?5, enrolled_at = ?8, reset_at = 0 WHERE id = ?1 AND state = 'pending'",
	[STMT_AGENT_INSERT] =
		"INSERT INTO agents(id, ek_cert, ak_pub, ak_name, cred_digest, ek_pub,"
		" policy, state, created_at, enrolled_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
		" 'pending', ?8, ?8)",
	[STMT_AGENT_ACTIVATE] =
		"UPDATE agents SET state = 'active', activated_at = ?3"
		" WHERE id = ?1 AND state = 'pending' AND cred_digest = ?2",
	[STMT_ACTIVATE_FACTS] =
		"SELECT a.state, a.cred_digest, a.enrolled_at, EXISTS(SELECT 1 FROM agents o"
		" WHERE o.ek_pub = a.ek_pub AND o.state = 'active' AND o.id != a.id)"
		" FROM agents a WHERE a.id = ?1",
	/* Only pending agents: they have no boot state, verdicts or violations to lose. */
	[STMT_PENDING_EXPIRE] =
		"DELETE FROM agents WHERE state = 'pending' AND enrolled_at <= ?1",
	[STMT_ENROLL_FACTS] =
		"SELECT EXISTS(SELECT 1 FROM agents WHERE ek_pub = ?1 AND state = 'active'"
		" AND id != ?2),"
		" (SELECT COUNT(*) FROM agents WHERE ek_pub = ?1 AND state = 'pending' AND id != ?2),"
		" (SELECT COUNT(*) FROM agents WHERE state = 'pending')",
	[STMT_AGENT_SET_POLICY] = "UPDATE agents SET policy = ?2 WHERE id = ?1",
	[STMT_AGENTS_LIST] =
		"SELECT " AGENT_SUMMARY_COLS ", " LAST_REASONS_COL
		" FROM agents a LEFT JOIN boot_state b ON b.agent = a.id ORDER BY a.id",
	[STMT_BOOT_GET] = "SELECT state, version FROM boot_state WHERE agent = ?1",
	/*
	 * The compare-and-swap of store_round_commit(): version 0 is "no row yet". Only for an
	 * agent still active: one retired (or re-enrolled) while its round was judged writes none.
	 */
	[STMT_BOOT_INSERT] =
		"INSERT INTO boot_state(agent, state, reset_count, restart_count,"
		" boot_number, next_entry, updated_at, version)"
		" SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, 1"
		" WHERE EXISTS(SELECT 1 FROM agents WHERE id = ?1 AND state = 'active')"
		" ON CONFLICT(agent) DO NOTHING",
	[STMT_BOOT_UPDATE] =
		"UPDATE boot_state SET state = ?2, reset_count = ?3, restart_count = ?4,"
		" boot_number = ?5, next_entry = ?6, updated_at = ?7, version = version + 1"
		" WHERE agent = ?1 AND version = ?8"
		" AND EXISTS(SELECT 1 FROM agents WHERE id = ?1 AND state = 'active')",
	[STMT_BOOT_LOG_GET] =
		"SELECT log, sha256, cmdline, judged_boot, judged_key, summary, received_at"
		" FROM boot_logs WHERE agent = ?1",
	[STMT_BOOT_LOG_PUT] =
		"INSERT INTO boot_logs(agent, log, sha256, cmdline, judged_boot, judged_key, summary,"
		" received_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
		" ON CONFLICT(agent) DO UPDATE SET"
		" log = excluded.log, sha256 = excluded.sha256, cmdline = excluded.cmdline,"
		" judged_boot = excluded.judged_boot, judged_key = excluded.judged_key,"
		" summary = excluded.summary, received_at = excluded.received_at,"
		" updated_at = excluded.updated_at",
	[STMT_VERDICT_INSERT] =
		"INSERT INTO verdicts(agent, boot_number, time, trusted, reasons,"
		" next_offset, policy, policy_version, amendment_version)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
	/*
	 * A violation's newest row decides what a new occurrence does (round_violation()): there
	 * is at most one open row per (agent, reason, path, digest) and it is always the newest.
	 */
	[STMT_VIOLATION_NEWEST] =
		"SELECT id, state, boot_number, entry FROM violations"
		" WHERE agent = ?1 AND reason = ?2 AND path = ?3 AND digest = ?4"
		" ORDER BY id DESC LIMIT 1",
	[STMT_VIOLATION_INSERT] =
		"INSERT INTO violations(agent, reason, path, digest, boot_number, entry, template,"
		" first_seen, last_seen, count, recurs)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10)",
	[STMT_VIOLATION_AGAIN] =
		"UPDATE violations SET boot_number = ?2, entry = ?3, last_seen = ?4,"
		" count = count + ?5 WHERE id = ?1",
	[STMT_VERDICTS_LIST] =
		"SELECT id, agent, boot_number, time, trusted, reasons, next_offset,"
		" policy, policy_version, amendment_version"
		" FROM verdicts WHERE agent = ?1 ORDER BY id DESC LIMIT ?2",
	[STMT_VIOLATION_GET] = "SELECT " VIOLATION_COLUMNS " FROM violations WHERE id = ?1",
	[STMT_VIOLATIONS_OPEN_COUNT] =
		"SELECT COUNT(*), COALESCE(SUM(boot_number = ?2), 0) FROM violations"
		" WHERE agent = ?1 AND state = 'open'",
	[STMT_VIOLATIONS_LIST] =
		"SELECT " VIOLATION_COLUMNS " FROM violations"
		" WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR agent = ?2)"
		" ORDER BY last_seen DESC, id DESC LIMIT ?3",
	[STMT_VIOLATION_DECIDE] =
		"UPDATE violations SET state = ?2, decided_at = ?3, decision = ?4"
		" WHERE id = ?1 AND state = 'open'",
	[STMT_POLICY_NEWEST] =
		"SELECT version, json FROM policies WHERE name = ?1"
		" ORDER BY version DESC LIMIT 1",
	[STMT_POLICY_INSERT] =
		"INSERT INTO policies(name, version, json, actor, time)"
		" VALUES (?1, ?2, ?3, ?4, ?5)",
	[STMT_POLICY_VERSION] = "SELECT max(version) FROM policies WHERE name = ?1",
	[STMT_POLICY_GET_VERSION] = "SELECT json FROM policies WHERE name = ?1 AND version = ?2",
	[STMT_POLICY_VERSIONS] =
		"SELECT version, actor, time, length(CAST(json AS BLOB)) FROM policies"
		" WHERE name = ?1 ORDER BY version DESC",
	[STMT_POLICY_AGENTS] = "SELECT COUNT(*) FROM agents WHERE policy = ?1",
	[STMT_COUNTS] =
		"SELECT (SELECT COUNT(*) FROM agents WHERE state = 'pending'),"
		" (SELECT COUNT(*) FROM agents WHERE state = 'active'),"
		" (SELECT COUNT(*) FROM violations WHERE state = 'open'),"
		" (SELECT COUNT(*) FROM verdicts WHERE trusted = 1),"
		" (SELECT COUNT(*) FROM verdicts WHERE trusted = 0),"
		" (SELECT COUNT(*) FROM agents WHERE state = 'retired')",
	/* Single use of a challenge across verifiers (store.h, struct store_round). */
	[STMT_NONCE_SPEND] =
		"INSERT INTO spent_nonces(nonce, agent, expires_at) VALUES (?1, ?2, ?3)"
		" ON CONFLICT(nonce) DO NOTHING",
	[STMT_NONCES_PRUNE] = "DELETE FROM spent_nonces WHERE expires_at < ?1",
	/* store_round_context(): everything a round reads, in one statement. */
	[STMT_ROUND_CONTEXT] =
		"SELECT a.state, a.policy, a.ak_name, b.state, COALESCE(b.version, 0),"
		" (SELECT COUNT(*) FROM violations x WHERE x.agent = a.id AND x.state = 'open'),"
		" (SELECT COUNT(*) FROM violations x WHERE x.agent = a.id AND x.state = 'open'"
		"  AND x.boot_number = COALESCE(b.boot_number, 0)),"
		" l.sha256,"
		" COALESCE((SELECT max(version) FROM policies"
		"  WHERE name = CASE a.policy WHEN '' THEN ?2 ELSE a.policy END), 0),"
		" COALESCE((SELECT max(version) FROM policies WHERE name = ?3), 0)"
		" FROM agents a LEFT JOIN boot_state b ON b.agent = a.id"
		" LEFT JOIN boot_logs l ON l.agent = a.id WHERE a.id = ?1",
	/* A reset agent's next enrollment: new keys, pending again, its history kept. */
	[STMT_AGENT_REPLACE] =
		"UPDATE agents SET ek_cert = ?2, ak_pub = ?3, ak_name = ?4, cred_digest = ?5,"
		" ek_pub = ?6, state = 'pending', enrolled_at = ?8, activated_at = 0,"
		" retired_at = 0, reset_at = 0, stale_event_for = 0 WHERE id = ?1",
	[STMT_AGENT_STATE] = "SELECT state FROM agents WHERE id = ?1",
	[STMT_AGENT_INTERVAL] =
		"UPDATE agents SET round_interval = ?2 WHERE id = ?1 AND round_interval != ?2",
	[STMT_AGENT_RETIRE] =
		"UPDATE agents SET state = 'retired', retired_at = ?2, reset_at = 0"
		" WHERE id = ?1 AND state != 'retired'",
	[STMT_AGENT_RESET] = "UPDATE agents SET reset_at = ?2 WHERE id = ?1 AND reset_at = 0",
	/* Once per silence: the last-seen time the caller computed is still the agent's. */
	[STMT_AGENT_MARK_STALE] =
		"UPDATE agents SET stale_event_for = ?2 WHERE id = ?1 AND state = 'active'"
		" AND stale_event_for != ?2 AND max(activated_at, COALESCE((SELECT time FROM"
		" verdicts v WHERE v.agent = ?1 ORDER BY v.id DESC LIMIT 1), 0)) = ?2",
	/* A new TPM or AK: its boot session starts over, the boot numbers go on. */
	[STMT_BOOT_RESTART] =
		"UPDATE boot_state SET state = ?2, reset_count = 0, restart_count = 0, next_entry = 0,"
		" updated_at = ?3, version = version + 1 WHERE agent = ?1",
	[STMT_BOOT_LOG_DELETE] = "DELETE FROM boot_logs WHERE agent = ?1",
	[STMT_LAST_TRUSTED] =
		"SELECT trusted FROM verdicts WHERE agent = ?1 ORDER BY id DESC LIMIT 1",
	[STMT_HISTORY_ADD] =
		"INSERT INTO agent_history(agent, time, event, actor, detail)"
		" VALUES (?1, ?2, ?3, ?4, ?5)",
	[STMT_HISTORY_LIST] =
		"SELECT id, time, event, actor, detail FROM agent_history WHERE agent = ?1"
		" ORDER BY id DESC LIMIT ?2",
	[STMT_OUTBOX_ADD] =
		"INSERT INTO webhook_outbox(event_id, target, type, agent, created_at, body,"
		" next_attempt_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?5)",
	[STMT_OUTBOX_DUE] =
		"SELECT id, event_id, target, type, agent, created_at, body, attempts"
		" FROM webhook_outbox WHERE target = ?1 AND next_attempt_at <= ?2"
		" ORDER BY id LIMIT ?3",
	[STMT_OUTBOX_CLAIM] = "UPDATE webhook_outbox SET next_attempt_at = ?2 WHERE id = ?1",
	[STMT_OUTBOX_DELETE] = "DELETE FROM webhook_outbox WHERE id = ?1",
	[STMT_OUTBOX_RETRY] =
		"UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = ?2,"
		" last_error = ?3 WHERE id = ?1",
	[STMT_OUTBOX_PENDING] =
		"SELECT COUNT(*) FROM webhook_outbox WHERE (?1 IS NULL OR target = ?1)",
	[STMT_PURGE_AGENT] = "DELETE FROM agents WHERE id = ?1",
	[STMT_PURGE_BOOT_STATE] = "DELETE FROM boot_state WHERE agent = ?1",
	[STMT_PURGE_BOOT_LOG] = "DELETE FROM boot_logs WHERE agent = ?1",
	[STMT_PURGE_VERDICTS] = "DELETE FROM verdicts WHERE agent = ?1",
	[STMT_PURGE_VIOLATIONS] = "DELETE FROM violations WHERE agent = ?1",
	[STMT_PURGE_AMENDMENT] = "DELETE FROM policies WHERE name = ?2",
	[STMT_PURGE_HISTORY] = "DELETE FROM agent_history WHERE agent = ?1",
};

struct sqlite_store {
	struct store_backend base; /* first: store.c holds a pointer to it */
	sqlite3 *db;
	pthread_mutex_t lock; /* the connection and the statements */
	sqlite3_stmt *stmt[STMT_COUNT];
	int64_t nonces_pruned; /* when spent challenges were last pruned */
};

static struct sqlite_store *sq(struct store_backend *b)
{
	return (struct sqlite_store *)b;
}

/* Logs SQLite's own code and message, returns -EIO. */
static int db_fail(struct sqlite_store *st, int rc, const char *what)
{
	log_error("store: %s failed: sqlite error %d \"%s\"", what, rc,
		  st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
	return -EIO;
}

/* The prepared statement `id`, for one use; give it back with finish(). */
static sqlite3_stmt *stmt(struct sqlite_store *st, enum stmt id)
{
	return st->stmt[id];
}

/*
 * Returns a statement: reset (which also ends its read transaction, so the next use sees the
 * newest commit) and unbound (bindings may point into the caller's memory). NULL-safe.
 */
static void finish(sqlite3_stmt *s)
{
	if (!s)
		return;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
}

static int step_done(struct sqlite_store *st, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);

	return rc == SQLITE_DONE ? 0 : db_fail(st, rc, what);
}

/* One statement without rows (BEGIN, COMMIT, SAVEPOINT ...). */
static int run(struct sqlite_store *st, enum stmt id)
{
	sqlite3_stmt *s = stmt(st, id);
	int ret = step_done(st, s, stmt_sql[id]);

	finish(s);
	return ret;
}

static void lock(struct sqlite_store *st)
{
	pthread_mutex_lock(&st->lock);
}

static void unlock(struct sqlite_store *st)
{
	pthread_mutex_unlock(&st->lock);
}

static int begin(struct sqlite_store *st)
{
	return run(st, STMT_BEGIN);
}

static int commit(struct sqlite_store *st)
{
	return run(st, STMT_COMMIT);
}

static void rollback(struct sqlite_store *st)
{
	if (!sqlite3_get_autocommit(st->db))
		run(st, STMT_ROLLBACK);
}

static void sq_close(struct store_backend *b)
{
	struct sqlite_store *st = sq(b);

	for (unsigned i = 0; i < STMT_COUNT; i++)
		sqlite3_finalize(st->stmt[i]);
	if (st->db) {
		int rc = sqlite3_close(st->db);

		if (rc != SQLITE_OK)
			log_error("store: close failed: sqlite error %d", rc);
	}
	pthread_mutex_destroy(&st->lock);
	free(st);
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

static int sq_open(const char *path, struct store_backend **out)
{
	struct sqlite_store *st;
	int rc, ret;

	*out = NULL;
	if (!path[0]) {
		log_error("store: \"sqlite:\" names no file: give sqlite:PATH");
		return -EINVAL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->base.ops = &store_sqlite_ops;
	pthread_mutex_init(&st->lock, NULL);
	rc = sqlite3_open_v2(path, &st->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL);
	if (rc != SQLITE_OK) {
		ret = db_fail(st, rc, "open");
		goto fail;
	}
	sqlite3_busy_timeout(st->db, 5000);
	/* WAL: readers do not block the writer; FULL: a COMMIT is on disk when it returns. */
	if ((ret = store_sqlite_exec(st->db, "PRAGMA journal_mode=WAL")) ||
	    (ret = store_sqlite_exec(st->db, "PRAGMA synchronous=FULL")) ||
	    (ret = store_sqlite_exec(st->db, "PRAGMA foreign_keys=ON")) ||
	    (ret = store_sqlite_migrate(st->db, db_name(st->db, path))))
		goto fail;
	for (unsigned i = 0; i < STMT_COUNT; i++) {
		rc = sqlite3_prepare_v3(st->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
					&st->stmt[i], NULL);
		if (rc != SQLITE_OK) {
			ret = db_fail(st, rc, "prepare");
			goto fail;
		}
	}
	*out = &st->base;
	return 0;
fail:
	sq_close(&st->base);
	return ret;
}

/* History and webhook events (issue 16); the caller holds the lock inside a transaction. -- */

static int history_add(struct sqlite_store *st, const char *agent, int64_t now, const char *event,
		       const char *actor, const char *detail)
{
	sqlite3_stmt *s = stmt(st, STMT_HISTORY_ADD);
	int ret;

	sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, now);
	sqlite3_bind_text(s, 3, event, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, actor, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, detail ? detail : "", -1, SQLITE_STATIC);
	ret = step_done(st, s, "agent history write");
	finish(s);
	return ret;
}

/* Writes event e into the outbox: one row per webhook target (store_event_rows()). */
static int raise_event(struct sqlite_store *st, const struct store_event *e)
{
	struct store_event_rows rows;
	int ret = store_event_rows(&st->base, e, &rows);

	for (size_t i = 0; !ret && i < rows.ntargets; i++) {
		sqlite3_stmt *s = stmt(st, STMT_OUTBOX_ADD);

		sqlite3_bind_text(s, 1, rows.id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, rows.targets[i], -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, store_event_type_str(e->type), -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, e->agent, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, e->time);
		sqlite3_bind_text(s, 6, rows.body, -1, SQLITE_STATIC);
		ret = step_done(st, s, "webhook outbox write");
		finish(s);
	}
	store_event_rows_release(&rows);
	return ret;
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

static const char *col_text(sqlite3_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(s, col);

	return t ? (const char *)t : "";
}

static void text_copy(sqlite3_stmt *s, int col, char *out, size_t cap)
{
	const unsigned char *t = sqlite3_column_text(s, col);

	snprintf(out, cap, "%s", t ? (const char *)t : "");
}

static void agent_summary_row(sqlite3_stmt *s, struct store_agent *a)
{
	const void *p;
	int n;

	const char *state = col_text(s, 1);

	text_copy(s, 0, a->id, sizeof(a->id));
	a->state = !strcmp(state, "active")    ? AGENT_ACTIVE
		   : !strcmp(state, "retired") ? AGENT_RETIRED
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
	a->retired_at = sqlite3_column_int64(s, 12);
	a->reset_at = sqlite3_column_int64(s, 13);
	a->interval = (uint32_t)sqlite3_column_int64(s, 14);
	a->stale_event_for = sqlite3_column_int64(s, 15);
	store_judged_versions_parse(col_text(s, 16), &a->judged);
	a->amendment_version = sqlite3_column_int64(s, 17);
	a->policy_version = sqlite3_column_int64(s, 18);
}

/* Caller holds the lock. */
static int agent_get_locked(struct sqlite_store *st, const char *id, struct store_agent *out)
{
	sqlite3_stmt *s = stmt(st, STMT_AGENT_GET);
	int rc, ret = 0;

	memset(out, 0, sizeof(*out));
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
	if ((ret = blob_copy(s, AGENT_SUMMARY_NCOLS, &out->ek_pub, &out->ek_pub_len)) ||
	    (ret = blob_copy(s, AGENT_SUMMARY_NCOLS + 1, &out->ek_cert, &out->ek_cert_len)) ||
	    (ret = blob_copy(s, AGENT_SUMMARY_NCOLS + 2, &out->ak_pub, &out->ak_pub_len)))
		store_agent_release(out);
out:
	finish(s);
	return ret;
}

static int sq_agent_get(struct store_backend *b, const char *id, struct store_agent *out)
{
	struct sqlite_store *st = sq(b);
	int ret;

	lock(st);
	ret = agent_get_locked(st, id, out);
	unlock(st);
	return ret;
}

/* Deletes expired pending enrollments, then counts what the enrollment rule needs. */
static int enroll_facts(struct sqlite_store *st, const struct store_agent *a, int64_t now,
			const struct store_enroll_limits *lim, struct store_enroll_facts *f)
{
	sqlite3_stmt *s = stmt(st, STMT_PENDING_EXPIRE);
	int ret, rc, expired;

	memset(f, 0, sizeof(*f));
	sqlite3_bind_int64(s, 1, now - lim->pending_ttl);
	ret = step_done(st, s, "expiry of pending enrollments");
	expired = sqlite3_changes(st->db);
	finish(s);
	if (ret)
		return ret;
	if (expired > 0)
		log_info("store: %d pending enrollments older than %lld s expired", expired,
			 (long long)lim->pending_ttl);
	s = stmt(st, STMT_ENROLL_FACTS);
	sqlite3_bind_blob(s, 1, a->ek_pub, (int)a->ek_pub_len, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, a->id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		f->ek_active_elsewhere = sqlite3_column_int(s, 0) != 0;
		f->ek_pending_elsewhere = (uint64_t)sqlite3_column_int64(s, 1);
		f->pending = (uint64_t)sqlite3_column_int64(s, 2);
	} else {
		ret = db_fail(st, rc, "enrollment facts");
	}
	finish(s);
	return ret;
}

/*
 * After a reset agent enrolled with new keys: its boot session starts over (the next round is
 * a first one; boot numbers go on from the last, so its violations stay apart), the event log
 * of the old machine goes, the history says so. The caller holds the transaction.
 */
static int enroll_replaced(struct sqlite_store *st, const char *id, int64_t now)
{
	uint8_t blob[BOOT_STATE_ENCODED_LEN];
	struct boot_state bs;
	sqlite3_stmt *s = stmt(st, STMT_BOOT_GET);
	int ret = 0, rc;

	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	memset(&bs, 0, sizeof(bs));
	if (rc == SQLITE_ROW) {
		const uint8_t *p = sqlite3_column_blob(s, 0);
		int n = sqlite3_column_bytes(s, 0);

		if (n < 0 || boot_state_decode(p, (size_t)n, &bs)) {
			log_error("store: boot state of agent \"%s\" does not decode", id);
			ret = -EINVAL;
		}
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(st, rc, "boot state lookup");
	}
	finish(s);
	if (ret)
		return ret;
	if (rc == SQLITE_ROW) {
		uint64_t boot_number = bs.boot_number;

		memset(&bs, 0, sizeof(bs));
		bs.boot_number = boot_number; /* started = false: the next round is a first one */
		boot_state_encode(&bs, blob);
		s = stmt(st, STMT_BOOT_RESTART);
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_blob(s, 2, blob, (int)sizeof(blob), SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, now);
		ret = step_done(st, s, "boot state restart");
		finish(s);
		if (ret)
			return ret;
	}
	s = stmt(st, STMT_BOOT_LOG_DELETE);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	ret = step_done(st, s, "boot log delete");
	finish(s);
	return ret ? ret : history_add(st, id, now, "re-enrolled", "agent",
				       "new EK and AK after a reset; pending activation");
}

static int sq_agent_enroll(struct store_backend *b, const struct store_agent *a, int64_t now,
			   const struct store_enroll_limits *lim,
			   enum store_enroll_result *result)
{
	struct sqlite_store *st = sq(b);
	struct store_enroll_facts facts;
	struct store_agent cur;
	sqlite3_stmt *s = NULL;
	int ret, rc;
	bool exists;

	*result = STORE_ENROLL_CONFLICT;
	lock(st);
	if ((ret = begin(st)))
		goto out_unlock;
	if ((ret = enroll_facts(st, a, now, lim, &facts)))
		goto out;
	ret = agent_get_locked(st, a->id, &cur);
	if (ret && ret != -ENOENT)
		goto out;
	exists = ret == 0;
	ret = 0;
	*result = store_enroll_decide(exists ? &cur : NULL, a, &facts, lim);
	if (exists)
		store_agent_release(&cur);
	if (*result != STORE_ENROLL_NEW && *result != STORE_ENROLL_REFRESHED &&
	    *result != STORE_ENROLL_REPLACED) {
		/* Refused: only the expiry is kept (it would happen at the next enrollment). */
		ret = commit(st);
		goto out;
	}
	s = stmt(st, *result == STORE_ENROLL_NEW ? STMT_AGENT_INSERT
		     : *result == STORE_ENROLL_REPLACED ? STMT_AGENT_REPLACE : STMT_AGENT_REFRESH);
	sqlite3_bind_text(s, 1, a->id, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s, 2, a->ek_cert, (int)a->ek_cert_len, SQLITE_STATIC);
	sqlite3_bind_blob(s, 3, a->ak_pub, (int)a->ak_pub_len, SQLITE_STATIC);
	sqlite3_bind_blob(s, 4, a->ak_name, (int)a->ak_name_len, SQLITE_STATIC);
	sqlite3_bind_blob(s, 5, a->cred_digest, STORE_CRED_DIGEST_LEN, SQLITE_STATIC);
	if (*result != STORE_ENROLL_REFRESHED)
		sqlite3_bind_blob(s, 6, a->ek_pub, (int)a->ek_pub_len, SQLITE_STATIC);
	if (*result == STORE_ENROLL_NEW)
		sqlite3_bind_text(s, 7, a->policy, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, now);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		ret = db_fail(st, rc, "agent enroll");
		goto out;
	}
	finish(s);
	s = NULL;
	if (*result == STORE_ENROLL_NEW)
		ret = history_add(st, a->id, now, "enrolled", "agent", "pending activation");
	else if (*result == STORE_ENROLL_REPLACED)
		ret = enroll_replaced(st, a->id, now);
	if (ret)
		goto out;
	/* The old credential dies with the update: a pending activation with it now fails. */
	ret = commit(st);
out:
	if (ret)
		*result = STORE_ENROLL_CONFLICT;
	finish(s);
	rollback(st); /* a no-op after a commit */
out_unlock:
	unlock(st);
	return ret;
}

/* Why a pending agent may not become active now: 0 if it may. Caller holds the lock. */
static int activate_check(struct sqlite_store *st, const char *id,
			  const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now,
			  const struct store_enroll_limits *lim)
{
	sqlite3_stmt *s = stmt(st, STMT_ACTIVATE_FACTS);
	const void *cred;
	int ret = 0, rc;

	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		ret = -ESTALE; /* unknown (or expired and deleted by an enrollment since) */
		goto out;
	}
	if (rc != SQLITE_ROW) {
		ret = db_fail(st, rc, "agent activate");
		goto out;
	}
	cred = sqlite3_column_blob(s, 1);
	if (strcmp((const char *)sqlite3_column_text(s, 0), "pending") != 0 || !cred ||
	    sqlite3_column_bytes(s, 1) != STORE_CRED_DIGEST_LEN ||
	    memcmp(cred, digest, STORE_CRED_DIGEST_LEN) != 0)
		ret = -ESTALE;
	else if (sqlite3_column_int64(s, 2) <= now - lim->pending_ttl)
		ret = -ETIMEDOUT;
	else if (sqlite3_column_int(s, 3))
		ret = -EEXIST;
out:
	finish(s);
	return ret;
}

/* The history row and the agent.enrolled event of an activation, in its transaction. */
static int activated(struct sqlite_store *st, const char *id, int64_t now)
{
	struct store_agent a;
	struct store_event e;
	int ret = history_add(st, id, now, "activated", "agent", "its AK is trusted");

	if (ret || !st->base.targets || !st->base.targets->n)
		return ret;
	if ((ret = agent_get_locked(st, id, &a)))
		return ret;
	memset(&e, 0, sizeof(e));
	e.type = STORE_EVENT_ENROLLED;
	e.agent = id;
	e.time = now;
	e.ak_name = a.ak_name;
	e.ak_name_len = a.ak_name_len;
	ret = raise_event(st, &e);
	store_agent_release(&a);
	return ret;
}

static int sq_agent_activate(struct store_backend *b, const char *id,
			     const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now,
			     const struct store_enroll_limits *lim)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s = NULL;
	int ret;

	lock(st);
	/* One transaction: two pending ids of one EK activated at once cannot both win. */
	if ((ret = begin(st)))
		goto out_unlock;
	if ((ret = activate_check(st, id, digest, now, lim)))
		goto out;
	s = stmt(st, STMT_AGENT_ACTIVATE);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s, 2, digest, STORE_CRED_DIGEST_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, now);
	if ((ret = step_done(st, s, "agent activate")))
		goto out;
	if (sqlite3_changes(st->db) != 1) {
		ret = -ESTALE;
		goto out;
	}
	finish(s);
	s = NULL;
	ret = activated(st, id, now);
	if (!ret)
		ret = commit(st);
out:
	finish(s);
	rollback(st);
out_unlock:
	unlock(st);
	return ret;
}

static int sq_agent_set_policy(struct store_backend *b, const char *id, const char *policy)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	int ret = 0, rc;

	lock(st);
	s = stmt(st, STMT_AGENT_SET_POLICY);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, policy, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE)
		ret = db_fail(st, rc, "agent policy");
	else if (sqlite3_changes(st->db) != 1)
		ret = -ENOENT;
	finish(s);
	unlock(st);
	return ret;
}

static int sq_agents_list(struct store_backend *b, store_agent_cb cb, void *arg)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	struct store_agent a;
	int ret = 0, rc;

	lock(st);
	s = stmt(st, STMT_AGENTS_LIST);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		memset(&a, 0, sizeof(a));
		agent_summary_row(s, &a);
		a.last_reasons_json = col_text(s, AGENT_SUMMARY_NCOLS);
		if ((ret = cb(arg, &a)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(st, rc, "agents list");
out:
	finish(s);
	unlock(st);
	return ret;
}

/* Boot state and rounds ------------------------------------------------------------------ */

static int sq_boot_get(struct store_backend *b, const char *agent, struct boot_state *out,
		       uint64_t *version)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	int ret = 0, rc;

	memset(out, 0, sizeof(*out));
	*version = 0;
	lock(st);
	s = stmt(st, STMT_BOOT_GET);
	sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE)
		goto out; /* no evidence yet: started = false */
	if (rc != SQLITE_ROW) {
		ret = db_fail(st, rc, "boot state lookup");
		goto out;
	}
	{
		const uint8_t *p = sqlite3_column_blob(s, 0);
		int n = sqlite3_column_bytes(s, 0);

		if (n < 0 || boot_state_decode(p, (size_t)n, out)) {
			log_error("store: boot state of agent \"%s\" does not decode: %d bytes,"
				  " version %d; expected %u bytes, version %u",
				  agent, n, p && n > 0 ? p[0] : -1, BOOT_STATE_ENCODED_LEN,
				  BOOT_STATE_VERSION);
			ret = -EINVAL;
		} else {
			*version = (uint64_t)sqlite3_column_int64(s, 1);
		}
	}
out:
	finish(s);
	unlock(st);
	return ret;
}

static int sq_round_context(struct store_backend *b, const char *agent,
			    const char *default_policy, const char *amendment,
			    struct store_round_ctx *out)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	const void *p;
	int ret = 0, rc, n;

	memset(out, 0, sizeof(*out));
	lock(st);
	s = stmt(st, STMT_ROUND_CONTEXT);
	sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, default_policy, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, amendment, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		ret = -ENOENT;
		goto out;
	}
	if (rc != SQLITE_ROW) {
		ret = db_fail(st, rc, "round context");
		goto out;
	}
	out->state = agent_state_of(col_text(s, 0));
	text_copy(s, 1, out->policy, sizeof(out->policy));
	p = sqlite3_column_blob(s, 2);
	n = sqlite3_column_bytes(s, 2);
	if (p && n > 0 && (size_t)n <= sizeof(out->ak_name)) {
		memcpy(out->ak_name, p, (size_t)n);
		out->ak_name_len = (size_t)n;
	}
	if (sqlite3_column_type(s, 3) != SQLITE_NULL) {
		p = sqlite3_column_blob(s, 3);
		n = sqlite3_column_bytes(s, 3);
		if (n < 0 || boot_state_decode(p, (size_t)n, &out->boot)) {
			log_error("store: boot state of agent \"%s\" does not decode (%d bytes)",
				  agent, n);
			ret = -EINVAL;
			goto out;
		}
		out->version = (uint64_t)sqlite3_column_int64(s, 4);
	}
	out->open_violations = (uint64_t)sqlite3_column_int64(s, 5);
	out->open_violations_in_boot = (uint64_t)sqlite3_column_int64(s, 6);
	if (sqlite3_column_bytes(s, 7) == 32) {
		out->has_boot_log = true;
		memcpy(out->boot_log_sha256, sqlite3_column_blob(s, 7), 32);
	}
	out->policy_version = sqlite3_column_int64(s, 8);
	out->amendment_version = sqlite3_column_int64(s, 9);
out:
	finish(s);
	unlock(st);
	if (ret)
		memset(&out->boot, 0, sizeof(out->boot));
	return ret;
}

/*
 * A path is bound as the bytes it is (a BLOB), never as text: it need not be UTF-8. No path at
 * all is NULL, which the NOT NULL column refuses.
 */
static void bind_path(sqlite3_stmt *s, int col, const char *path, size_t len)
{
	if (!path)
		sqlite3_bind_null(s, col);
	else if (len)
		sqlite3_bind_blob(s, col, path, (int)len, SQLITE_STATIC);
	else
		sqlite3_bind_zeroblob(s, col, 0);
}

/*
 * One violation of a round (store.h, store_round_commit()): a new open row, a recurrence after
 * a decision (a new open row naming the decided one), more of an open one, or entries sent
 * again, which change nothing. The caller holds the lock inside a transaction.
 */
static int round_violation(struct sqlite_store *st, const struct store_round *r,
			   const struct store_round_violation *v)
{
	size_t plen = v->path_len || !v->path ? v->path_len : strlen(v->path);
	uint64_t count = v->count ? v->count : 1;
	uint64_t last = v->last_entry > v->entry ? v->last_entry : v->entry;
	uint64_t boot = r->next->boot_number;
	int64_t newest = 0, recurs = 0;
	bool open = false, resent = false;
	sqlite3_stmt *s;
	int ret = 0, rc;

	s = stmt(st, STMT_VIOLATION_NEWEST);
	sqlite3_bind_text(s, 1, r->agent, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, v->reason, -1, SQLITE_STATIC);
	bind_path(s, 3, v->path, plen);
	sqlite3_bind_text(s, 4, v->digest, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		int state = violation_state_from_str(col_text(s, 1));

		newest = sqlite3_column_int64(s, 0);
		open = state == VIOLATION_OPEN;
		/*
		 * The same boot, nothing past the entry already counted: a resent tail (or a boot
		 * judged again). Not for an approved row: approval taught a policy or amendment
		 * to allow this, so it comes back only because that was withdrawn (a rollback).
		 */
		resent = (uint64_t)sqlite3_column_int64(s, 2) == boot &&
			 last <= (uint64_t)sqlite3_column_int64(s, 3) &&
			 state != VIOLATION_APPROVED;
	} else if (rc != SQLITE_DONE) {
		ret = db_fail(st, rc, "violation lookup");
	}
	finish(s);
	if (ret || resent)
		return ret;
	if (open) {
		s = stmt(st, STMT_VIOLATION_AGAIN);
		sqlite3_bind_int64(s, 1, newest);
		sqlite3_bind_int64(s, 2, (int64_t)boot);
		sqlite3_bind_int64(s, 3, (int64_t)last);
		sqlite3_bind_int64(s, 4, r->now);
		sqlite3_bind_int64(s, 5, (int64_t)count);
		ret = step_done(st, s, "violation update");
		finish(s);
		return ret;
	}
	recurs = newest; /* 0: the first time; else it recurs after an operator's decision */
	s = stmt(st, STMT_VIOLATION_INSERT);
	sqlite3_bind_text(s, 1, r->agent, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, v->reason, -1, SQLITE_STATIC);
	bind_path(s, 3, v->path, plen);
	sqlite3_bind_text(s, 4, v->digest, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, (int64_t)boot);
	sqlite3_bind_int64(s, 6, (int64_t)last);
	sqlite3_bind_text(s, 7, v->template_name ? v->template_name : "", -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, r->now);
	sqlite3_bind_int64(s, 9, (int64_t)count);
	if (recurs)
		sqlite3_bind_int64(s, 10, recurs);
	ret = step_done(st, s, "violation write");
	finish(s);
	if (!ret && st->base.targets && st->base.targets->n) {
		struct store_event e = {
			.type = STORE_EVENT_VIOLATION, .agent = r->agent, .time = r->now,
			.violation_id = sqlite3_last_insert_rowid(st->db), .reason = v->reason,
			.path = v->path, .path_len = plen, .digest = v->digest, .entry = last,
			.count = count, .recurs = recurs, .boot_number = boot,
		};

		ret = raise_event(st, &e);
	}
	return ret;
}

/* A copy of column col of s (NUL-terminated for text); 0, or -ENOMEM. NULL column: *out NULL. */
static int column_dup(sqlite3_stmt *s, int col, void **out, size_t *len)
{
	const void *p = sqlite3_column_type(s, col) == SQLITE_NULL ? NULL : sqlite3_column_blob(s, col);
	int n = sqlite3_column_bytes(s, col);

	*out = NULL;
	if (len)
		*len = 0;
	if (!p)
		return 0;
	*out = malloc((size_t)n + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, p, (size_t)n);
	((char *)*out)[n] = '\0';
	if (len)
		*len = (size_t)n;
	return 0;
}

static int sq_boot_log_get(struct store_backend *b, const char *agent, struct store_boot_log *out)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	void *p;
	int ret = 0, rc;

	memset(out, 0, sizeof(*out));
	lock(st);
	s = stmt(st, STMT_BOOT_LOG_GET);
	sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE) {
		ret = -ENOENT;
		goto out;
	}
	if (rc != SQLITE_ROW) {
		ret = db_fail(st, rc, "boot log lookup");
		goto out;
	}
	if (sqlite3_column_bytes(s, 1) != 32) {
		log_error("store: the boot log of agent \"%s\" has no sha256", agent);
		ret = -EINVAL;
		goto out;
	}
	memcpy(out->sha256, sqlite3_column_blob(s, 1), 32);
	if (sqlite3_column_bytes(s, 4) == 32)
		memcpy(out->judged_key, sqlite3_column_blob(s, 4), 32);
	out->judged_boot = (uint64_t)sqlite3_column_int64(s, 3);
	out->received_at = sqlite3_column_int64(s, 6);
	if ((ret = column_dup(s, 0, &p, &out->log_len)) == 0) {
		out->log = p;
		if ((ret = column_dup(s, 2, &p, NULL)) == 0) {
			out->cmdline = p;
			if ((ret = column_dup(s, 5, &p, NULL)) == 0)
				out->summary = p;
		}
	}
	if (!ret && !out->log)
		ret = -EINVAL;
out:
	finish(s);
	unlock(st);
	if (ret)
		store_boot_log_release(out);
	return ret;
}

static int boot_log_write(struct sqlite_store *st, const struct store_round *r)
{
	const struct store_boot_log *bl = r->boot_log;
	sqlite3_stmt *s = stmt(st, STMT_BOOT_LOG_PUT);
	int ret;

	sqlite3_bind_text(s, 1, r->agent, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s, 2, bl->log ? (const void *)bl->log : "", (int)bl->log_len, SQLITE_STATIC);
	sqlite3_bind_blob(s, 3, bl->sha256, 32, SQLITE_STATIC);
	if (bl->cmdline)
		sqlite3_bind_text(s, 4, bl->cmdline, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, (int64_t)bl->judged_boot);
	sqlite3_bind_blob(s, 6, bl->judged_key, 32, SQLITE_STATIC);
	if (bl->summary)
		sqlite3_bind_text(s, 7, bl->summary, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, bl->received_at);
	sqlite3_bind_int64(s, 9, r->now);
	ret = step_done(st, s, "boot log write");
	finish(s);
	return ret;
}

/* Whether agent id is still active (a failed compare-and-swap: a newer round, or not). */
static bool still_active(struct sqlite_store *st, const char *id)
{
	sqlite3_stmt *s = stmt(st, STMT_AGENT_STATE);
	bool active;

	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	active = sqlite3_step(s) == SQLITE_ROW && !strcmp(col_text(s, 0), "active");
	finish(s);
	return active;
}

/* Writes one round inside the caller's transaction; the caller holds the lock. */
static int round_write(struct sqlite_store *st, const struct store_round *r, int64_t *verdict_id)
{
	uint8_t blob[BOOT_STATE_ENCODED_LEN];
	bool changed, turned = false;
	sqlite3_stmt *s;
	int ret, rc;

	if (r->nonce_len) {
		s = stmt(st, STMT_NONCE_SPEND);
		sqlite3_bind_blob(s, 1, r->nonce, (int)r->nonce_len, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, r->agent, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, r->nonce_expires);
		ret = step_done(st, s, "challenge spend");
		if (!ret && sqlite3_changes(st->db) != 1)
			ret = -EALREADY;
		finish(s);
		if (ret)
			return ret;
	}
	boot_state_encode(r->next, blob);
	/* Compare-and-swap: only over the version this round read, else nothing is written. */
	s = stmt(st, r->prev_version ? STMT_BOOT_UPDATE : STMT_BOOT_INSERT);
	sqlite3_bind_text(s, 1, r->agent, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s, 2, blob, (int)sizeof(blob), SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, r->next->reset_count);
	sqlite3_bind_int64(s, 4, r->next->restart_count);
	sqlite3_bind_int64(s, 5, (int64_t)r->next->boot_number);
	sqlite3_bind_int64(s, 6, (int64_t)r->next->next_entry);
	sqlite3_bind_int64(s, 7, r->now);
	if (r->prev_version)
		sqlite3_bind_int64(s, 8, (int64_t)r->prev_version);
	ret = step_done(st, s, "boot state write");
	changed = sqlite3_changes(st->db) == 1;
	finish(s);
	if (!ret && !changed)
		ret = still_active(st, r->agent) ? -ESTALE : -EKEYREVOKED;
	if (!ret && r->boot_log)
		ret = boot_log_write(st, r);
	if (!ret && r->interval) {
		s = stmt(st, STMT_AGENT_INTERVAL);
		sqlite3_bind_text(s, 1, r->agent, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, r->interval);
		ret = step_done(st, s, "agent interval");
		finish(s);
	}
	/* agent.untrusted when it turns so: its last verdict was trusted, or it had none. */
	if (!ret && !r->trusted && st->base.targets && st->base.targets->n) {
		s = stmt(st, STMT_LAST_TRUSTED);
		sqlite3_bind_text(s, 1, r->agent, -1, SQLITE_STATIC);
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW)
			turned = sqlite3_column_int(s, 0) != 0;
		else if (rc == SQLITE_DONE)
			turned = true;
		else
			ret = db_fail(st, rc, "last verdict");
		finish(s);
	}
	if (ret)
		return ret;

	s = stmt(st, STMT_VERDICT_INSERT);
	sqlite3_bind_text(s, 1, r->agent, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (int64_t)r->next->boot_number);
	sqlite3_bind_int64(s, 3, r->now);
	sqlite3_bind_int(s, 4, r->trusted ? 1 : 0);
	sqlite3_bind_text(s, 5, r->reasons_json ? r->reasons_json : "[]", -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 6, (int64_t)r->next_offset);
	sqlite3_bind_text(s, 7, r->judged && r->judged->known ? r->judged->policy : "", -1,
			  SQLITE_STATIC);
	sqlite3_bind_int64(s, 8, r->judged && r->judged->known ? r->judged->policy_version : 0);
	sqlite3_bind_int64(s, 9, r->judged && r->judged->known ? r->judged->amendment_version : 0);
	ret = step_done(st, s, "verdict write");
	if (!ret)
		*verdict_id = sqlite3_last_insert_rowid(st->db);
	finish(s);
	if (!ret && turned) {
		struct store_event e = {
			.type = STORE_EVENT_UNTRUSTED, .agent = r->agent, .time = r->now,
			.verdict_id = *verdict_id, .boot_number = r->next->boot_number,
			.reasons_json = r->reasons_json,
		};

		ret = raise_event(st, &e);
	}
	if (ret)
		return ret;

	for (size_t i = 0; i < r->nviolations && !ret; i++)
		ret = round_violation(st, r, &r->violations[i]);
	return ret;
}

/* store_backend.h: one transaction for the batch, a savepoint per round. */
static void sq_commit_rounds(struct store_backend *b, struct store_pending_round *batch)
{
	struct sqlite_store *st = sq(b);
	struct store_pending_round *w;
	int ret;

	lock(st);
	ret = begin(st);
	for (w = batch; w; w = w->next) {
		if (ret) {
			w->ret = ret;
			continue;
		}
		if ((w->ret = run(st, STMT_SAVEPOINT)))
			continue;
		w->ret = round_write(st, w->r, &w->verdict_id);
		if (w->ret)
			run(st, STMT_ROLLBACK_TO);
		run(st, STMT_RELEASE);
	}
	if (!ret && batch && batch->r->now - st->nonces_pruned >= STORE_NONCES_PRUNE_EVERY) {
		/* A spent challenge is refused as expired once past its expiry: forget it then. */
		sqlite3_stmt *s = stmt(st, STMT_NONCES_PRUNE);

		st->nonces_pruned = batch->r->now;
		sqlite3_bind_int64(s, 1, batch->r->now - STORE_NONCES_KEEP);
		if (step_done(st, s, "spent challenges prune"))
			log_warn("store: spent challenges not pruned; the next batch tries again");
		finish(s);
	}
	if (!ret && (ret = commit(st)) != 0)
		rollback(st);
	if (ret)
		for (w = batch; w; w = w->next)
			w->ret = w->ret ? w->ret : ret;
	unlock(st);
}

static int sq_verdicts_list(struct store_backend *b, const char *agent, unsigned limit,
			    store_verdict_cb cb, void *arg)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	struct store_verdict v;
	int ret = 0, rc;

	lock(st);
	s = stmt(st, STMT_VERDICTS_LIST);
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
		text_copy(s, 7, v.judged.policy, sizeof(v.judged.policy));
		v.judged.known = v.judged.policy[0] != '\0';
		v.judged.policy_version = sqlite3_column_int64(s, 8);
		v.judged.amendment_version = sqlite3_column_int64(s, 9);
		if ((ret = cb(arg, &v)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(st, rc, "verdicts list");
out:
	finish(s);
	unlock(st);
	return ret;
}

/* Violations ----------------------------------------------------------------------------- */

/* Reads a row selected with VIOLATION_COLUMNS; the strings live until the next step. */
static void violation_from_row(sqlite3_stmt *s, struct store_violation *v)
{
	int vs;

	memset(v, 0, sizeof(*v));
	v->id = sqlite3_column_int64(s, 0);
	v->agent = col_text(s, 1);
	v->boot_number = (uint64_t)sqlite3_column_int64(s, 2);
	v->entry = (uint64_t)sqlite3_column_int64(s, 3);
	/* A BLOB read as text: its bytes, unchanged, with a NUL after them. */
	v->path = col_text(s, 4);
	v->path_len = (size_t)sqlite3_column_bytes(s, 4);
	v->digest = col_text(s, 5);
	v->template_name = col_text(s, 6);
	v->reason = col_text(s, 7);
	v->first_seen = sqlite3_column_int64(s, 8);
	v->last_seen = sqlite3_column_int64(s, 9);
	v->count = (uint64_t)sqlite3_column_int64(s, 10);
	vs = violation_state_from_str(col_text(s, 11));
	v->state = vs < 0 ? VIOLATION_OPEN : (enum violation_state)vs;
	v->recurs = sqlite3_column_int64(s, 12);
	v->decided_at = sqlite3_column_int64(s, 13);
	v->decision = col_text(s, 14);
}

static int sq_violation_get(struct store_backend *b, int64_t id, store_violation_cb cb,
			    void *arg)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	struct store_violation v;
	int ret, rc;

	lock(st);
	s = stmt(st, STMT_VIOLATION_GET);
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
	finish(s);
	unlock(st);
	return ret;
}

static int sq_violations_open_count(struct store_backend *b, const char *agent,
				    uint64_t boot_number, uint64_t *total, uint64_t *in_boot)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	int ret = 0, rc;

	*total = *in_boot = 0;
	lock(st);
	s = stmt(st, STMT_VIOLATIONS_OPEN_COUNT);
	sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, (sqlite3_int64)boot_number);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*total = (uint64_t)sqlite3_column_int64(s, 0);
		*in_boot = (uint64_t)sqlite3_column_int64(s, 1);
	} else {
		ret = db_fail(st, rc, "open violations");
	}
	finish(s);
	unlock(st);
	return ret;
}

static int sq_violations_list(struct store_backend *b, int state, const char *agent,
			      unsigned limit, store_violation_cb cb, void *arg)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	struct store_violation v;
	int ret = 0, rc;

	lock(st);
	s = stmt(st, STMT_VIOLATIONS_LIST);
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
	finish(s);
	unlock(st);
	return ret;
}

static int sq_violation_decide(struct store_backend *b, int64_t id, enum violation_state state,
			       int64_t now, const char *decision)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	int ret, rc;

	lock(st);
	s = stmt(st, STMT_VIOLATION_DECIDE);
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_text(s, 2, violation_state_str(state), -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, now);
	sqlite3_bind_text(s, 4, decision, -1, SQLITE_STATIC);
	ret = step_done(st, s, "violation decision");
	finish(s);
	if (!ret && sqlite3_changes(st->db) != 1) {
		/* Not open: decided already, or no such violation. */
		s = stmt(st, STMT_VIOLATION_GET);
		sqlite3_bind_int64(s, 1, id);
		rc = sqlite3_step(s);
		ret = rc == SQLITE_ROW ? -EALREADY : rc == SQLITE_DONE ? -ENOENT
								     : db_fail(st, rc, "violation get");
		finish(s);
	}
	unlock(st);
	return ret;
}

/* Policies ------------------------------------------------------------------------------- */

static int sq_policy_put(struct store_backend *b, const char *name, int64_t expected,
			 const char *json, const char *actor, int64_t now, int64_t *version)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s = NULL;
	int64_t cur = 0;
	int ret, rc;

	lock(st);
	if ((ret = begin(st)))
		goto out_unlock;
	s = stmt(st, STMT_POLICY_NEWEST);
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		ret = db_fail(st, rc, "policy lookup");
		goto out;
	}
	if (rc == SQLITE_ROW)
		cur = sqlite3_column_int64(s, 0);
	if (expected != STORE_POLICY_ANY && cur != expected) {
		*version = cur;
		ret = -ESTALE; /* written since the caller read it */
		goto out;
	}
	if (rc == SQLITE_ROW && !strcmp(col_text(s, 1), json)) {
		*version = cur;
		goto out; /* unchanged: no new version */
	}
	finish(s);
	s = stmt(st, STMT_POLICY_INSERT);
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
	finish(s);
	rollback(st);
out_unlock:
	unlock(st);
	return ret;
}

static int sq_policy_version(struct store_backend *b, const char *name, int64_t *version)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	int ret = 0, rc;

	*version = 0;
	lock(st);
	s = stmt(st, STMT_POLICY_VERSION);
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW)
		ret = db_fail(st, rc, "policy version");
	else if (sqlite3_column_type(s, 0) == SQLITE_NULL)
		ret = -ENOENT;
	else
		*version = sqlite3_column_int64(s, 0);
	finish(s);
	unlock(st);
	return ret;
}

static int sq_policy_get(struct store_backend *b, const char *name, char **json,
			 int64_t *version)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	int ret = 0, rc;

	*json = NULL;
	lock(st);
	s = stmt(st, STMT_POLICY_NEWEST);
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
	finish(s);
	unlock(st);
	return ret;
}

static int sq_policy_get_version(struct store_backend *b, const char *name, int64_t version,
				 char **json)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	int ret = 0, rc;

	*json = NULL;
	lock(st);
	s = stmt(st, STMT_POLICY_GET_VERSION);
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, version);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		ret = (*json = strdup(col_text(s, 0))) ? 0 : -ENOMEM;
	else
		ret = rc == SQLITE_DONE ? -ENOENT : db_fail(st, rc, "policy version lookup");
	finish(s);
	unlock(st);
	return ret;
}

static int sq_policy_versions(struct store_backend *b, const char *name,
			      store_policy_version_cb cb, void *arg)
{
	struct sqlite_store *st = sq(b);
	struct store_policy_version v;
	sqlite3_stmt *s;
	int ret = 0, rc;

	lock(st);
	s = stmt(st, STMT_POLICY_VERSIONS);
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		v.version = sqlite3_column_int64(s, 0);
		v.actor = col_text(s, 1);
		v.time = sqlite3_column_int64(s, 2);
		v.bytes = (uint64_t)sqlite3_column_int64(s, 3);
		if ((ret = cb(arg, &v)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(st, rc, "policy versions");
out:
	finish(s);
	unlock(st);
	return ret;
}

static int sq_policy_agents(struct store_backend *b, const char *name, uint64_t *count)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	int ret = 0, rc;

	*count = 0;
	lock(st);
	s = stmt(st, STMT_POLICY_AGENTS);
	sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*count = (uint64_t)sqlite3_column_int64(s, 0);
	else
		ret = db_fail(st, rc, "policy agents");
	finish(s);
	unlock(st);
	return ret;
}

/* Metrics -------------------------------------------------------------------------------- */

static int sq_counts(struct store_backend *b, struct store_counts *out)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	int ret = 0, rc;

	memset(out, 0, sizeof(*out));
	lock(st);
	s = stmt(st, STMT_COUNTS);
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
	out->agents_retired = (uint64_t)sqlite3_column_int64(s, 5);
out:
	finish(s);
	unlock(st);
	return ret;
}

/* Lifecycle, liveness, webhook outbox (issue 16) ---------------------------------------- */

/* One statement on agent id (?1) without rows, inside the caller's transaction. */
static int run_on(struct sqlite_store *st, enum stmt id, const char *agent, const char *name2)
{
	sqlite3_stmt *s = stmt(st, id);
	int ret;

	sqlite3_bind_text(s, 1, agent, -1, SQLITE_STATIC);
	if (name2)
		sqlite3_bind_text(s, 2, name2, -1, SQLITE_STATIC);
	ret = step_done(st, s, stmt_sql[id]);
	finish(s);
	return ret;
}

/* Everything stored for agent id; the caller holds the transaction. */
static int purge(struct sqlite_store *st, const char *id)
{
	char amendment[STORE_AMENDMENT_NAME_MAX + 1];
	static const enum stmt steps[] = {
		STMT_PURGE_BOOT_STATE, STMT_PURGE_BOOT_LOG, STMT_PURGE_VERDICTS,
		STMT_PURGE_VIOLATIONS, STMT_PURGE_AMENDMENT, STMT_PURGE_HISTORY, STMT_PURGE_AGENT,
	};
	int ret = 0;

	store_amendment_name(id, amendment);
	for (size_t i = 0; !ret && i < sizeof(steps) / sizeof(steps[0]); i++)
		ret = run_on(st, steps[i], id, steps[i] == STMT_PURGE_AMENDMENT ? amendment : NULL);
	return ret;
}

static int sq_agent_retire(struct store_backend *b, const char *id, int64_t now,
			   const char *actor, bool purge_all)
{
	struct sqlite_store *st = sq(b);
	struct store_agent a;
	struct store_event e;
	sqlite3_stmt *s;
	int ret;

	lock(st);
	if ((ret = begin(st)))
		goto out_unlock;
	if ((ret = agent_get_locked(st, id, &a)))
		goto out;
	store_agent_release(&a);
	if (purge_all) {
		ret = purge(st, id);
	} else {
		s = stmt(st, STMT_AGENT_RETIRE);
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, now);
		ret = step_done(st, s, "agent retire");
		if (!ret && sqlite3_changes(st->db) != 1)
			ret = -EALREADY;
		finish(s);
		if (!ret)
			ret = history_add(st, id, now, "retired", actor,
					  "evidence refused; its EK may enroll under another id");
	}
	if (ret)
		goto out;
	memset(&e, 0, sizeof(e));
	e.type = STORE_EVENT_RETIRED;
	e.agent = id;
	e.time = now;
	e.actor = actor;
	e.purged = purge_all;
	if (!(ret = raise_event(st, &e)))
		ret = commit(st);
out:
	rollback(st);
out_unlock:
	unlock(st);
	return ret;
}

static int sq_agent_reset(struct store_backend *b, const char *id, int64_t now,
			  const char *actor)
{
	struct sqlite_store *st = sq(b);
	struct store_event e;
	sqlite3_stmt *s;
	int ret;

	lock(st);
	if ((ret = begin(st)))
		goto out_unlock;
	s = stmt(st, STMT_AGENT_RESET);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, now);
	ret = step_done(st, s, "agent reset");
	if (!ret && sqlite3_changes(st->db) != 1) {
		finish(s);
		s = stmt(st, STMT_AGENT_STATE);
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		ret = sqlite3_step(s) == SQLITE_ROW ? -EALREADY : -ENOENT;
	}
	finish(s);
	if (!ret)
		ret = history_add(st, id, now, "reset", actor,
				  "its next enrollment may bring a new EK and AK");
	if (ret)
		goto out;
	memset(&e, 0, sizeof(e));
	e.type = STORE_EVENT_RESET;
	e.agent = id;
	e.time = now;
	e.actor = actor;
	if (!(ret = raise_event(st, &e)))
		ret = commit(st);
out:
	rollback(st);
out_unlock:
	unlock(st);
	return ret;
}

static int sq_agent_history(struct store_backend *b, const char *id, unsigned limit,
			    store_agent_event_cb cb, void *arg)
{
	struct sqlite_store *st = sq(b);
	struct store_agent_event e;
	sqlite3_stmt *s;
	int ret = 0, rc;

	lock(st);
	s = stmt(st, STMT_HISTORY_LIST);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, limit);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		e.id = sqlite3_column_int64(s, 0);
		e.time = sqlite3_column_int64(s, 1);
		e.event = col_text(s, 2);
		e.actor = col_text(s, 3);
		e.detail = col_text(s, 4);
		if ((ret = cb(arg, &e)))
			goto out;
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(st, rc, "agent history");
out:
	finish(s);
	unlock(st);
	return ret;
}

static int sq_agent_mark_stale(struct store_backend *b, const char *id, int64_t last_seen,
			       uint32_t interval, int64_t stale_after, int64_t now)
{
	struct sqlite_store *st = sq(b);
	struct store_event e;
	sqlite3_stmt *s;
	int ret;

	lock(st);
	if ((ret = begin(st)))
		goto out_unlock;
	s = stmt(st, STMT_AGENT_MARK_STALE);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, last_seen);
	ret = step_done(st, s, "agent stale");
	if (!ret && sqlite3_changes(st->db) != 1) {
		finish(s);
		s = stmt(st, STMT_AGENT_STATE);
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		ret = sqlite3_step(s) == SQLITE_ROW ? -EALREADY : -ENOENT;
	}
	finish(s);
	if (ret)
		goto out;
	memset(&e, 0, sizeof(e));
	e.type = STORE_EVENT_STALE;
	e.agent = id;
	e.time = now;
	e.last_seen = last_seen;
	e.interval = interval;
	e.stale_after = stale_after;
	if (!(ret = raise_event(st, &e)))
		ret = commit(st);
out:
	rollback(st);
out_unlock:
	unlock(st);
	return ret;
}

/* A claimed row, copied: the cursor's strings die with the next step. */
struct claimed {
	struct store_outbox_row r;
	char *strings;
};

static int sq_outbox_claim(struct store_backend *b, const char *target, int64_t now,
			   int64_t lease, unsigned limit, store_outbox_cb cb, void *arg)
{
	struct sqlite_store *st = sq(b);
	struct claimed *rows = NULL;
	size_t n = 0;
	sqlite3_stmt *s;
	int ret, rc;

	if (limit == 0)
		return 0;
	rows = calloc(limit, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	lock(st);
	if ((ret = begin(st)))
		goto out_unlock;
	s = stmt(st, STMT_OUTBOX_DUE);
	sqlite3_bind_text(s, 1, target, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, now);
	sqlite3_bind_int64(s, 3, limit);
	while (n < limit && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *f[5] = { col_text(s, 1), col_text(s, 2), col_text(s, 3), col_text(s, 4),
				     col_text(s, 6) };
		size_t len[5], total = 0;
		char *p;

		for (int i = 0; i < 5; i++)
			total += (len[i] = strlen(f[i]) + 1);
		p = rows[n].strings = malloc(total);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		for (int i = 0; i < 5; i++) {
			memcpy(p, f[i], len[i]);
			f[i] = p;
			p += len[i];
		}
		rows[n].r = (struct store_outbox_row){
			.id = sqlite3_column_int64(s, 0), .event_id = f[0], .target = f[1],
			.type = f[2], .agent = f[3], .created_at = sqlite3_column_int64(s, 5),
			.body = f[4], .attempts = (uint32_t)sqlite3_column_int64(s, 7),
		};
		n++;
	}
	if (!ret && n < limit && rc != SQLITE_DONE)
		ret = db_fail(st, rc, "webhook outbox read");
	finish(s);
	for (size_t i = 0; !ret && i < n; i++) {
		s = stmt(st, STMT_OUTBOX_CLAIM);
		sqlite3_bind_int64(s, 1, rows[i].r.id);
		sqlite3_bind_int64(s, 2, now + lease);
		ret = step_done(st, s, "webhook outbox claim");
		finish(s);
	}
	if (!ret)
		ret = commit(st);
	rollback(st);
out_unlock:
	unlock(st);
	/* Outside the lock: the caller delivers them (HTTP) from its callback. */
	for (size_t i = 0; !ret && i < n; i++)
		ret = cb(arg, &rows[i].r);
	for (size_t i = 0; i < n; i++)
		free(rows[i].strings);
	free(rows);
	return ret;
}

/* One statement on row `row` (?1) that must change it: -ENOENT if it is gone. */
static int outbox_update(struct sqlite_store *st, enum stmt id, int64_t row, int64_t next_at,
			 const char *error)
{
	sqlite3_stmt *s;
	int ret;

	lock(st);
	s = stmt(st, id);
	sqlite3_bind_int64(s, 1, row);
	if (id == STMT_OUTBOX_RETRY) {
		sqlite3_bind_int64(s, 2, next_at);
		sqlite3_bind_text(s, 3, error, -1, SQLITE_STATIC);
	}
	ret = step_done(st, s, stmt_sql[id]);
	if (!ret && sqlite3_changes(st->db) != 1)
		ret = -ENOENT;
	finish(s);
	unlock(st);
	return ret;
}

static int sq_outbox_delivered(struct store_backend *b, int64_t row)
{
	return outbox_update(sq(b), STMT_OUTBOX_DELETE, row, 0, NULL);
}

static int sq_outbox_retry(struct store_backend *b, int64_t row, int64_t next_at,
			   const char *error)
{
	return outbox_update(sq(b), STMT_OUTBOX_RETRY, row, next_at, error);
}

static int sq_outbox_pending(struct store_backend *b, const char *target, uint64_t *count)
{
	struct sqlite_store *st = sq(b);
	sqlite3_stmt *s;
	int ret = 0, rc;

	*count = 0;
	lock(st);
	s = stmt(st, STMT_OUTBOX_PENDING);
	if (target)
		sqlite3_bind_text(s, 1, target, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*count = (uint64_t)sqlite3_column_int64(s, 0);
	else
		ret = db_fail(st, rc, "webhook outbox count");
	finish(s);
	unlock(st);
	return ret;
}

/* Backups (store_sqlite_backup.c) ------------------------------------------------------ */

/* A connection of its own reads the file: the store's lock is not taken. */
static int sq_backup(struct store_backend *b, int *fd, uint64_t *size)
{
	const char *path = sqlite3_db_filename(sq(b)->db, "main");

	if (!path || !path[0]) {
		log_error("store: backup: the database has no file name");
		return -EINVAL;
	}
	return store_sqlite_backup(path, fd, size);
}

const struct store_ops store_sqlite_ops = {
	.scheme = "sqlite",
	.open = sq_open,
	.close = sq_close,
	.agent_enroll = sq_agent_enroll,
	.agent_get = sq_agent_get,
	.agent_activate = sq_agent_activate,
	.agent_set_policy = sq_agent_set_policy,
	.agents_list = sq_agents_list,
	.boot_get = sq_boot_get,
	.boot_log_get = sq_boot_log_get,
	.round_context = sq_round_context,
	.commit_rounds = sq_commit_rounds,
	.verdicts_list = sq_verdicts_list,
	.violations_list = sq_violations_list,
	.violation_get = sq_violation_get,
	.violations_open_count = sq_violations_open_count,
	.violation_decide = sq_violation_decide,
	.policy_put = sq_policy_put,
	.policy_version = sq_policy_version,
	.policy_get = sq_policy_get,
	.policy_get_version = sq_policy_get_version,
	.policy_versions = sq_policy_versions,
	.policy_agents = sq_policy_agents,
	.counts = sq_counts,
	.agent_retire = sq_agent_retire,
	.agent_reset = sq_agent_reset,
	.agent_history = sq_agent_history,
	.agent_mark_stale = sq_agent_mark_stale,
	.outbox_claim = sq_outbox_claim,
	.outbox_delivered = sq_outbox_delivered,
	.outbox_retry = sq_outbox_retry,
	.outbox_pending = sq_outbox_pending,
	.backup = sq_backup,
	.backup_check = store_sqlite_backup_check,
};
