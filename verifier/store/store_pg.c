/*
 * store_backend.h on PostgreSQL ("postgresql://USER@HOST:PORT/DB?PARAMS", a libpq URI): a pool
 * of connections, each with every statement prepared, shared by the verifier's threads. Several
 * verifiers may use one database at once (DESIGN.md 7b): what they must agree on is decided by
 * the database, never by one verifier's memory:
 *   - a round commits as a compare-and-swap on its agent's boot-state version (an UPDATE ...
 *     WHERE version = $n; row locks make a concurrent one wait and then find the new version),
 *     and its challenge is recorded as spent in the same transaction (spent_nonces' key);
 *   - decisions that read before they write (enroll, activate, a new policy version) take an
 *     advisory transaction lock, as SQLite's BEGIN IMMEDIATE did for one verifier.
 *
 * Group commit: store.c hands commit_rounds() every round queued; they go to the server in one
 * pipeline (BEGIN, one call of pg_temp.attest_round() per round, COMMIT: one network round
 * trip and one WAL flush for the batch). attest_round() is a PL/pgSQL function created in each
 * session (pg_temp), so its logic ships with this file rather than with the schema: it writes
 * the round inside an exception block (a subtransaction), so a failing round is rolled back
 * alone and the others commit, as SQLite's savepoints do. Rounds are sent ordered by agent id,
 * so that two verifiers' batches lock boot states in the same order and never deadlock
 * (tests/unit/test_store_pg.c makes them try); a spent challenge is locked as part of its
 * agent's round, and a challenge names its agent (cluster.h), so that order covers it too.
 *
 * When the server is away: every call fails with -EIO (the agent-facing calls answer 503
 * storage_unavailable), connections are re-made at the next call (at most every
 * PG_RETRY_MS while it stays away), and a call whose connection turns out to be dead before
 * anything was sent on it (the server restarted meanwhile) is retried once on a new one.
 * Outages and recoveries are logged once each.
 *
 * The schema and its migrations are in store_pg_schema.c; the SQL dialect's differences from
 * SQLite are listed there. Server errors are converted to -EIO here, logged with SQLSTATE.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "common/log.h"
#include "proto/encoding.h"
#include "verifier/store/store_backend.h"
#include "verifier/store/store_pg.h"

#define PG_POOL 8u          /* connections per verifier */
#define PG_RETRY_MS 250     /* a new connection is tried at most this often while down */
#define PG_CONNECT_TIMEOUT "3"
#define PG_MAX_PARAMS 28
#define PG_LOCK_ENROLL "7833656e726f6c6c" /* advisory lock keys ("atst" ...) */
#define PG_LOCK_POLICY "78336f6c69637900"

/* -ENOTCONN inside this file: the connection died before the call did anything; retry it. */
#define PG_RETRY (-ENOTCONN)

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

/* Prepared on every connection as "s<N>"; the SQLite backend's statements, in this dialect. */
enum stmt {
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
	STMT_BOOT_LOG_GET,
	STMT_ROUND_CONTEXT,
	STMT_ROUND,
	STMT_NONCES_PRUNE,
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
	/* issue 16 */
	STMT_AGENT_REPLACE,
	STMT_AGENT_STATE,
	STMT_AGENT_RETIRE,
	STMT_AGENT_RESET,
	STMT_AGENT_MARK_STALE,
	STMT_AGENT_PURGE,
	STMT_BOOT_RESTART,
	STMT_BOOT_LOG_DELETE,
	STMT_HISTORY_ADD,
	STMT_HISTORY_LIST,
	STMT_OUTBOX_ADD,
	STMT_OUTBOX_CLAIM,
	STMT_OUTBOX_DELETE,
	STMT_OUTBOX_RETRY,
	STMT_OUTBOX_PENDING,
	STMT_COUNT /* the number of statements */
};

static const char *const stmt_sql[STMT_COUNT] = {
	[STMT_AGENT_GET] =
		"SELECT " AGENT_SUMMARY_COLS ", a.ek_pub, a.ek_cert, a.ak_pub"
		" FROM agents a LEFT JOIN boot_state b ON b.agent = a.id WHERE a.id = $1",
	[STMT_AGENT_REFRESH] =
		"UPDATE agents SET ek_cert = $2::bytea, ak_pub = $3::bytea, ak_name = $4::bytea,"
		" cred_digest = $5::bytea, enrolled_at = $6, reset_at = 0"
		" WHERE id = $1 AND state = 'pending'",
	[STMT_AGENT_INSERT] =
		"INSERT INTO agents(id, ek_cert, ak_pub, ak_name, cred_digest, ek_pub, policy, state,"
		" created_at, enrolled_at) VALUES ($1, $2::bytea, $3::bytea, $4::bytea, $5::bytea,"
		" $6::bytea, $7, 'pending', $8, $8)",
	[STMT_AGENT_ACTIVATE] =
		"UPDATE agents SET state = 'active', activated_at = $3"
		" WHERE id = $1 AND state = 'pending' AND cred_digest = $2::bytea",
	[STMT_ACTIVATE_FACTS] =
		"SELECT a.state, a.cred_digest, a.enrolled_at, EXISTS(SELECT 1 FROM agents o"
		" WHERE o.ek_pub = a.ek_pub AND o.state = 'active' AND o.id <> a.id)"
		" FROM agents a WHERE a.id = $1",
	[STMT_PENDING_EXPIRE] = "DELETE FROM agents WHERE state = 'pending' AND enrolled_at <= $1",
	[STMT_ENROLL_FACTS] =
		"SELECT EXISTS(SELECT 1 FROM agents WHERE ek_pub = $1::bytea AND state = 'active'"
		" AND id <> $2),"
		" (SELECT COUNT(*) FROM agents WHERE ek_pub = $1::bytea AND state = 'pending'"
		" AND id <> $2),"
		" (SELECT COUNT(*) FROM agents WHERE state = 'pending')",
	[STMT_AGENT_SET_POLICY] = "UPDATE agents SET policy = $2 WHERE id = $1",
	[STMT_AGENTS_LIST] =
		"SELECT " AGENT_SUMMARY_COLS ", " LAST_REASONS_COL
		" FROM agents a LEFT JOIN boot_state b ON b.agent = a.id ORDER BY a.id",
	[STMT_BOOT_GET] = "SELECT state, version FROM boot_state WHERE agent = $1",
	[STMT_BOOT_LOG_GET] =
		"SELECT log, sha256, cmdline, judged_boot, judged_key, summary, received_at"
		" FROM boot_logs WHERE agent = $1",
	[STMT_ROUND_CONTEXT] =
		"SELECT a.state, a.policy, a.ak_name, b.state, COALESCE(b.version, 0),"
		" (SELECT COUNT(*) FROM violations x WHERE x.agent = a.id AND x.state = 'open'),"
		" (SELECT COUNT(*) FROM violations x WHERE x.agent = a.id AND x.state = 'open'"
		"  AND x.boot_number = COALESCE(b.boot_number, 0)),"
		" l.sha256,"
		" COALESCE((SELECT max(version) FROM policies"
		"  WHERE name = CASE a.policy WHEN '' THEN $2 ELSE a.policy END), 0),"
		" COALESCE((SELECT max(version) FROM policies WHERE name = $3), 0)"
		" FROM agents a LEFT JOIN boot_state b ON b.agent = a.id"
		" LEFT JOIN boot_logs l ON l.agent = a.id WHERE a.id = $1",
	[STMT_ROUND] =
		"SELECT status, verdict, msg, turned, opened FROM pg_temp.attest_round($1, $2, $3::bytea, $4, $5, $6,"
		" $7, $8, $9, $10, $11, $12::bytea, $13, $14, $15::bytea, $16::bytea, $17, $18,"
		" $19::bytea, $20, $21, $22::jsonb, $23, $24, $25, $26, $27)",
	[STMT_NONCES_PRUNE] = "DELETE FROM spent_nonces WHERE expires_at < $1",
	[STMT_VERDICTS_LIST] =
		"SELECT id, agent, boot_number, time, trusted, reasons, next_offset,"
		" policy, policy_version, amendment_version"
		" FROM verdicts WHERE agent = $1 ORDER BY id DESC LIMIT $2",
	[STMT_VIOLATION_GET] = "SELECT " VIOLATION_COLUMNS " FROM violations WHERE id = $1",
	[STMT_VIOLATIONS_OPEN_COUNT] =
		"SELECT COUNT(*), COUNT(*) FILTER (WHERE boot_number = $2) FROM violations"
		" WHERE agent = $1 AND state = 'open'",
	[STMT_VIOLATIONS_LIST] =
		"SELECT " VIOLATION_COLUMNS " FROM violations"
		" WHERE ($1::text IS NULL OR state = $1) AND ($2::text IS NULL OR agent = $2)"
		" ORDER BY last_seen DESC, id DESC LIMIT $3",
	[STMT_VIOLATION_DECIDE] =
		"UPDATE violations SET state = $2, decided_at = $3, decision = $4"
		" WHERE id = $1 AND state = 'open'",
	[STMT_POLICY_NEWEST] =
		"SELECT version, json FROM policies WHERE name = $1 ORDER BY version DESC LIMIT 1",
	[STMT_POLICY_INSERT] =
		"INSERT INTO policies(name, version, json, actor, time) VALUES ($1, $2, $3, $4, $5)",
	[STMT_POLICY_VERSION] = "SELECT max(version) FROM policies WHERE name = $1",
	[STMT_POLICY_GET_VERSION] = "SELECT json FROM policies WHERE name = $1 AND version = $2",
	[STMT_POLICY_VERSIONS] =
		"SELECT version, actor, time, octet_length(json) FROM policies"
		" WHERE name = $1 ORDER BY version DESC",
	[STMT_POLICY_AGENTS] = "SELECT COUNT(*) FROM agents WHERE policy = $1",
	[STMT_COUNTS] =
		"SELECT (SELECT COUNT(*) FROM agents WHERE state = 'pending'),"
		" (SELECT COUNT(*) FROM agents WHERE state = 'active'),"
		" (SELECT COUNT(*) FROM violations WHERE state = 'open'),"
		" (SELECT COUNT(*) FROM verdicts WHERE trusted = 1),"
		" (SELECT COUNT(*) FROM verdicts WHERE trusted = 0),"
		" (SELECT COUNT(*) FROM agents WHERE state = 'retired')",
	/* A reset agent's next enrollment: new keys, pending again, its history kept. */
	[STMT_AGENT_REPLACE] =
		"UPDATE agents SET ek_cert = $2::bytea, ak_pub = $3::bytea, ak_name = $4::bytea,"
		" cred_digest = $5::bytea, ek_pub = $6::bytea, state = 'pending', enrolled_at = $7,"
		" activated_at = 0, retired_at = 0, reset_at = 0, stale_event_for = 0 WHERE id = $1",
	[STMT_AGENT_STATE] = "SELECT state FROM agents WHERE id = $1",
	[STMT_AGENT_RETIRE] =
		"UPDATE agents SET state = 'retired', retired_at = $2, reset_at = 0"
		" WHERE id = $1 AND state <> 'retired'",
	[STMT_AGENT_RESET] = "UPDATE agents SET reset_at = $2 WHERE id = $1 AND reset_at = 0",
	/* Once per silence: the last-seen time the caller computed is still the agent's. */
	[STMT_AGENT_MARK_STALE] =
		"UPDATE agents SET stale_event_for = $2 WHERE id = $1 AND state = 'active'"
		" AND stale_event_for <> $2 AND GREATEST(activated_at, COALESCE((SELECT time FROM"
		" verdicts v WHERE v.agent = $1 ORDER BY v.id DESC LIMIT 1), 0)) = $2",
	/* Everything stored of an agent, in one statement; $2 is its amendment's name. */
	[STMT_AGENT_PURGE] =
		"WITH b AS (DELETE FROM boot_state WHERE agent = $1),"
		" l AS (DELETE FROM boot_logs WHERE agent = $1),"
		" v AS (DELETE FROM verdicts WHERE agent = $1),"
		" x AS (DELETE FROM violations WHERE agent = $1),"
		" p AS (DELETE FROM policies WHERE name = $2),"
		" h AS (DELETE FROM agent_history WHERE agent = $1)"
		" DELETE FROM agents WHERE id = $1",
	/* A new TPM or AK: its boot session starts over, the boot numbers go on. */
	[STMT_BOOT_RESTART] =
		"UPDATE boot_state SET state = $2::bytea, reset_count = 0, restart_count = 0,"
		" next_entry = 0, updated_at = $3, version = version + 1 WHERE agent = $1",
	[STMT_BOOT_LOG_DELETE] = "DELETE FROM boot_logs WHERE agent = $1",
	[STMT_HISTORY_ADD] =
		"INSERT INTO agent_history(agent, time, event, actor, detail)"
		" VALUES ($1, $2, $3, $4, $5)",
	[STMT_HISTORY_LIST] =
		"SELECT id, time, event, actor, detail FROM agent_history WHERE agent = $1"
		" ORDER BY id DESC LIMIT $2",
	[STMT_OUTBOX_ADD] =
		"INSERT INTO webhook_outbox(event_id, target, type, agent, created_at, body,"
		" next_attempt_at) VALUES ($1, $2, $3, $4, $5, $6, $5)",
	/*
	 * Claimed in one statement: the rows due, locked (rows another verifier is claiming
	 * are skipped, not waited for), moved to the end of their lease, oldest first.
	 */
	[STMT_OUTBOX_CLAIM] =
		"WITH due AS (SELECT id FROM webhook_outbox WHERE target = $1"
		"  AND next_attempt_at <= $2 ORDER BY id LIMIT $3 FOR UPDATE SKIP LOCKED),"
		" c AS (UPDATE webhook_outbox o SET next_attempt_at = $4 FROM due WHERE o.id = due.id"
		"  RETURNING o.id, o.event_id, o.target, o.type, o.agent, o.created_at, o.body,"
		"  o.attempts)"
		" SELECT * FROM c ORDER BY id",
	[STMT_OUTBOX_DELETE] = "DELETE FROM webhook_outbox WHERE id = $1",
	[STMT_OUTBOX_RETRY] =
		"UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = $2,"
		" last_error = $3 WHERE id = $1",
	[STMT_OUTBOX_PENDING] =
		"SELECT COUNT(*) FROM webhook_outbox WHERE ($1::text IS NULL OR target = $1)",
};

/*
 * One round, written as store_sqlite.c's round_write() does (store.h, store_round_commit()):
 * the challenge spent, the boot state's compare-and-swap, the boot log, the verdict, each
 * violation (more of an open one, a new one, a recurrence after a decision, or entries sent
 * again, which change nothing), the interval the agent reported. status 0 with the verdict's
 * id, 1 another round of the agent committed first, 2 the challenge was spent before, 3 an
 * error (msg), 4 the agent is no longer active; in every case but 0 nothing of the round is
 * written (the exception block is a subtransaction). Violations come as a JSON array of
 * {i (their index in the round), reason, path (hex), digest, template, last, count}.
 *
 * With p_events (webhooks configured), what the round's events need and only the database
 * knows: turned, the agent's previous verdict was trusted or it had none; opened, a JSON
 * array of [i, id, recurs] for each new open violation row. The caller writes the events
 * (store_event_rows(), rendered in C as for SQLite) in the same transaction.
 */
static const char round_function[] =
	"CREATE OR REPLACE FUNCTION pg_temp.attest_round("
	" p_agent text, p_prev bigint, p_state bytea, p_reset bigint, p_restart bigint,"
	" p_boot bigint, p_next_entry bigint, p_now bigint, p_trusted bigint, p_reasons text,"
	" p_next_offset bigint, p_nonce bytea, p_nonce_expires bigint, p_has_log boolean,"
	" p_log bytea, p_log_sha256 bytea, p_cmdline text, p_judged_boot bigint,"
	" p_judged_key bytea, p_summary text, p_received_at bigint, p_violations jsonb,"
	" p_interval bigint, p_events boolean, p_policy text, p_policy_version bigint,"
	" p_amendment_version bigint,"
	" OUT status integer, OUT verdict bigint, OUT msg text, OUT turned boolean,"
	" OUT opened text)"
	" LANGUAGE plpgsql AS $fn$\n"
	"DECLARE\n"
	"  n bigint;\n"
	"  v record;\n"
	"  prev_row record;\n"
	"  had boolean;\n"
	"  v_path bytea;\n"
	"  v_id bigint;\n"
	"  last_trusted bigint;\n"
	"  opened_rows jsonb := '[]';\n"
	"BEGIN\n"
	"  status := 0; verdict := 0; msg := ''; turned := false; opened := '[]';\n"
	"  BEGIN\n"
	"    IF p_nonce IS NOT NULL THEN\n"
	"      INSERT INTO spent_nonces(nonce, agent, expires_at)\n"
	"        VALUES (p_nonce, p_agent, p_nonce_expires) ON CONFLICT (nonce) DO NOTHING;\n"
	"      GET DIAGNOSTICS n = ROW_COUNT;\n"
	"      IF n <> 1 THEN status := 2; RETURN; END IF;\n"
	"    END IF;\n"
	"    IF p_prev = 0 THEN\n"
	"      INSERT INTO boot_state(agent, state, reset_count, restart_count, boot_number,\n"
	"          next_entry, updated_at, version)\n"
	"        SELECT p_agent, p_state, p_reset, p_restart, p_boot, p_next_entry, p_now, 1\n"
	"        WHERE EXISTS(SELECT 1 FROM agents WHERE id = p_agent AND state = 'active')\n"
	"        ON CONFLICT (agent) DO NOTHING;\n"
	"    ELSE\n"
	"      UPDATE boot_state SET state = p_state, reset_count = p_reset,\n"
	"          restart_count = p_restart, boot_number = p_boot, next_entry = p_next_entry,\n"
	"          updated_at = p_now, version = version + 1\n"
	"        WHERE agent = p_agent AND version = p_prev\n"
	"          AND EXISTS(SELECT 1 FROM agents WHERE id = p_agent AND state = 'active');\n"
	"    END IF;\n"
	"    GET DIAGNOSTICS n = ROW_COUNT;\n"
	"    IF n <> 1 THEN\n"
	"      IF EXISTS(SELECT 1 FROM agents WHERE id = p_agent AND state = 'active') THEN\n"
	"        RAISE SQLSTATE 'AT001';\n"
	"      END IF;\n"
	"      RAISE SQLSTATE 'AT002';\n"
	"    END IF;\n"
	"    IF p_interval > 0 THEN\n"
	"      UPDATE agents SET round_interval = p_interval\n"
	"        WHERE id = p_agent AND round_interval <> p_interval;\n"
	"    END IF;\n"
	"    IF p_events AND p_trusted = 0 THEN\n"
	"      SELECT trusted INTO last_trusted FROM verdicts WHERE agent = p_agent\n"
	"        ORDER BY id DESC LIMIT 1;\n"
	"      turned := NOT FOUND OR last_trusted <> 0;\n"
	"    END IF;\n"
	"    IF p_has_log THEN\n"
	"      INSERT INTO boot_logs(agent, log, sha256, cmdline, judged_boot, judged_key,\n"
	"          summary, received_at, updated_at)\n"
	"        VALUES (p_agent, p_log, p_log_sha256, p_cmdline, p_judged_boot, p_judged_key,\n"
	"          p_summary, p_received_at, p_now)\n"
	"        ON CONFLICT (agent) DO UPDATE SET log = excluded.log, sha256 = excluded.sha256,\n"
	"          cmdline = excluded.cmdline, judged_boot = excluded.judged_boot,\n"
	"          judged_key = excluded.judged_key, summary = excluded.summary,\n"
	"          received_at = excluded.received_at, updated_at = excluded.updated_at;\n"
	"    END IF;\n"
	"    INSERT INTO verdicts(agent, boot_number, time, trusted, reasons, next_offset,\n"
	"        policy, policy_version, amendment_version)\n"
	"      VALUES (p_agent, p_boot, p_now, p_trusted, p_reasons, p_next_offset, p_policy,\n"
	"        p_policy_version, p_amendment_version)\n"
	"      RETURNING id INTO verdict;\n"
	"    IF p_violations IS NOT NULL THEN\n"
	"      FOR v IN SELECT * FROM jsonb_to_recordset(p_violations) AS x(reason text,\n"
	"          path text, digest text, template text, last bigint, count bigint, i bigint) LOOP\n"
	"        v_path := decode(v.path, 'hex');\n"
	"        SELECT id, state, boot_number, entry INTO prev_row FROM violations o\n"
	"          WHERE o.agent = p_agent AND o.reason = v.reason\n"
	"            AND sha256(o.path) = sha256(v_path) AND o.path = v_path\n"
	"            AND o.digest = v.digest\n"
	"          ORDER BY o.id DESC LIMIT 1;\n"
	"        had := FOUND;\n"
	/* Resent (or judged again) only for a row not approved: store_sqlite.c's rule. */
	"        IF had AND prev_row.boot_number = p_boot AND v.last <= prev_row.entry\n"
	"            AND prev_row.state <> 'approved' THEN\n"
	"          CONTINUE;\n"
	"        ELSIF had AND prev_row.state = 'open' THEN\n"
	"          UPDATE violations SET boot_number = p_boot, entry = v.last, last_seen = p_now,\n"
	"              count = violations.count + v.count\n"
	"            WHERE id = prev_row.id;\n"
	"        ELSE\n"
	"          INSERT INTO violations(agent, reason, path, digest, boot_number, entry,\n"
	"              template, first_seen, last_seen, count, recurs)\n"
	"            VALUES (p_agent, v.reason, v_path, v.digest, p_boot, v.last, v.template,\n"
	"              p_now, p_now, v.count, CASE WHEN had THEN prev_row.id END)\n"
	"            RETURNING id INTO v_id;\n"
	"          IF p_events THEN\n"
	"            opened_rows := opened_rows || jsonb_build_array(jsonb_build_array(v.i, v_id,\n"
	"              CASE WHEN had THEN prev_row.id ELSE 0 END));\n"
	"          END IF;\n"
	"        END IF;\n"
	"      END LOOP;\n"
	"    END IF;\n"
	"    opened := opened_rows::text;\n"
	"  EXCEPTION\n"
	"    WHEN SQLSTATE 'AT001' THEN status := 1; verdict := 0; turned := false;\n"
	"    WHEN SQLSTATE 'AT002' THEN status := 4; verdict := 0; turned := false;\n"
	"    WHEN OTHERS THEN status := 3; verdict := 0; turned := false;\n"
	"      msg := SQLSTATE || ' ' || SQLERRM;\n"
	"  END;\n"
	"END;\n"
	"$fn$";

struct pg_conn {
	PGconn *c;
	bool busy;
};

struct pg_store {
	struct store_backend base; /* first: store.c holds a pointer to it */
	char *uri;                 /* "postgresql:" + location: libpq's URI */
	char where[160];           /* HOST:PORT/DB for messages, never the password */
	pthread_mutex_t lock;      /* the pool and the fields below */
	pthread_cond_t cond;
	struct pg_conn pool[PG_POOL];
	bool down;                 /* the last connection attempt failed (logged once) */
	int64_t retry_at_ms;       /* no new connection attempt before this while down */
	int64_t nonces_pruned;     /* commit_rounds(): when spent challenges were last pruned */
};

static struct pg_store *pg(struct store_backend *b)
{
	return (struct pg_store *)b;
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Parameters ---------------------------------------------------------------------------- */

/* Numbers go as text, bytes as binary (the SQL casts those to bytea), text as text. */
struct params {
	int n;
	const char *val[PG_MAX_PARAMS];
	int len[PG_MAX_PARAMS];
	int fmt[PG_MAX_PARAMS];
	char num[PG_MAX_PARAMS][24];
};

static void p_text(struct params *p, const char *s)
{
	p->val[p->n] = s; /* NULL is SQL NULL */
	p->len[p->n] = 0;
	p->fmt[p->n] = 0;
	p->n++;
}

static void p_bytes(struct params *p, const void *b, size_t len)
{
	p->val[p->n] = b ? (const char *)b : ""; /* an empty value, not NULL */
	p->len[p->n] = (int)len;
	p->fmt[p->n] = 1;
	p->n++;
}

static void p_int(struct params *p, int64_t v)
{
	snprintf(p->num[p->n], sizeof(p->num[p->n]), "%" PRId64, v);
	p_text(p, p->num[p->n]);
}

/* Results (binary format) ------------------------------------------------------------------- */

/* An integer column of any width (int2, int4, int8, bool); 0 for NULL. */
static int64_t r_int(const PGresult *r, int row, int col)
{
	const unsigned char *v = (const unsigned char *)PQgetvalue(r, row, col);
	int len = PQgetlength(r, row, col);
	uint64_t x = 0;

	if (PQgetisnull(r, row, col) || len < 1 || len > 8)
		return 0;
	for (int i = 0; i < len; i++)
		x = x << 8 | v[i];
	if (len < 8 && (v[0] & 0x80))
		x |= ~(uint64_t)0 << (8 * len); /* sign-extend */
	return (int64_t)x;
}

/* Text and bytea columns: libpq puts a NUL after every value. */
static const char *r_text(const PGresult *r, int row, int col)
{
	return PQgetvalue(r, row, col);
}

static size_t r_len(const PGresult *r, int row, int col)
{
	return (size_t)PQgetlength(r, row, col);
}

static int r_dup(const PGresult *r, int row, int col, void **out, size_t *len)
{
	size_t n = r_len(r, row, col);

	*out = NULL;
	if (len)
		*len = 0;
	if (PQgetisnull(r, row, col))
		return 0;
	*out = malloc(n + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, r_text(r, row, col), n);
	((char *)*out)[n] = '\0';
	if (len)
		*len = n;
	return 0;
}

/* Connections ---------------------------------------------------------------------------- */

static void conn_drop(struct pg_conn *pc)
{
	PQfinish(pc->c);
	pc->c = NULL;
}

/* A new session: checks the schema version, prepares every statement, creates attest_round. */
static int session_setup(struct pg_store *st, PGconn *c)
{
	PGresult *r;
	char name[16];
	int ret;

	if ((ret = store_pg_exec(c, "SET synchronous_commit = on")) ||
	    (ret = store_pg_exec(c, "SET client_min_messages = warning")))
		return ret;
	r = PQexec(c, "SELECT version FROM schema_version");
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1 ||
	    strtol(PQgetvalue(r, 0, 0), NULL, 10) != STORE_PG_SCHEMA_VERSION) {
		log_error("store: %s is not at schema version %d any more (restored from an older"
			  " backup, or upgraded by a newer verifier?): this verifier stops using it",
			  st->where, STORE_PG_SCHEMA_VERSION);
		PQclear(r);
		return -EPROTO;
	}
	PQclear(r);
	if ((ret = store_pg_exec(c, round_function)))
		return ret;
	for (unsigned i = 0; i < STMT_COUNT; i++) {
		snprintf(name, sizeof(name), "s%u", i);
		r = PQprepare(c, name, stmt_sql[i], 0, NULL);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			ret = store_pg_fail(c, r, "prepare");
			PQclear(r);
			return ret;
		}
		PQclear(r);
	}
	return 0;
}

static PGconn *connect_db(struct pg_store *st)
{
	/* The URI's own settings come later and win over these defaults. */
	static const char *const keys[] = { "connect_timeout", "application_name",
					    "client_encoding", "dbname", NULL };
	const char *vals[] = { PG_CONNECT_TIMEOUT, "attest-verifier", "UTF8", st->uri, NULL };

	return PQconnectdbParams(keys, vals, 1);
}

/* The state of the server as this store last saw it, logged when it changes. */
static void set_down(struct pg_store *st, bool down, const char *why)
{
	pthread_mutex_lock(&st->lock);
	if (down && !st->down)
		log_error("store: postgresql %s unavailable: %.*s; agents are answered 503 until it is"
			  " back (retried every %d ms)", st->where, (int)strcspn(why, "\n"), why,
			  PG_RETRY_MS);
	else if (!down && st->down)
		log_info("store: postgresql %s reachable again", st->where);
	st->down = down;
	if (down)
		st->retry_at_ms = now_ms() + PG_RETRY_MS;
	pthread_mutex_unlock(&st->lock);
}

/* Makes pc usable: 0, or -EIO (the server is away; logged once per outage). */
static int conn_ensure(struct pg_store *st, struct pg_conn *pc)
{
	bool wait;
	int ret;

	if (pc->c && PQstatus(pc->c) == CONNECTION_OK)
		return 0;
	conn_drop(pc);
	pthread_mutex_lock(&st->lock);
	wait = st->down && now_ms() < st->retry_at_ms;
	pthread_mutex_unlock(&st->lock);
	if (wait)
		return -EIO;
	pc->c = connect_db(st);
	if (!pc->c || PQstatus(pc->c) != CONNECTION_OK) {
		set_down(st, true, pc->c ? PQerrorMessage(pc->c) : "out of memory");
		conn_drop(pc);
		return -EIO;
	}
	ret = session_setup(st, pc->c);
	if (ret) {
		if (PQstatus(pc->c) != CONNECTION_OK)
			set_down(st, true, PQerrorMessage(pc->c));
		conn_drop(pc);
		return -EIO;
	}
	set_down(st, false, NULL);
	return 0;
}

/* A connection of the pool for one call, connected; give it back with conn_put(). */
static int conn_get(struct pg_store *st, struct pg_conn **out)
{
	struct pg_conn *pc = NULL;
	int ret;

	pthread_mutex_lock(&st->lock);
	for (;;) {
		for (unsigned i = 0; i < PG_POOL && !pc; i++)
			if (!st->pool[i].busy)
				pc = &st->pool[i];
		if (pc)
			break;
		pthread_cond_wait(&st->cond, &st->lock);
	}
	pc->busy = true;
	pthread_mutex_unlock(&st->lock);
	ret = conn_ensure(st, pc);
	*out = pc;
	return ret;
}

static void conn_put(struct pg_store *st, struct pg_conn *pc)
{
	/* A connection left inside a transaction (a failed call) is not reused as it is. */
	if (pc->c && PQtransactionStatus(pc->c) != PQTRANS_IDLE)
		conn_drop(pc);
	pthread_mutex_lock(&st->lock);
	pc->busy = false;
	pthread_cond_signal(&st->cond);
	pthread_mutex_unlock(&st->lock);
}

/*
 * Runs prepared statement `id` (binary results). NULL on failure, logged; *ret gets PG_RETRY
 * when `first` (nothing of the call was sent before) and the connection turned out dead, else
 * -EIO.
 */
static PGresult *run(struct pg_store *st, struct pg_conn *pc, enum stmt id,
		     const struct params *p, bool first, const char *what, int *ret)
{
	char name[16];
	PGresult *r;
	ExecStatusType s;

	snprintf(name, sizeof(name), "s%u", (unsigned)id);
	r = PQexecPrepared(pc->c, name, p ? p->n : 0, p ? p->val : NULL, p ? p->len : NULL,
			   p ? p->fmt : NULL, 1);
	s = PQresultStatus(r);
	if (s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK)
		return r;
	if (PQstatus(pc->c) != CONNECTION_OK) {
		*ret = first ? PG_RETRY : -EIO;
		if (!first)
			store_pg_fail(pc->c, r, what);
		set_down(st, true, PQerrorMessage(pc->c));
	} else {
		*ret = store_pg_fail(pc->c, r, what);
	}
	PQclear(r);
	return NULL;
}

/* A statement without parameters outside the prepared ones (BEGIN, COMMIT, locks). */
static int run_sql(struct pg_store *st, struct pg_conn *pc, const char *sql, bool first)
{
	PGresult *r = PQexec(pc->c, sql);
	int ret = 0;

	if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
		if (PQstatus(pc->c) != CONNECTION_OK) {
			ret = first ? PG_RETRY : store_pg_fail(pc->c, r, sql);
			set_down(st, true, PQerrorMessage(pc->c));
		} else {
			ret = store_pg_fail(pc->c, r, sql);
		}
	}
	PQclear(r);
	return ret;
}

static void rollback(struct pg_conn *pc)
{
	if (pc->c && PQtransactionStatus(pc->c) != PQTRANS_IDLE)
		PQclear(PQexec(pc->c, "ROLLBACK"));
}

/*
 * Every call runs through here: a connection, the call, and one more try on a new connection
 * if the first found its connection dead before it did anything.
 */
typedef int (*pg_call)(struct pg_store *st, struct pg_conn *pc, void *arg);

static int with_conn(struct pg_store *st, pg_call fn, void *arg)
{
	struct pg_conn *pc;
	int ret;

	for (int attempt = 0; attempt < 2; attempt++) {
		ret = conn_get(st, &pc);
		if (!ret)
			ret = fn(st, pc, arg);
		if (ret == PG_RETRY)
			conn_drop(pc);
		conn_put(st, pc);
		if (ret != PG_RETRY)
			return ret;
	}
	return -EIO;
}

/* Open and close ---------------------------------------------------------------------------- */

static void pg_close(struct store_backend *b)
{
	struct pg_store *st = pg(b);

	for (unsigned i = 0; i < PG_POOL; i++)
		conn_drop(&st->pool[i]);
	pthread_mutex_destroy(&st->lock);
	pthread_cond_destroy(&st->cond);
	free(st->uri);
	free(st);
}

static int pg_open(const char *location, struct store_backend **out)
{
	struct pg_store *st;
	PGconn *c = NULL;
	size_t n = strlen(location);
	int ret = -EIO;

	*out = NULL;
	if (strncmp(location, "//", 2) != 0) {
		log_error("store: give a PostgreSQL store as postgresql://[USER@]HOST[:PORT]/DATABASE"
			  "[?PARAMS], not \"postgresql:%s\"", location);
		return -EINVAL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->base.ops = &store_pg_ops;
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->cond, NULL);
	st->uri = malloc(n + 12);
	if (!st->uri) {
		ret = -ENOMEM;
		goto fail;
	}
	memcpy(st->uri, "postgresql:", 11);
	memcpy(st->uri + 11, location, n + 1);
	c = connect_db(st);
	if (!c || PQstatus(c) != CONNECTION_OK) {
		log_error("store: cannot connect to PostgreSQL: %.*s",
			  c ? (int)strcspn(PQerrorMessage(c), "\n") : 13,
			  c ? PQerrorMessage(c) : "out of memory");
		goto fail;
	}
	snprintf(st->where, sizeof(st->where), "%s:%s/%s", PQhost(c), PQport(c), PQdb(c));
	if ((ret = store_pg_exec(c, "SET client_min_messages = warning")) ||
	    (ret = store_pg_migrate(c, st->where)))
		goto fail;
	/* The first connection of the pool. */
	if ((ret = session_setup(st, c)))
		goto fail;
	st->pool[0].c = c;
	log_info("store: postgresql %s, schema version %d", st->where, STORE_PG_SCHEMA_VERSION);
	*out = &st->base;
	return 0;
fail:
	PQfinish(c);
	pg_close(&st->base);
	return ret == -EPROTO || ret == -ENOMEM ? ret : -EIO;
}

/* Agents ------------------------------------------------------------------------------- */

static void agent_summary_row(const PGresult *r, int row, struct store_agent *a)
{
	size_t n;

	snprintf(a->id, sizeof(a->id), "%s", r_text(r, row, 0));
	a->state = agent_state_of(r_text(r, row, 1));
	n = r_len(r, row, 2);
	a->ak_name_len = 0;
	if (n > 0 && n <= sizeof(a->ak_name)) {
		memcpy(a->ak_name, r_text(r, row, 2), n);
		a->ak_name_len = n;
	}
	memset(a->cred_digest, 0, sizeof(a->cred_digest));
	if (r_len(r, row, 3) == STORE_CRED_DIGEST_LEN)
		memcpy(a->cred_digest, r_text(r, row, 3), STORE_CRED_DIGEST_LEN);
	snprintf(a->policy, sizeof(a->policy), "%s", r_text(r, row, 4));
	a->created_at = r_int(r, row, 5);
	a->activated_at = r_int(r, row, 6);
	a->boot_number = (uint64_t)r_int(r, row, 7);
	a->next_entry = (uint64_t)r_int(r, row, 8);
	a->last_verdict_at = r_int(r, row, 9);
	a->last_trusted = (int)r_int(r, row, 10);
	a->open_violations = (uint64_t)r_int(r, row, 11);
	a->retired_at = r_int(r, row, 12);
	a->reset_at = r_int(r, row, 13);
	a->interval = (uint32_t)r_int(r, row, 14);
	a->stale_event_for = r_int(r, row, 15);
	store_judged_versions_parse(r_text(r, row, 16), &a->judged);
	a->amendment_version = r_int(r, row, 17);
	a->policy_version = r_int(r, row, 18);
}

static int agent_get_on(struct pg_store *st, struct pg_conn *pc, const char *id,
			struct store_agent *out, bool first)
{
	struct params p = { 0 };
	PGresult *r;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	p_text(&p, id);
	r = run(st, pc, STMT_AGENT_GET, &p, first, "agent lookup", &ret);
	if (!r)
		return ret;
	if (PQntuples(r) == 0) {
		ret = -ENOENT;
	} else {
		agent_summary_row(r, 0, out);
		if ((ret = r_dup(r, 0, AGENT_SUMMARY_NCOLS, (void **)&out->ek_pub,
				 &out->ek_pub_len)) ||
		    (ret = r_dup(r, 0, AGENT_SUMMARY_NCOLS + 1, (void **)&out->ek_cert,
				 &out->ek_cert_len)) ||
		    (ret = r_dup(r, 0, AGENT_SUMMARY_NCOLS + 2, (void **)&out->ak_pub,
				 &out->ak_pub_len)))
			store_agent_release(out);
	}
	PQclear(r);
	return ret;
}

struct agent_get_arg {
	const char *id;
	struct store_agent *out;
};

static int call_agent_get(struct pg_store *st, struct pg_conn *pc, void *arg)
{
	struct agent_get_arg *a = arg;

	return agent_get_on(st, pc, a->id, a->out, true);
}

static int pg_agent_get(struct store_backend *b, const char *id, struct store_agent *out)
{
	struct agent_get_arg a = { id, out };

	return with_conn(pg(b), call_agent_get, &a);
}

/* History and webhook events (issue 16), inside the caller's transaction. */

static int history_add(struct pg_store *st, struct pg_conn *pc, const char *agent, int64_t now,
		       const char *event, const char *actor, const char *detail)
{
	struct params p = { 0 };
	PGresult *r;
	int ret = 0;

	p_text(&p, agent);
	p_int(&p, now);
	p_text(&p, event);
	p_text(&p, actor);
	p_text(&p, detail ? detail : "");
	r = run(st, pc, STMT_HISTORY_ADD, &p, false, "agent history write", &ret);
	PQclear(r);
	return r ? 0 : ret;
}

/* Writes event e into the outbox: one row per webhook target (store_event_rows()). */
static int raise_event(struct pg_store *st, struct pg_conn *pc, const struct store_event *e)
{
	struct store_event_rows rows;
	int ret = store_event_rows(&st->base, e, &rows);

	for (size_t i = 0; !ret && i < rows.ntargets; i++) {
		struct params p = { 0 };
		PGresult *r;

		p_text(&p, rows.id);
		p_text(&p, rows.targets[i]);
		p_text(&p, store_event_type_str(e->type));
		p_text(&p, e->agent);
		p_int(&p, e->time);
		p_text(&p, rows.body);
		r = run(st, pc, STMT_OUTBOX_ADD, &p, false, "webhook outbox write", &ret);
		PQclear(r);
	}
	store_event_rows_release(&rows);
	return ret;
}

static bool events_on(const struct pg_store *st)
{
	return st->base.targets && st->base.targets->n;
}

struct enroll_arg {
	const struct store_agent *a;
	int64_t now;
	const struct store_enroll_limits *lim;
	enum store_enroll_result *result;
};

/* Deletes expired pending enrollments, then counts what the enrollment rule needs. */
static int enroll_facts(struct pg_store *st, struct pg_conn *pc, const struct enroll_arg *e,
			struct store_enroll_facts *f)
{
	struct params p = { 0 };
	PGresult *r;
	int ret = 0;
	long expired;

	memset(f, 0, sizeof(*f));
	p_int(&p, e->now - e->lim->pending_ttl);
	r = run(st, pc, STMT_PENDING_EXPIRE, &p, false, "expiry of pending enrollments", &ret);
	if (!r)
		return ret;
	expired = strtol(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	if (expired > 0)
		log_info("store: %ld pending enrollments older than %lld s expired", expired,
			 (long long)e->lim->pending_ttl);
	memset(&p, 0, sizeof(p));
	p_bytes(&p, e->a->ek_pub, e->a->ek_pub_len);
	p_text(&p, e->a->id);
	r = run(st, pc, STMT_ENROLL_FACTS, &p, false, "enrollment facts", &ret);
	if (!r)
		return ret;
	f->ek_active_elsewhere = r_int(r, 0, 0) != 0;
	f->ek_pending_elsewhere = (uint64_t)r_int(r, 0, 1);
	f->pending = (uint64_t)r_int(r, 0, 2);
	PQclear(r);
	return 0;
}

/*
 * After a reset agent enrolled with new keys: its boot session starts over (the next round is
 * a first one; boot numbers go on from the last), the old machine's event log goes, the
 * history says so (store_sqlite.c's enroll_replaced(), the same steps).
 */
static int enroll_replaced(struct pg_store *st, struct pg_conn *pc, const char *id, int64_t now)
{
	uint8_t blob[BOOT_STATE_ENCODED_LEN];
	struct boot_state bs;
	struct params p = { 0 };
	PGresult *r;
	bool had;
	int ret = 0;

	p_text(&p, id);
	r = run(st, pc, STMT_BOOT_GET, &p, false, "boot state lookup", &ret);
	if (!r)
		return ret;
	memset(&bs, 0, sizeof(bs));
	had = PQntuples(r) == 1;
	if (had && boot_state_decode((const uint8_t *)r_text(r, 0, 0), r_len(r, 0, 0), &bs)) {
		log_error("store: boot state of agent \"%s\" does not decode", id);
		ret = -EINVAL;
	}
	PQclear(r);
	if (ret)
		return ret;
	if (had) {
		uint64_t boot_number = bs.boot_number;

		memset(&bs, 0, sizeof(bs));
		bs.boot_number = boot_number; /* started = false: the next round is a first one */
		boot_state_encode(&bs, blob);
		memset(&p, 0, sizeof(p));
		p_text(&p, id);
		p_bytes(&p, blob, sizeof(blob));
		p_int(&p, now);
		r = run(st, pc, STMT_BOOT_RESTART, &p, false, "boot state restart", &ret);
		if (!r)
			return ret;
		PQclear(r);
	}
	memset(&p, 0, sizeof(p));
	p_text(&p, id);
	r = run(st, pc, STMT_BOOT_LOG_DELETE, &p, false, "boot log delete", &ret);
	if (!r)
		return ret;
	PQclear(r);
	return history_add(st, pc, id, now, "re-enrolled", "agent",
			   "new EK and AK after a reset; pending activation");
}

static int call_enroll(struct pg_store *st, struct pg_conn *pc, void *arg)
{
	struct enroll_arg *e = arg;
	const struct store_agent *a = e->a;
	struct store_enroll_facts facts;
	struct store_agent cur;
	struct params p = { 0 };
	PGresult *r;
	bool exists;
	int ret;

	*e->result = STORE_ENROLL_CONFLICT;
	/* One enrollment decision at a time across verifiers: they count what they change. */
	if ((ret = run_sql(st, pc, "BEGIN", true)) ||
	    (ret = run_sql(st, pc, "SELECT pg_advisory_xact_lock(x'" PG_LOCK_ENROLL "'::bigint)",
			   false)) ||
	    (ret = enroll_facts(st, pc, e, &facts)))
		goto out;
	ret = agent_get_on(st, pc, a->id, &cur, false);
	if (ret && ret != -ENOENT)
		goto out;
	exists = ret == 0;
	ret = 0;
	*e->result = store_enroll_decide(exists ? &cur : NULL, a, &facts, e->lim);
	if (exists)
		store_agent_release(&cur);
	if (*e->result == STORE_ENROLL_NEW || *e->result == STORE_ENROLL_REFRESHED ||
	    *e->result == STORE_ENROLL_REPLACED) {
		enum stmt id = *e->result == STORE_ENROLL_NEW ? STMT_AGENT_INSERT
			       : *e->result == STORE_ENROLL_REPLACED ? STMT_AGENT_REPLACE
								     : STMT_AGENT_REFRESH;

		p_text(&p, a->id);
		p_bytes(&p, a->ek_cert, a->ek_cert_len);
		p_bytes(&p, a->ak_pub, a->ak_pub_len);
		p_bytes(&p, a->ak_name, a->ak_name_len);
		p_bytes(&p, a->cred_digest, STORE_CRED_DIGEST_LEN);
		if (id != STMT_AGENT_REFRESH)
			p_bytes(&p, a->ek_pub, a->ek_pub_len);
		if (id == STMT_AGENT_INSERT)
			p_text(&p, a->policy);
		p_int(&p, e->now);
		r = run(st, pc, id, &p, false, "agent enroll", &ret);
		if (!r)
			goto out;
		PQclear(r);
		if (id == STMT_AGENT_INSERT)
			ret = history_add(st, pc, a->id, e->now, "enrolled", "agent",
					  "pending activation");
		else if (id == STMT_AGENT_REPLACE)
			ret = enroll_replaced(st, pc, a->id, e->now);
		if (ret)
			goto out;
	}
	/* Refused: only the expiry is kept. Accepted: the old credential dies with the update. */
	ret = run_sql(st, pc, "COMMIT", false);
out:
	if (ret)
		*e->result = STORE_ENROLL_CONFLICT;
	rollback(pc);
	return ret;
}

static int pg_agent_enroll(struct store_backend *b, const struct store_agent *a, int64_t now,
			   const struct store_enroll_limits *lim,
			   enum store_enroll_result *result)
{
	struct enroll_arg e = { a, now, lim, result };

	return with_conn(pg(b), call_enroll, &e);
}

struct activate_arg {
	const char *id;
	const uint8_t *digest;
	int64_t now;
	const struct store_enroll_limits *lim;
};

/* The history row and the agent.enrolled event of an activation, in its transaction. */
static int activated(struct pg_store *st, struct pg_conn *pc, const char *id, int64_t now)
{
	struct store_agent a;
	struct store_event e;
	int ret = history_add(st, pc, id, now, "activated", "agent", "its AK is trusted");

	if (ret || !events_on(st))
		return ret;
	if ((ret = agent_get_on(st, pc, id, &a, false)))
		return ret;
	memset(&e, 0, sizeof(e));
	e.type = STORE_EVENT_ENROLLED;
	e.agent = id;
	e.time = now;
	e.ak_name = a.ak_name;
	e.ak_name_len = a.ak_name_len;
	ret = raise_event(st, pc, &e);
	store_agent_release(&a);
	return ret;
}

static int call_activate(struct pg_store *st, struct pg_conn *pc, void *arg)
{
	struct activate_arg *e = arg;
	struct params p = { 0 };
	PGresult *r;
	int ret;

	/* One transaction under the enrollment lock: two ids of one EK cannot both activate. */
	if ((ret = run_sql(st, pc, "BEGIN", true)) ||
	    (ret = run_sql(st, pc, "SELECT pg_advisory_xact_lock(x'" PG_LOCK_ENROLL "'::bigint)",
			   false)))
		goto out;
	p_text(&p, e->id);
	r = run(st, pc, STMT_ACTIVATE_FACTS, &p, false, "agent activate", &ret);
	if (!r)
		goto out;
	if (PQntuples(r) == 0 || strcmp(r_text(r, 0, 0), "pending") != 0 ||
	    r_len(r, 0, 1) != STORE_CRED_DIGEST_LEN ||
	    memcmp(r_text(r, 0, 1), e->digest, STORE_CRED_DIGEST_LEN) != 0)
		ret = -ESTALE; /* unknown (or expired and deleted), re-enrolled, or active */
	else if (r_int(r, 0, 2) <= e->now - e->lim->pending_ttl)
		ret = -ETIMEDOUT;
	else if (r_int(r, 0, 3))
		ret = -EEXIST;
	PQclear(r);
	if (ret)
		goto out;
	memset(&p, 0, sizeof(p));
	p_text(&p, e->id);
	p_bytes(&p, e->digest, STORE_CRED_DIGEST_LEN);
	p_int(&p, e->now);
	r = run(st, pc, STMT_AGENT_ACTIVATE, &p, false, "agent activate", &ret);
	if (!r)
		goto out;
	ret = strcmp(PQcmdTuples(r), "1") == 0 ? 0 : -ESTALE;
	PQclear(r);
	if (!ret)
		ret = activated(st, pc, e->id, e->now);
	if (!ret)
		ret = run_sql(st, pc, "COMMIT", false);
out:
	rollback(pc);
	return ret;
}

static int pg_agent_activate(struct store_backend *b, const char *id,
			     const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now,
			     const struct store_enroll_limits *lim)
{
	struct activate_arg e = { id, digest, now, lim };

	return with_conn(pg(b), call_activate, &e);
}

/* A one-statement write: `id` with p, -ENOENT if it changed no row. */
struct write_arg {
	enum stmt id;
	const struct params *p;
	const char *what;
	long changed;
};

static int call_write(struct pg_store *st, struct pg_conn *pc, void *arg)
{
	struct write_arg *w = arg;
	int ret = 0;
	PGresult *r = run(st, pc, w->id, w->p, true, w->what, &ret);

	if (!r)
		return ret;
	w->changed = strtol(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	return 0;
}

static int pg_agent_set_policy(struct store_backend *b, const char *id, const char *policy)
{
	struct params p = { 0 };
	struct write_arg w = { STMT_AGENT_SET_POLICY, &p, "agent policy", 0 };
	int ret;

	p_text(&p, id);
	p_text(&p, policy);
	ret = with_conn(pg(b), call_write, &w);
	return ret ? ret : w.changed == 1 ? 0 : -ENOENT;
}

/*
 * A read whose rows go to a callback: the result is taken whole first, so that the
 * connection is not held while callbacks run. `row` turns row i into the callback's call.
 */
struct list_arg {
	enum stmt id;
	const struct params *p;
	const char *what;
	PGresult *res;
};

static int call_list(struct pg_store *st, struct pg_conn *pc, void *arg)
{
	struct list_arg *l = arg;
	int ret = 0;

	l->res = run(st, pc, l->id, l->p, true, l->what, &ret);
	return l->res ? 0 : ret;
}

static int pg_query(struct pg_store *st, enum stmt id, const struct params *p, const char *what,
		    PGresult **out)
{
	struct list_arg l = { id, p, what, NULL };
	int ret = with_conn(st, call_list, &l);

	*out = l.res;
	return ret;
}

static int pg_agents_list(struct store_backend *b, store_agent_cb cb, void *arg)
{
	struct store_agent a;
	PGresult *r;
	int ret = pg_query(pg(b), STMT_AGENTS_LIST, NULL, "agents list", &r);

	for (int i = 0; !ret && i < PQntuples(r); i++) {
		memset(&a, 0, sizeof(a));
		agent_summary_row(r, i, &a);
		a.last_reasons_json = r_text(r, i, AGENT_SUMMARY_NCOLS);
		ret = cb(arg, &a);
	}
	PQclear(r);
	return ret;
}

/* Boot state and rounds ------------------------------------------------------------------ */

static int pg_boot_get(struct store_backend *b, const char *agent, struct boot_state *out,
		       uint64_t *version)
{
	struct params p = { 0 };
	PGresult *r;
	int ret;

	memset(out, 0, sizeof(*out));
	*version = 0;
	p_text(&p, agent);
	ret = pg_query(pg(b), STMT_BOOT_GET, &p, "boot state lookup", &r);
	if (ret)
		return ret;
	if (PQntuples(r) == 1) {
		const uint8_t *v = (const uint8_t *)r_text(r, 0, 0);
		size_t n = r_len(r, 0, 0);

		if (boot_state_decode(v, n, out)) {
			log_error("store: boot state of agent \"%s\" does not decode: %zu bytes,"
				  " version %d; expected %u bytes, version %u", agent, n,
				  n > 0 ? v[0] : -1, BOOT_STATE_ENCODED_LEN, BOOT_STATE_VERSION);
			ret = -EINVAL;
		} else {
			*version = (uint64_t)r_int(r, 0, 1);
		}
	}
	PQclear(r);
	return ret;
}

static int pg_boot_log_get(struct store_backend *b, const char *agent, struct store_boot_log *out)
{
	struct params p = { 0 };
	PGresult *r;
	void *v;
	int ret;

	memset(out, 0, sizeof(*out));
	p_text(&p, agent);
	ret = pg_query(pg(b), STMT_BOOT_LOG_GET, &p, "boot log lookup", &r);
	if (ret)
		return ret;
	if (PQntuples(r) == 0) {
		ret = -ENOENT;
		goto out;
	}
	if (r_len(r, 0, 1) != 32) {
		log_error("store: the boot log of agent \"%s\" has no sha256", agent);
		ret = -EINVAL;
		goto out;
	}
	memcpy(out->sha256, r_text(r, 0, 1), 32);
	if (r_len(r, 0, 4) == 32)
		memcpy(out->judged_key, r_text(r, 0, 4), 32);
	out->judged_boot = (uint64_t)r_int(r, 0, 3);
	out->received_at = r_int(r, 0, 6);
	if ((ret = r_dup(r, 0, 0, &v, &out->log_len)) == 0) {
		out->log = v;
		if ((ret = r_dup(r, 0, 2, &v, NULL)) == 0) {
			out->cmdline = v;
			if ((ret = r_dup(r, 0, 5, &v, NULL)) == 0)
				out->summary = v;
		}
	}
	if (!ret && !out->log)
		ret = -EINVAL;
out:
	PQclear(r);
	if (ret)
		store_boot_log_release(out);
	return ret;
}

static int pg_round_context(struct store_backend *b, const char *agent,
			    const char *default_policy, const char *amendment,
			    struct store_round_ctx *out)
{
	struct params p = { 0 };
	PGresult *r;
	size_t n;
	int ret;

	memset(out, 0, sizeof(*out));
	p_text(&p, agent);
	p_text(&p, default_policy);
	p_text(&p, amendment);
	ret = pg_query(pg(b), STMT_ROUND_CONTEXT, &p, "round context", &r);
	if (ret)
		return ret;
	if (PQntuples(r) == 0) {
		ret = -ENOENT;
		goto out;
	}
	out->state = agent_state_of(r_text(r, 0, 0));
	snprintf(out->policy, sizeof(out->policy), "%s", r_text(r, 0, 1));
	n = r_len(r, 0, 2);
	if (n > 0 && n <= sizeof(out->ak_name)) {
		memcpy(out->ak_name, r_text(r, 0, 2), n);
		out->ak_name_len = n;
	}
	if (!PQgetisnull(r, 0, 3)) {
		if (boot_state_decode((const uint8_t *)r_text(r, 0, 3), r_len(r, 0, 3), &out->boot)) {
			log_error("store: boot state of agent \"%s\" does not decode (%zu bytes)",
				  agent, r_len(r, 0, 3));
			memset(&out->boot, 0, sizeof(out->boot));
			ret = -EINVAL;
			goto out;
		}
		out->version = (uint64_t)r_int(r, 0, 4);
	}
	out->open_violations = (uint64_t)r_int(r, 0, 5);
	out->open_violations_in_boot = (uint64_t)r_int(r, 0, 6);
	if (r_len(r, 0, 7) == 32) {
		out->has_boot_log = true;
		memcpy(out->boot_log_sha256, r_text(r, 0, 7), 32);
	}
	out->policy_version = r_int(r, 0, 8);
	out->amendment_version = r_int(r, 0, 9);
out:
	PQclear(r);
	return ret;
}

/* A round's violations as attest_round() takes them; NULL (no parameter) when there are none. */
static int violations_json(const struct store_round *r, char **out)
{
	json_t *arr;
	char *hex = NULL;
	int ret = -ENOMEM;

	*out = NULL;
	if (!r->nviolations)
		return 0;
	arr = json_array();
	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < r->nviolations; i++) {
		const struct store_round_violation *v = &r->violations[i];
		size_t plen = v->path_len || !v->path ? v->path_len : strlen(v->path);
		uint64_t last = v->last_entry > v->entry ? v->last_entry : v->entry;
		json_t *o, *path;

		free(hex);
		hex = NULL;
		if (v->path) {
			hex = malloc(2 * plen + 1);
			if (!hex)
				goto out;
			hex_encode((const uint8_t *)v->path, plen, hex);
		}
		/* No path at all is null, which the NOT NULL column refuses (as SQLite does). */
		path = hex ? json_string(hex) : json_null();
		o = json_pack("{s:I, s:s?, s:o, s:s?, s:s, s:I, s:I}", "i", (json_int_t)i, "reason",
			      v->reason, "path", path, "digest", v->digest, "template",
			      v->template_name ? v->template_name : "", "last", (json_int_t)last,
			      "count", (json_int_t)(v->count ? v->count : 1));
		if (!o || json_array_append_new(arr, o))
			goto out;
	}
	*out = json_dumps(arr, JSON_COMPACT);
	ret = *out ? 0 : -ENOMEM;
out:
	free(hex);
	json_decref(arr);
	return ret;
}

/* The parameters of STMT_ROUND for r; *viol (caller frees) backs one of them. */
static int round_params(const struct store_round *r, bool events,
			uint8_t blob[BOOT_STATE_ENCODED_LEN], struct params *p, char **viol)
{
	const struct store_boot_log *bl = r->boot_log;
	int ret = violations_json(r, viol);

	if (ret)
		return ret;
	boot_state_encode(r->next, blob);
	memset(p, 0, sizeof(*p));
	p_text(p, r->agent);
	p_int(p, (int64_t)r->prev_version);
	p_bytes(p, blob, BOOT_STATE_ENCODED_LEN);
	p_int(p, r->next->reset_count);
	p_int(p, r->next->restart_count);
	p_int(p, (int64_t)r->next->boot_number);
	p_int(p, (int64_t)r->next->next_entry);
	p_int(p, r->now);
	p_int(p, r->trusted ? 1 : 0);
	p_text(p, r->reasons_json ? r->reasons_json : "[]");
	p_int(p, (int64_t)r->next_offset);
	if (r->nonce_len)
		p_bytes(p, r->nonce, r->nonce_len);
	else
		p_text(p, NULL);
	p_int(p, r->nonce_expires);
	p_text(p, bl ? "true" : "false");
	if (bl) {
		p_bytes(p, bl->log, bl->log_len);
		p_bytes(p, bl->sha256, 32);
		p_text(p, bl->cmdline);
		p_int(p, (int64_t)bl->judged_boot);
		p_bytes(p, bl->judged_key, 32);
		p_text(p, bl->summary);
		p_int(p, bl->received_at);
	} else {
		for (int i = 0; i < 7; i++)
			p_text(p, NULL);
	}
	p_text(p, *viol);
	p_int(p, r->interval);
	p_text(p, events ? "true" : "false");
	p_text(p, r->judged && r->judged->known ? r->judged->policy : "");
	p_int(p, r->judged && r->judged->known ? r->judged->policy_version : 0);
	p_int(p, r->judged && r->judged->known ? r->judged->amendment_version : 0);
	return 0;
}

static int agent_cmp(const void *a, const void *b)
{
	const struct store_pending_round *x = *(struct store_pending_round *const *)a;
	const struct store_pending_round *y = *(struct store_pending_round *const *)b;

	return strcmp(x->r->agent, y->r->agent);
}

struct commit_arg {
	struct store_pending_round **rounds;
	size_t n;
	bool prune;
	int64_t prune_before;
	bool events;   /* webhooks configured: the rounds' events are written before COMMIT */
	bool *turned;  /* per round, with events: agent.untrusted is due */
	char **opened; /* per round, with events: attest_round()'s opened, malloc'd */
};

/* Reads the result of one pipelined query; NULL (and *ok false) if it failed. */
static PGresult *pipeline_result(PGconn *c, const char *what, bool *ok)
{
	PGresult *r = PQgetResult(c), *extra;
	ExecStatusType s = PQresultStatus(r);

	/* Each query's results end with a NULL. */
	while ((extra = PQgetResult(c)))
		PQclear(extra);
	if (r && (s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK))
		return r;
	if (*ok && s != PGRES_PIPELINE_ABORTED)
		store_pg_fail(c, r, what);
	*ok = false;
	PQclear(r);
	return NULL;
}

/*
 * One round's result row into w (and ca's event facts for round i); false if those facts could
 * not be kept (out of memory): the batch must not commit without the round's events then.
 */
static bool round_result(struct commit_arg *ca, size_t i, const PGresult *r)
{
	struct store_pending_round *w = ca->rounds[i];

	switch (r_int(r, 0, 0)) {
	case 0:
		w->verdict_id = r_int(r, 0, 1);
		if (ca->events) {
			ca->turned[i] = r_int(r, 0, 3) != 0;
			if (r_len(r, 0, 4) > 2 && !(ca->opened[i] = strdup(r_text(r, 0, 4))))
				return false;
		}
		break;
	case 1:
		w->ret = -ESTALE;
		break;
	case 2:
		w->ret = -EALREADY;
		break;
	case 4:
		w->ret = -EKEYREVOKED;
		break;
	default:
		log_error("store: the round of agent \"%s\" failed: postgresql %s", w->r->agent,
			  r_text(r, 0, 2));
		w->ret = -EIO;
		break;
	}
	return true;
}

/* The events of a committed round (store_sqlite.c's round_write() raises the same). */
static int round_events(struct pg_store *st, struct pg_conn *pc, const struct commit_arg *ca,
			size_t i)
{
	const struct store_round *r = ca->rounds[i]->r;
	json_t *opened = NULL, *row;
	size_t k;
	int ret = 0;

	if (ca->turned[i]) {
		struct store_event e = {
			.type = STORE_EVENT_UNTRUSTED, .agent = r->agent, .time = r->now,
			.verdict_id = ca->rounds[i]->verdict_id, .boot_number = r->next->boot_number,
			.reasons_json = r->reasons_json,
		};

		ret = raise_event(st, pc, &e);
	}
	if (ret || !ca->opened[i])
		return ret;
	opened = json_loads(ca->opened[i], 0, NULL);
	if (!json_is_array(opened))
		ret = -EIO;
	json_array_foreach(opened, k, row) {
		json_int_t vi = json_integer_value(json_array_get(row, 0));
		const struct store_round_violation *v;
		struct store_event e = { .type = STORE_EVENT_VIOLATION };

		if (ret)
			break;
		if (vi < 0 || (size_t)vi >= r->nviolations) {
			ret = -EIO;
			break;
		}
		v = &r->violations[vi];
		e.agent = r->agent;
		e.time = r->now;
		e.violation_id = json_integer_value(json_array_get(row, 1));
		e.recurs = json_integer_value(json_array_get(row, 2));
		e.reason = v->reason;
		e.path = v->path;
		e.path_len = v->path_len || !v->path ? v->path_len : strlen(v->path);
		e.digest = v->digest;
		e.entry = v->last_entry > v->entry ? v->last_entry : v->entry;
		e.count = v->count ? v->count : 1;
		e.boot_number = r->next->boot_number;
		ret = raise_event(st, pc, &e);
	}
	json_decref(opened);
	return ret;
}

/*
 * The batch in one pipeline; 0, PG_RETRY (nothing reached the server), or -EIO. With webhooks
 * configured the pipeline stops before COMMIT: the events of the rounds that committed need
 * their verdict and violation ids, so they are written after it, then COMMIT (events are rare:
 * a turn to untrusted, a new violation).
 */
static int call_commit(struct pg_store *st, struct pg_conn *pc, void *arg)
{
	struct commit_arg *ca = arg;
	PGconn *c = pc->c;
	struct params p;
	char **viol = calloc(ca->n ? ca->n : 1, sizeof(*viol));
	uint8_t (*blobs)[BOOT_STATE_ENCODED_LEN] = calloc(ca->n ? ca->n : 1, sizeof(*blobs));
	bool ok = true, begun = false;
	PGresult *r;
	char name[16];
	int ret = -EIO;

	if (!viol || !blobs || !PQenterPipelineMode(c))
		goto out;
	ok = PQsendQueryParams(c, "BEGIN", 0, NULL, NULL, NULL, NULL, 1);
	for (size_t i = 0; ok && i < ca->n; i++) {
		struct store_pending_round *w = ca->rounds[i];

		w->ret = round_params(w->r, ca->events, blobs[i], &p, &viol[i]);
		if (w->ret)
			continue; /* out of memory for this round alone */
		snprintf(name, sizeof(name), "s%u", (unsigned)STMT_ROUND);
		ok = PQsendQueryPrepared(c, name, p.n, p.val, p.len, p.fmt, 1);
	}
	if (ok && ca->prune) {
		memset(&p, 0, sizeof(p));
		p_int(&p, ca->prune_before);
		snprintf(name, sizeof(name), "s%u", (unsigned)STMT_NONCES_PRUNE);
		ok = PQsendQueryPrepared(c, name, p.n, p.val, p.len, p.fmt, 1);
	}
	if (ok && !ca->events)
		ok = PQsendQueryParams(c, "COMMIT", 0, NULL, NULL, NULL, NULL, 1);
	ok = ok && PQpipelineSync(c);
	if (!ok) {
		/* Nothing was flushed to the server if the connection was dead already. */
		ret = PQstatus(c) != CONNECTION_OK ? PG_RETRY : store_pg_fail(c, NULL, "round batch");
		if (ret == PG_RETRY)
			set_down(st, true, PQerrorMessage(c));
		goto out;
	}
	r = pipeline_result(c, "BEGIN", &ok);
	begun = r != NULL;
	PQclear(r);
	if (!begun && PQstatus(c) != CONNECTION_OK) {
		ret = PG_RETRY; /* the server never began the transaction */
		set_down(st, true, PQerrorMessage(c));
		goto out;
	}
	for (size_t i = 0; i < ca->n; i++) {
		struct store_pending_round *w = ca->rounds[i];

		if (w->ret)
			continue;
		r = pipeline_result(c, "round", &ok);
		if (!r) {
			w->ret = -EIO;
			continue;
		}
		if (!round_result(ca, i, r))
			ok = false;
		PQclear(r);
	}
	if (ca->prune) {
		bool pok = ok;

		PQclear(pipeline_result(c, "spent challenges prune", &pok));
		ok = pok;
	}
	if (!ca->events)
		PQclear(pipeline_result(c, "COMMIT", &ok));
	r = PQgetResult(c); /* the sync */
	if (PQresultStatus(r) != PGRES_PIPELINE_SYNC)
		ok = false;
	PQclear(r);
	if (ok && ca->events) {
		/* Still inside the transaction: the events, then COMMIT. */
		if (!PQexitPipelineMode(c)) {
			ok = false;
		} else {
			for (size_t i = 0; ok && i < ca->n; i++)
				if (!ca->rounds[i]->ret && round_events(st, pc, ca, i))
					ok = false;
			ok = ok && run_sql(st, pc, "COMMIT", false) == 0;
		}
	}
	ret = ok ? 0 : -EIO;
	if (!ok && PQstatus(c) != CONNECTION_OK)
		set_down(st, true, PQerrorMessage(c));
out:
	if (PQpipelineStatus(c) != PQ_PIPELINE_OFF && !PQexitPipelineMode(c))
		conn_drop(pc); /* left mid-pipeline: never reused */
	else
		rollback(pc);
	for (size_t i = 0; viol && i < ca->n; i++)
		free(viol[i]);
	free(viol);
	free(blobs);
	return ret;
}

/* store_backend.h: the batch in one transaction and one pipeline, a subtransaction per round. */
static void pg_commit_rounds(struct store_backend *b, struct store_pending_round *batch)
{
	struct pg_store *st = pg(b);
	struct commit_arg ca = { 0 };
	struct store_pending_round *w;
	int ret;

	for (w = batch; w; w = w->next)
		ca.n++;
	ca.rounds = calloc(ca.n ? ca.n : 1, sizeof(*ca.rounds));
	if (!ca.rounds) {
		for (w = batch; w; w = w->next)
			w->ret = -ENOMEM;
		return;
	}
	ca.n = 0;
	for (w = batch; w; w = w->next)
		ca.rounds[ca.n++] = w;
	/* Locks taken in one order by every verifier: batches never deadlock on boot states. */
	qsort(ca.rounds, ca.n, sizeof(*ca.rounds), agent_cmp);
	if (batch && batch->r->now - st->nonces_pruned >= STORE_NONCES_PRUNE_EVERY) {
		ca.prune = true;
		ca.prune_before = batch->r->now - STORE_NONCES_KEEP;
		st->nonces_pruned = batch->r->now; /* commit_rounds() is called one at a time */
	}
	for (size_t i = 0; i < ca.n; i++)
		ca.rounds[i]->ret = 0;
	ca.events = events_on(st);
	if (ca.events) {
		ca.turned = calloc(ca.n ? ca.n : 1, sizeof(*ca.turned));
		ca.opened = calloc(ca.n ? ca.n : 1, sizeof(*ca.opened));
	}
	if (ca.events && (!ca.turned || !ca.opened))
		ret = -ENOMEM;
	else
		ret = with_conn(st, call_commit, &ca);
	if (ret)
		for (w = batch; w; w = w->next)
			w->ret = w->ret ? w->ret : ret;
	else
		for (w = batch; w; w = w->next)
			if (w->ret)
				w->verdict_id = 0;
	for (size_t i = 0; ca.opened && i < ca.n; i++)
		free(ca.opened[i]);
	free(ca.opened);
	free(ca.turned);
	free(ca.rounds);
}

static int pg_verdicts_list(struct store_backend *b, const char *agent, unsigned limit,
			    store_verdict_cb cb, void *arg)
{
	struct params p = { 0 };
	struct store_verdict v;
	PGresult *r;
	int ret;

	p_text(&p, agent);
	p_int(&p, limit);
	ret = pg_query(pg(b), STMT_VERDICTS_LIST, &p, "verdicts list", &r);
	for (int i = 0; !ret && i < PQntuples(r); i++) {
		memset(&v, 0, sizeof(v));
		v.id = r_int(r, i, 0);
		snprintf(v.agent, sizeof(v.agent), "%s", r_text(r, i, 1));
		v.boot_number = (uint64_t)r_int(r, i, 2);
		v.time = r_int(r, i, 3);
		v.trusted = r_int(r, i, 4) != 0;
		v.reasons_json = r_text(r, i, 5);
		v.next_offset = (uint64_t)r_int(r, i, 6);
		snprintf(v.judged.policy, sizeof(v.judged.policy), "%s", r_text(r, i, 7));
		v.judged.known = v.judged.policy[0] != '\0';
		v.judged.policy_version = r_int(r, i, 8);
		v.judged.amendment_version = r_int(r, i, 9);
		ret = cb(arg, &v);
	}
	PQclear(r);
	return ret;
}

/* Violations ----------------------------------------------------------------------------- */

static void violation_from_row(const PGresult *r, int i, struct store_violation *v)
{
	int vs;

	memset(v, 0, sizeof(*v));
	v->id = r_int(r, i, 0);
	v->agent = r_text(r, i, 1);
	v->boot_number = (uint64_t)r_int(r, i, 2);
	v->entry = (uint64_t)r_int(r, i, 3);
	v->path = r_text(r, i, 4); /* raw bytes with a NUL after them */
	v->path_len = r_len(r, i, 4);
	v->digest = r_text(r, i, 5);
	v->template_name = r_text(r, i, 6);
	v->reason = r_text(r, i, 7);
	v->first_seen = r_int(r, i, 8);
	v->last_seen = r_int(r, i, 9);
	v->count = (uint64_t)r_int(r, i, 10);
	vs = violation_state_from_str(r_text(r, i, 11));
	v->state = vs < 0 ? VIOLATION_OPEN : (enum violation_state)vs;
	v->recurs = r_int(r, i, 12);
	v->decided_at = r_int(r, i, 13);
	v->decision = r_text(r, i, 14);
}

static int pg_violation_get(struct store_backend *b, int64_t id, store_violation_cb cb, void *arg)
{
	struct params p = { 0 };
	struct store_violation v;
	PGresult *r;
	int ret;

	p_int(&p, id);
	ret = pg_query(pg(b), STMT_VIOLATION_GET, &p, "violation get", &r);
	if (!ret) {
		if (PQntuples(r) == 1) {
			violation_from_row(r, 0, &v);
			ret = cb(arg, &v);
		} else {
			ret = -ENOENT;
		}
	}
	PQclear(r);
	return ret;
}

static int pg_violations_open_count(struct store_backend *b, const char *agent,
				    uint64_t boot_number, uint64_t *total, uint64_t *in_boot)
{
	struct params p = { 0 };
	PGresult *r;
	int ret;

	*total = *in_boot = 0;
	p_text(&p, agent);
	p_int(&p, (int64_t)boot_number);
	ret = pg_query(pg(b), STMT_VIOLATIONS_OPEN_COUNT, &p, "open violations", &r);
	if (!ret) {
		*total = (uint64_t)r_int(r, 0, 0);
		*in_boot = (uint64_t)r_int(r, 0, 1);
	}
	PQclear(r);
	return ret;
}

static int pg_violations_list(struct store_backend *b, int state, const char *agent,
			      unsigned limit, store_violation_cb cb, void *arg)
{
	struct params p = { 0 };
	struct store_violation v;
	PGresult *r;
	int ret;

	p_text(&p, state >= 0 ? violation_state_str((enum violation_state)state) : NULL);
	p_text(&p, agent);
	p_int(&p, limit);
	ret = pg_query(pg(b), STMT_VIOLATIONS_LIST, &p, "violations list", &r);
	for (int i = 0; !ret && i < PQntuples(r); i++) {
		violation_from_row(r, i, &v);
		ret = cb(arg, &v);
	}
	PQclear(r);
	return ret;
}

static int pg_violation_decide(struct store_backend *b, int64_t id, enum violation_state state,
			       int64_t now, const char *decision)
{
	struct params p = { 0 };
	struct write_arg w = { STMT_VIOLATION_DECIDE, &p, "violation decision", 0 };
	PGresult *r;
	int ret;

	p_int(&p, id);
	p_text(&p, violation_state_str(state));
	p_int(&p, now);
	p_text(&p, decision);
	ret = with_conn(pg(b), call_write, &w);
	if (ret || w.changed == 1)
		return ret;
	/* Not open: decided already, or no such violation. */
	memset(&p, 0, sizeof(p));
	p_int(&p, id);
	ret = pg_query(pg(b), STMT_VIOLATION_GET, &p, "violation get", &r);
	if (!ret)
		ret = PQntuples(r) ? -EALREADY : -ENOENT;
	PQclear(r);
	return ret;
}

/* Policies ------------------------------------------------------------------------------- */

struct policy_put_arg {
	const char *name, *json, *actor;
	int64_t expected; /* STORE_POLICY_ANY, or the version the newest must be */
	int64_t now;
	int64_t *version;
};

static int call_policy_put(struct pg_store *st, struct pg_conn *pc, void *arg)
{
	struct policy_put_arg *a = arg;
	struct params p = { 0 };
	int64_t cur = 0;
	PGresult *r;
	int ret;

	/* Verifiers writing one policy at once (each started with --policy) take turns. */
	if ((ret = run_sql(st, pc, "BEGIN", true)) ||
	    (ret = run_sql(st, pc, "SELECT pg_advisory_xact_lock(x'" PG_LOCK_POLICY "'::bigint)",
			   false)))
		goto out;
	p_text(&p, a->name);
	r = run(st, pc, STMT_POLICY_NEWEST, &p, false, "policy lookup", &ret);
	if (!r)
		goto out;
	if (PQntuples(r) == 1)
		cur = r_int(r, 0, 0);
	if (a->expected != STORE_POLICY_ANY && cur != a->expected) {
		*a->version = cur;
		PQclear(r);
		ret = -ESTALE; /* written since the caller read it */
		goto out;
	}
	if (PQntuples(r) == 1) {
		if (!strcmp(r_text(r, 0, 1), a->json)) {
			*a->version = cur; /* unchanged: no new version */
			PQclear(r);
			ret = run_sql(st, pc, "COMMIT", false);
			goto out;
		}
	}
	PQclear(r);
	memset(&p, 0, sizeof(p));
	p_text(&p, a->name);
	p_int(&p, cur + 1);
	p_text(&p, a->json);
	p_text(&p, a->actor);
	p_int(&p, a->now);
	r = run(st, pc, STMT_POLICY_INSERT, &p, false, "policy write", &ret);
	if (!r)
		goto out;
	PQclear(r);
	if (!(ret = run_sql(st, pc, "COMMIT", false)))
		*a->version = cur + 1;
out:
	rollback(pc);
	return ret;
}

static int pg_policy_put(struct store_backend *b, const char *name, int64_t expected,
			 const char *json, const char *actor, int64_t now, int64_t *version)
{
	struct policy_put_arg a = { name, json, actor, expected, now, version };

	return with_conn(pg(b), call_policy_put, &a);
}

static int pg_policy_version(struct store_backend *b, const char *name, int64_t *version)
{
	struct params p = { 0 };
	PGresult *r;
	int ret;

	*version = 0;
	p_text(&p, name);
	ret = pg_query(pg(b), STMT_POLICY_VERSION, &p, "policy version", &r);
	if (!ret) {
		if (PQgetisnull(r, 0, 0))
			ret = -ENOENT;
		else
			*version = r_int(r, 0, 0);
	}
	PQclear(r);
	return ret;
}

static int pg_policy_get(struct store_backend *b, const char *name, char **json,
			 int64_t *version)
{
	struct params p = { 0 };
	PGresult *r;
	int ret;

	*json = NULL;
	p_text(&p, name);
	ret = pg_query(pg(b), STMT_POLICY_NEWEST, &p, "policy lookup", &r);
	if (!ret) {
		if (PQntuples(r) == 0) {
			ret = -ENOENT;
		} else {
			*version = r_int(r, 0, 0);
			*json = strdup(r_text(r, 0, 1));
			ret = *json ? 0 : -ENOMEM;
		}
	}
	PQclear(r);
	return ret;
}

static int pg_policy_get_version(struct store_backend *b, const char *name, int64_t version,
				 char **json)
{
	struct params p = { 0 };
	PGresult *r;
	int ret;

	*json = NULL;
	p_text(&p, name);
	p_int(&p, version);
	ret = pg_query(pg(b), STMT_POLICY_GET_VERSION, &p, "policy version lookup", &r);
	if (!ret)
		ret = PQntuples(r) == 0 ? -ENOENT : (*json = strdup(r_text(r, 0, 0))) ? 0 : -ENOMEM;
	PQclear(r);
	return ret;
}

static int pg_policy_versions(struct store_backend *b, const char *name,
			      store_policy_version_cb cb, void *arg)
{
	struct params p = { 0 };
	struct store_policy_version v;
	PGresult *r;
	int ret;

	p_text(&p, name);
	ret = pg_query(pg(b), STMT_POLICY_VERSIONS, &p, "policy versions", &r);
	for (int i = 0; !ret && i < PQntuples(r); i++) {
		v.version = r_int(r, i, 0);
		v.actor = r_text(r, i, 1);
		v.time = r_int(r, i, 2);
		v.bytes = (uint64_t)r_int(r, i, 3);
		ret = cb(arg, &v);
	}
	PQclear(r);
	return ret;
}

static int pg_policy_agents(struct store_backend *b, const char *name, uint64_t *count)
{
	struct params p = { 0 };
	PGresult *r;
	int ret;

	*count = 0;
	p_text(&p, name);
	ret = pg_query(pg(b), STMT_POLICY_AGENTS, &p, "policy agents", &r);
	if (!ret)
		*count = (uint64_t)r_int(r, 0, 0);
	PQclear(r);
	return ret;
}

/* Metrics -------------------------------------------------------------------------------- */

static int pg_counts(struct store_backend *b, struct store_counts *out)
{
	PGresult *r;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = pg_query(pg(b), STMT_COUNTS, NULL, "counts", &r);
	if (!ret) {
		out->agents_pending = (uint64_t)r_int(r, 0, 0);
		out->agents_active = (uint64_t)r_int(r, 0, 1);
		out->violations_open = (uint64_t)r_int(r, 0, 2);
		out->verdicts_trusted = (uint64_t)r_int(r, 0, 3);
		out->verdicts_untrusted = (uint64_t)r_int(r, 0, 4);
		out->agents_retired = (uint64_t)r_int(r, 0, 5);
	}
	PQclear(r);
	return ret;
}

/* Lifecycle, liveness, webhook outbox (issue 16) ---------------------------------------- */

/*
 * One call of issue 16's: a transaction on agent `id` that runs `change` and, if it changed
 * something, writes the history row (`event`, with detail) and the event e. Retiring and
 * resetting change what an enrollment decides, so they take the enrollment lock too.
 */
struct lifecycle_arg {
	const char *id;
	int64_t now;
	const char *actor;
	bool purge;
	bool enroll_lock;
	int (*change)(struct pg_store *st, struct pg_conn *pc, struct lifecycle_arg *a);
	const char *event, *detail; /* NULL: no history row */
	struct store_event e;
	int64_t last_seen;          /* mark_stale */
};

/* `id` changed no row: -EALREADY if the agent exists (nothing to do), else -ENOENT. */
static int exists_or_enoent(struct pg_store *st, struct pg_conn *pc, const char *id)
{
	struct params p = { 0 };
	PGresult *r;
	int ret = 0;

	p_text(&p, id);
	r = run(st, pc, STMT_AGENT_STATE, &p, false, "agent state", &ret);
	if (!r)
		return ret;
	ret = PQntuples(r) ? -EALREADY : -ENOENT;
	PQclear(r);
	return ret;
}

/* Runs `id` on p and says how many rows it changed (-1 on failure, *ret set). */
static long change_rows(struct pg_store *st, struct pg_conn *pc, enum stmt id,
			const struct params *p, int *ret)
{
	PGresult *r = run(st, pc, id, p, false, stmt_sql[id], ret);
	long n;

	if (!r)
		return -1;
	n = strtol(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	return n;
}

static int change_retire(struct pg_store *st, struct pg_conn *pc, struct lifecycle_arg *a)
{
	char amendment[STORE_AMENDMENT_NAME_MAX + 1];
	struct params p = { 0 };
	long n;
	int ret = exists_or_enoent(st, pc, a->id);

	if (ret != -EALREADY)
		return ret;
	ret = 0;
	p_text(&p, a->id);
	if (a->purge) {
		store_amendment_name(a->id, amendment);
		p_text(&p, amendment);
		n = change_rows(st, pc, STMT_AGENT_PURGE, &p, &ret);
		a->event = NULL; /* its history went with it */
	} else {
		p_int(&p, a->now);
		n = change_rows(st, pc, STMT_AGENT_RETIRE, &p, &ret);
		if (n == 0)
			ret = -EALREADY;
	}
	return ret;
}

static int change_reset(struct pg_store *st, struct pg_conn *pc, struct lifecycle_arg *a)
{
	struct params p = { 0 };
	int ret = 0;
	long n;

	p_text(&p, a->id);
	p_int(&p, a->now);
	n = change_rows(st, pc, STMT_AGENT_RESET, &p, &ret);
	return n < 0 ? ret : n == 0 ? exists_or_enoent(st, pc, a->id) : 0;
}

static int change_stale(struct pg_store *st, struct pg_conn *pc, struct lifecycle_arg *a)
{
	struct params p = { 0 };
	int ret = 0;
	long n;

	p_text(&p, a->id);
	p_int(&p, a->last_seen);
	n = change_rows(st, pc, STMT_AGENT_MARK_STALE, &p, &ret);
	return n < 0 ? ret : n == 0 ? exists_or_enoent(st, pc, a->id) : 0;
}

static int call_lifecycle(struct pg_store *st, struct pg_conn *pc, void *arg)
{
	struct lifecycle_arg *a = arg;
	int ret;

	if ((ret = run_sql(st, pc, "BEGIN", true)) ||
	    (a->enroll_lock &&
	     (ret = run_sql(st, pc, "SELECT pg_advisory_xact_lock(x'" PG_LOCK_ENROLL "'::bigint)",
			    false))) ||
	    (ret = a->change(st, pc, a)))
		goto out;
	if (a->event &&
	    (ret = history_add(st, pc, a->id, a->now, a->event, a->actor, a->detail)))
		goto out;
	if (!(ret = raise_event(st, pc, &a->e)))
		ret = run_sql(st, pc, "COMMIT", false);
out:
	rollback(pc);
	return ret;
}

static int pg_agent_retire(struct store_backend *b, const char *id, int64_t now,
			   const char *actor, bool purge)
{
	struct lifecycle_arg a = {
		.id = id, .now = now, .actor = actor, .purge = purge, .enroll_lock = true,
		.change = change_retire, .event = "retired",
		.detail = "evidence refused; its EK may enroll under another id",
		.e = { .type = STORE_EVENT_RETIRED, .agent = id, .time = now, .actor = actor,
		       .purged = purge },
	};

	return with_conn(pg(b), call_lifecycle, &a);
}

static int pg_agent_reset(struct store_backend *b, const char *id, int64_t now,
			  const char *actor)
{
	struct lifecycle_arg a = {
		.id = id, .now = now, .actor = actor, .enroll_lock = true, .change = change_reset,
		.event = "reset", .detail = "its next enrollment may bring a new EK and AK",
		.e = { .type = STORE_EVENT_RESET, .agent = id, .time = now, .actor = actor },
	};

	return with_conn(pg(b), call_lifecycle, &a);
}

static int pg_agent_mark_stale(struct store_backend *b, const char *id, int64_t last_seen,
			       uint32_t interval, int64_t stale_after, int64_t now)
{
	struct lifecycle_arg a = {
		.id = id, .now = now, .change = change_stale, .last_seen = last_seen,
		.e = { .type = STORE_EVENT_STALE, .agent = id, .time = now, .last_seen = last_seen,
		       .interval = interval, .stale_after = stale_after },
	};

	return with_conn(pg(b), call_lifecycle, &a);
}

static int pg_agent_history(struct store_backend *b, const char *id, unsigned limit,
			    store_agent_event_cb cb, void *arg)
{
	struct params p = { 0 };
	struct store_agent_event e;
	PGresult *r;
	int ret;

	p_text(&p, id);
	p_int(&p, limit);
	ret = pg_query(pg(b), STMT_HISTORY_LIST, &p, "agent history", &r);
	for (int i = 0; !ret && i < PQntuples(r); i++) {
		e.id = r_int(r, i, 0);
		e.time = r_int(r, i, 1);
		e.event = r_text(r, i, 2);
		e.actor = r_text(r, i, 3);
		e.detail = r_text(r, i, 4);
		ret = cb(arg, &e);
	}
	PQclear(r);
	return ret;
}

/* Claimed by one statement (STMT_OUTBOX_CLAIM); the callbacks run with no connection held. */
static int pg_outbox_claim(struct store_backend *b, const char *target, int64_t now,
			   int64_t lease, unsigned limit, store_outbox_cb cb, void *arg)
{
	struct params p = { 0 };
	struct store_outbox_row row;
	PGresult *r;
	int ret;

	if (limit == 0)
		return 0;
	p_text(&p, target);
	p_int(&p, now);
	p_int(&p, limit);
	p_int(&p, now + lease);
	ret = pg_query(pg(b), STMT_OUTBOX_CLAIM, &p, "webhook outbox claim", &r);
	for (int i = 0; !ret && i < PQntuples(r); i++) {
		row = (struct store_outbox_row){
			.id = r_int(r, i, 0), .event_id = r_text(r, i, 1), .target = r_text(r, i, 2),
			.type = r_text(r, i, 3), .agent = r_text(r, i, 4),
			.created_at = r_int(r, i, 5), .body = r_text(r, i, 6),
			.attempts = (uint32_t)r_int(r, i, 7),
		};
		ret = cb(arg, &row);
	}
	PQclear(r);
	return ret;
}

/* One statement on outbox row `row` that must change it: -ENOENT if it is gone. */
static int outbox_update(struct store_backend *b, enum stmt id, const struct params *p)
{
	struct write_arg w = { id, p, stmt_sql[id], 0 };
	int ret = with_conn(pg(b), call_write, &w);

	return ret ? ret : w.changed == 1 ? 0 : -ENOENT;
}

static int pg_outbox_delivered(struct store_backend *b, int64_t row)
{
	struct params p = { 0 };

	p_int(&p, row);
	return outbox_update(b, STMT_OUTBOX_DELETE, &p);
}

static int pg_outbox_retry(struct store_backend *b, int64_t row, int64_t next_at,
			   const char *error)
{
	struct params p = { 0 };

	p_int(&p, row);
	p_int(&p, next_at);
	p_text(&p, error);
	return outbox_update(b, STMT_OUTBOX_RETRY, &p);
}

static int pg_outbox_pending(struct store_backend *b, const char *target, uint64_t *count)
{
	struct params p = { 0 };
	PGresult *r;
	int ret;

	*count = 0;
	p_text(&p, target);
	ret = pg_query(pg(b), STMT_OUTBOX_PENDING, &p, "webhook outbox count", &r);
	if (!ret)
		*count = (uint64_t)r_int(r, 0, 0);
	PQclear(r);
	return ret;
}

/* Backups (store_pg_backup.c) ---------------------------------------------------------- */

struct backup_arg {
	int *fd;
	uint64_t *size;
};

static int call_backup(struct pg_store *st, struct pg_conn *pc, void *arg)
{
	struct backup_arg *a = arg;

	(void)st;
	return store_pg_backup(pc->c, a->fd, a->size);
}

static int pg_backup(struct store_backend *b, int *fd, uint64_t *size)
{
	struct backup_arg a = { fd, size };

	return with_conn(pg(b), call_backup, &a);
}

/* A backup of this backend is a SQLite store (store_pg_backup.c): checked as one. */
static int pg_backup_check(const char *location, int64_t *version)
{
	return store_sqlite_ops.backup_check(location, version);
}

const struct store_ops store_pg_ops = {
	.scheme = "postgresql",
	.open = pg_open,
	.close = pg_close,
	.agent_enroll = pg_agent_enroll,
	.agent_get = pg_agent_get,
	.agent_activate = pg_agent_activate,
	.agent_set_policy = pg_agent_set_policy,
	.agents_list = pg_agents_list,
	.boot_get = pg_boot_get,
	.boot_log_get = pg_boot_log_get,
	.round_context = pg_round_context,
	.commit_rounds = pg_commit_rounds,
	.verdicts_list = pg_verdicts_list,
	.violations_list = pg_violations_list,
	.violation_get = pg_violation_get,
	.violations_open_count = pg_violations_open_count,
	.violation_decide = pg_violation_decide,
	.policy_put = pg_policy_put,
	.policy_version = pg_policy_version,
	.policy_get = pg_policy_get,
	.policy_get_version = pg_policy_get_version,
	.policy_versions = pg_policy_versions,
	.policy_agents = pg_policy_agents,
	.counts = pg_counts,
	.agent_retire = pg_agent_retire,
	.agent_reset = pg_agent_reset,
	.agent_history = pg_agent_history,
	.agent_mark_stale = pg_agent_mark_stale,
	.outbox_claim = pg_outbox_claim,
	.outbox_delivered = pg_outbox_delivered,
	.outbox_retry = pg_outbox_retry,
	.outbox_pending = pg_outbox_pending,
	.backup = pg_backup,
	.backup_check = pg_backup_check,
};
