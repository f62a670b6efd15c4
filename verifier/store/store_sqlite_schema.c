/*
 * The SQLite store's schema: numbered forward migrations, applied in order when the store
 * opens. PRAGMA user_version holds the number of the last one applied (0: a new file, or a
 * database from before versions). Each runs in its own transaction together with the version
 * it reaches, so a failure leaves the database at the version before it.
 *
 * Rules for a new migration: append it (never edit or reorder one that shipped), make it
 * bring a database of the previous version to the new one, and raise
 * STORE_SQLITE_SCHEMA_VERSION. tests/unit/test_store_migrate.c upgrades a database of every
 * older version kept in tests/data/.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/encoding.h"
#include "verifier/store/boot_state.h"
#include "common/log.h"
#include "verifier/store/store_backend.h"
#include "verifier/store/store_sqlite.h"

int store_sqlite_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK) {
		log_error("store: \"%.60s\" failed: sqlite error %d \"%s\"", sql, rc,
			  msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

static int db_fail(sqlite3 *db, int rc, const char *what)
{
	log_error("store: %s failed: sqlite error %d \"%s\"", what, rc, sqlite3_errmsg(db));
	return -EIO;
}

/*
 * 1: the tables as they were before schema versions. IF NOT EXISTS: a database from then is
 * at this version already (it has user_version 0 too).
 */
static int m1_tables(sqlite3 *db)
{
	return store_sqlite_exec(db,
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
		" time INTEGER NOT NULL, PRIMARY KEY(name, version));");
}

/*
 * Before version 2 a boot state was stored as layout 1: u32 1, u32 240 (host order), then a
 * copy of struct boot_state's bytes as an LP64 little-endian build (x86-64, arm64) lays it
 * out: started at 0, reset_count 4, restart_count 8, clock 16, boot_number 24, next_entry 32,
 * replay at 40 (banks 40, reserved 44, entries 48, violations 56, other_pcr 64, sha1 72,
 * sha256 92, sha384 124, sha512 172), tail padding to 240. Padding is not read. Builds with
 * another layout wrote another size or byte order; their rows are refused, not guessed at.
 */
#define LAYOUT1 1
#define LAYOUT1_STRUCT 240u
#define LAYOUT1_BLOB (8u + LAYOUT1_STRUCT)

static uint64_t le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = bytes; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static int layout1_decode(const uint8_t *blob, size_t len, struct boot_state *out)
{
	struct replay_state *rs = &out->replay;
	const uint8_t *p;

	memset(out, 0, sizeof(*out));
	if (!blob || len != LAYOUT1_BLOB || le(blob, 4) != LAYOUT1 ||
	    le(blob + 4, 4) != LAYOUT1_STRUCT || blob[8] > 1)
		return -EINVAL;
	p = blob + 8;
	out->started = p[0] == 1;
	out->reset_count = (uint32_t)le(p + 4, 4);
	out->restart_count = (uint32_t)le(p + 8, 4);
	out->clock = le(p + 16, 8);
	out->boot_number = le(p + 24, 8);
	out->next_entry = le(p + 32, 8);
	rs->banks = (uint32_t)le(p + 40, 4);
	rs->entries = le(p + 48, 8);
	rs->violations = le(p + 56, 8);
	rs->other_pcr = le(p + 64, 8);
	memcpy(rs->sha1, p + 72, sizeof(rs->sha1));
	memcpy(rs->sha256, p + 92, sizeof(rs->sha256));
	memcpy(rs->sha384, p + 124, sizeof(rs->sha384));
	memcpy(rs->sha512, p + 172, sizeof(rs->sha512));
	if (rs->banks & ~(uint32_t)REPLAY_ALL_BANKS)
		return -EINVAL;
	return 0;
}

/* Converts one row of the old table; the caller steps `sel` and owns both statements. */
static int m2_row(sqlite3 *db, sqlite3_stmt *sel, sqlite3_stmt *ins)
{
	const char *agent = (const char *)sqlite3_column_text(sel, 0);
	int layout = sqlite3_column_int(sel, 1);
	const uint8_t *p = sqlite3_column_blob(sel, 2);
	int n = sqlite3_column_bytes(sel, 2);
	uint8_t blob[BOOT_STATE_ENCODED_LEN];
	struct boot_state bs;
	int rc;

	if (!agent)
		agent = "";
	if (layout != LAYOUT1 || n < 0 || layout1_decode(p, (size_t)n, &bs)) {
		log_error("store: the boot state of agent \"%s\" (layout %d, %d bytes) is not"
			  " what an LP64 little-endian verifier wrote (layout 1, %u bytes); to"
			  " start the agent's record over, delete its row (DELETE FROM boot_state"
			  " WHERE agent = '%s')", agent, layout, n, LAYOUT1_BLOB, agent);
		return -EINVAL;
	}
	/* The summary columns were written from the same struct: they must agree. */
	if ((int64_t)bs.reset_count != sqlite3_column_int64(sel, 3) ||
	    (int64_t)bs.restart_count != sqlite3_column_int64(sel, 4) ||
	    (int64_t)bs.boot_number != sqlite3_column_int64(sel, 5) ||
	    (int64_t)bs.next_entry != sqlite3_column_int64(sel, 6)) {
		log_error("store: the boot state of agent \"%s\" disagrees with its own columns"
			  " (boot %lld, next entry %lld; the blob says %llu, %llu)",
			  agent, (long long)sqlite3_column_int64(sel, 5),
			  (long long)sqlite3_column_int64(sel, 6),
			  (unsigned long long)bs.boot_number, (unsigned long long)bs.next_entry);
		return -EINVAL;
	}
	boot_state_encode(&bs, blob);
	sqlite3_bind_text(ins, 1, agent, -1, SQLITE_STATIC);
	sqlite3_bind_blob(ins, 2, blob, (int)sizeof(blob), SQLITE_STATIC);
	for (int col = 3; col <= 7; col++)
		sqlite3_bind_int64(ins, col, sqlite3_column_int64(sel, col));
	rc = sqlite3_step(ins);
	sqlite3_reset(ins);
	sqlite3_clear_bindings(ins);
	return rc == SQLITE_DONE ? 0 : db_fail(db, rc, "boot state conversion");
}

/* 2: boot states in boot_state.h's encoding, which says its version itself (no layout). */
static int m2_boot_state_encoded(sqlite3 *db)
{
	sqlite3_stmt *sel = NULL, *ins = NULL;
	int ret, rc;

	ret = store_sqlite_exec(db,
		"ALTER TABLE boot_state RENAME TO boot_state_layout1;"
		"CREATE TABLE boot_state("
		" agent TEXT PRIMARY KEY, state BLOB NOT NULL,"
		" reset_count INTEGER NOT NULL, restart_count INTEGER NOT NULL,"
		" boot_number INTEGER NOT NULL, next_entry INTEGER NOT NULL, updated_at INTEGER NOT NULL);");
	if (ret)
		return ret;
	rc = sqlite3_prepare_v2(db,
				"SELECT agent, layout, state, reset_count, restart_count, boot_number,"
				" next_entry, updated_at FROM boot_state_layout1 ORDER BY agent",
				-1, &sel, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db,
					"INSERT INTO boot_state(agent, state, reset_count,"
					" restart_count, boot_number, next_entry, updated_at)"
					" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
					-1, &ins, NULL);
	if (rc != SQLITE_OK) {
		ret = db_fail(db, rc, "prepare");
		goto out;
	}
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW)
		if ((ret = m2_row(db, sel, ins)))
			goto out;
	if (rc != SQLITE_DONE) {
		ret = db_fail(db, rc, "boot state read");
		goto out;
	}
	sqlite3_finalize(sel);
	sel = NULL;
	ret = store_sqlite_exec(db, "DROP TABLE boot_state_layout1");
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return ret;
}

/*
 * Abuse resistance: agents.enrolled_at starts a pending enrollment's time to live
 * (created_at stays the first enrollment); an index finds the agents of one EK (one TPM, one
 * agent) and the pending ones by age; boot_state.version is the compare-and-swap of
 * store_round_commit() (rows that exist are version 1). Active agents that already share an
 * EK are kept, and named in the log for an operator.
 */
static int m3_enrollment_limits_round_cas(sqlite3 *db)
{
	sqlite3_stmt *s = NULL;
	int ret, rc;

	ret = store_sqlite_exec(db,
		"ALTER TABLE agents ADD COLUMN enrolled_at INTEGER NOT NULL DEFAULT 0;"
		"UPDATE agents SET enrolled_at = created_at;"
		"CREATE INDEX agents_ek ON agents(ek_pub, state);"
		"CREATE INDEX agents_pending ON agents(state, enrolled_at);"
		"ALTER TABLE boot_state ADD COLUMN version INTEGER NOT NULL DEFAULT 1;");
	if (ret)
		return ret;
	rc = sqlite3_prepare_v2(db,
				"SELECT group_concat(id, ', ') FROM (SELECT id, ek_pub FROM agents"
				" WHERE state = 'active' ORDER BY id) GROUP BY ek_pub"
				" HAVING COUNT(*) > 1",
				-1, &s, NULL);
	if (rc != SQLITE_OK)
		return db_fail(db, rc, "prepare");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		log_warn("store: agents %s are active with one EK, so one TPM stands for all of"
			 " them; new ones are refused, these are kept: keep one, delete the others",
			 (const char *)sqlite3_column_text(s, 0));
	ret = rc == SQLITE_DONE ? 0 : db_fail(db, rc, "agents sharing an EK");
	sqlite3_finalize(s);
	return ret;
}

/*
 * Before version 4 a violation's path was display text: each byte outside a valid UTF-8
 * sequence (NUL, 0x80-0xff) written as the four characters \xNN, a backslash as itself. This
 * turns such text back into the bytes. A real path that held the text "\x80" (backslash, x,
 * two hex digits of such a byte) was stored the same way and is read as the byte: the old
 * rendering cannot tell them apart, and real paths spelt like that are not known to exist.
 */
static size_t m4_unescape(const unsigned char *in, size_t n, unsigned char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t b;

		if (in[i] == '\\' && i + 3 < n && in[i + 1] == 'x' &&
		    hex_decode((const char *)in + i + 2, 2, &b, 1) == 1 && (b == 0 || b >= 0x80)) {
			out[o++] = b;
			i += 3;
		} else {
			out[o++] = in[i];
		}
	}
	return o;
}

/* Rewrites the paths m4_unescape() changes; the caller holds the transaction. */
static int m4_raw_paths(sqlite3 *db)
{
	sqlite3_stmt *sel = NULL, *upd = NULL;
	unsigned char *buf = NULL;
	int ret = 0, rc;

	rc = sqlite3_prepare_v2(db, "SELECT id, path FROM violations"
				" WHERE instr(path, CAST('\\x' AS BLOB)) > 0", -1, &sel, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "UPDATE violations SET path = ?2 WHERE id = ?1", -1,
					&upd, NULL);
	if (rc != SQLITE_OK) {
		ret = db_fail(db, rc, "prepare");
		goto out;
	}
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		const unsigned char *p = sqlite3_column_blob(sel, 1);
		size_t n = (size_t)sqlite3_column_bytes(sel, 1), m;

		free(buf);
		buf = malloc(n + 1);
		if (!buf) {
			ret = -ENOMEM;
			goto out;
		}
		m = m4_unescape(p, n, buf);
		sqlite3_bind_int64(upd, 1, sqlite3_column_int64(sel, 0));
		sqlite3_bind_blob(upd, 2, buf, (int)m, SQLITE_STATIC);
		rc = sqlite3_step(upd);
		sqlite3_reset(upd);
		if (rc != SQLITE_DONE) {
			ret = db_fail(db, rc, "path conversion");
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(db, rc, "violations read");
out:
	free(buf);
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return ret;
}

/*
 * 4 (trust that holds under review): violations keep raw path bytes (a BLOB), one
 * open row per (agent, reason, path, digest) instead of one row per file whatever its state,
 * so a file that recurs after an operator's decision opens a new row; that row names the
 * decided one (`recurs`), and a decision says when and what it did.
 */
static int m4_violations_reviewed(sqlite3 *db)
{
	int ret = store_sqlite_exec(db,
		"CREATE TABLE violations_v3("
		" id INTEGER PRIMARY KEY AUTOINCREMENT, agent TEXT NOT NULL, boot_number INTEGER NOT NULL,"
		" entry INTEGER NOT NULL, path BLOB NOT NULL, digest TEXT NOT NULL, template TEXT NOT NULL,"
		" reason TEXT NOT NULL, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
		" count INTEGER NOT NULL DEFAULT 1,"
		" state TEXT NOT NULL DEFAULT 'open' CHECK(state IN ('open','approved','dismissed')),"
		" recurs INTEGER, decided_at INTEGER NOT NULL DEFAULT 0,"
		" decision TEXT NOT NULL DEFAULT '');"
		"INSERT INTO violations_v3(id, agent, boot_number, entry, path, digest, template, reason,"
		" first_seen, last_seen, count, state, decision)"
		" SELECT id, agent, boot_number, entry, CAST(path AS BLOB), digest, template, reason,"
		" first_seen, last_seen, count, state,"
		" CASE state WHEN 'open' THEN '' ELSE 'decided before schema version 4' END"
		" FROM violations ORDER BY id;"
		"DROP TABLE violations;"
		"ALTER TABLE violations_v3 RENAME TO violations;"
		"CREATE INDEX violations_state ON violations(state, last_seen);"
		"CREATE INDEX violations_key ON violations(agent, reason, path, digest, id);"
		"CREATE UNIQUE INDEX violations_open ON violations(agent, reason, path, digest)"
		" WHERE state = 'open';");

	return ret ? ret : m4_raw_paths(db);
}

/*
 * 5 (measured boot): the firmware event log each agent sent last, with what the
 * last judgement by a boot policy covered and the boot summary operators see.
 */
static int m5_boot_logs(sqlite3 *db)
{
	return store_sqlite_exec(db,
		"CREATE TABLE boot_logs("
		" agent TEXT PRIMARY KEY, log BLOB NOT NULL, sha256 BLOB NOT NULL, cmdline TEXT,"
		" judged_boot INTEGER NOT NULL DEFAULT 0, judged_key BLOB, summary TEXT,"
		" received_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);");
}

/*
 * 6 (operators): an agent can be retired ('retired', when) and reset (its next
 * enrollment may bring a new EK and AK); it keeps the interval its attestd reports and the
 * last-seen time its agent.stale event was raised for. Its lifecycle is a history of its own,
 * begun here from what the old rows say. Webhook events wait in an outbox, one row per event
 * and URL, until delivered. The CHECK on agents.state changes, so the table is rebuilt.
 */
static int m6_operators(sqlite3 *db)
{
	return store_sqlite_exec(db,
		"CREATE TABLE agents_v6("
		" id TEXT PRIMARY KEY,"
		" ek_pub BLOB NOT NULL, ek_cert BLOB NOT NULL, ak_pub BLOB NOT NULL, ak_name BLOB NOT NULL,"
		" state TEXT NOT NULL CHECK(state IN ('pending','active','retired')),"
		" cred_digest BLOB NOT NULL,"
		" policy TEXT NOT NULL DEFAULT '',"
		" created_at INTEGER NOT NULL, activated_at INTEGER NOT NULL DEFAULT 0,"
		" enrolled_at INTEGER NOT NULL DEFAULT 0,"
		" retired_at INTEGER NOT NULL DEFAULT 0, reset_at INTEGER NOT NULL DEFAULT 0,"
		" round_interval INTEGER NOT NULL DEFAULT 0,"
		" stale_event_for INTEGER NOT NULL DEFAULT 0);"
		"INSERT INTO agents_v6(id, ek_pub, ek_cert, ak_pub, ak_name, state, cred_digest, policy,"
		" created_at, activated_at, enrolled_at)"
		" SELECT id, ek_pub, ek_cert, ak_pub, ak_name, state, cred_digest, policy, created_at,"
		" activated_at, enrolled_at FROM agents ORDER BY id;"
		"DROP TABLE agents;"
		"ALTER TABLE agents_v6 RENAME TO agents;"
		"CREATE INDEX agents_ek ON agents(ek_pub, state);"
		"CREATE INDEX agents_pending ON agents(state, enrolled_at);"
		"CREATE TABLE agent_history("
		" id INTEGER PRIMARY KEY AUTOINCREMENT, agent TEXT NOT NULL, time INTEGER NOT NULL,"
		" event TEXT NOT NULL, actor TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '');"
		"CREATE INDEX agent_history_agent ON agent_history(agent, id);"
		"INSERT INTO agent_history(agent, time, event, actor, detail)"
		" SELECT id, created_at, 'enrolled', 'agent', 'as the store said at its upgrade to"
		" schema version 6' FROM agents ORDER BY created_at, id;"
		"INSERT INTO agent_history(agent, time, event, actor, detail)"
		" SELECT id, activated_at, 'activated', 'agent', 'as the store said at its upgrade to"
		" schema version 6' FROM agents WHERE state = 'active' ORDER BY activated_at, id;"
		"CREATE TABLE webhook_outbox("
		" id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, target TEXT NOT NULL,"
		" type TEXT NOT NULL, agent TEXT NOT NULL, created_at INTEGER NOT NULL, body TEXT NOT NULL,"
		" attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at INTEGER NOT NULL,"
		" last_error TEXT NOT NULL DEFAULT '');"
		"CREATE INDEX webhook_outbox_due ON webhook_outbox(target, next_attempt_at, id);");
}

/*
 * 7 (several verifiers on one database): the challenges that rounds answered, so
 * that a challenge one verifier issued is accepted once in the whole fleet (verifier/
 * cluster.h); a row is kept until a while after its challenge expired.
 */
static int m7_spent_nonces(sqlite3 *db)
{
	return store_sqlite_exec(db,
		"CREATE TABLE spent_nonces("
		" nonce BLOB PRIMARY KEY, agent TEXT NOT NULL, expires_at INTEGER NOT NULL)"
		" WITHOUT ROWID;"
		"CREATE INDEX spent_nonces_expiry ON spent_nonces(expires_at);");
}

/*
 * 8: every verdict names the policy and the versions of that policy and of the agent's
 * amendment that judged the boot as its state folds it ('' and 0 for verdicts from before).
 */
static int m8_verdict_versions(sqlite3 *db)
{
	return store_sqlite_exec(db,
		"ALTER TABLE verdicts ADD COLUMN policy TEXT NOT NULL DEFAULT '';"
		"ALTER TABLE verdicts ADD COLUMN policy_version INTEGER NOT NULL DEFAULT 0;"
		"ALTER TABLE verdicts ADD COLUMN amendment_version INTEGER NOT NULL DEFAULT 0;");
}

/*
 * 9: retention. A verdict says whether it changed its agent's trust or reasons from the verdict
 * before it (those are never pruned; the first of an agent did); rows from before are judged so
 * here in id order. Per agent and hour, how many rounds were trusted and untrusted, begun from
 * the verdicts stored.
 */
static int m9_retention(sqlite3 *db)
{
	return store_sqlite_exec(db,
		"ALTER TABLE verdicts ADD COLUMN changed INTEGER NOT NULL DEFAULT 1;"
		"UPDATE verdicts SET changed = 0 WHERE id IN (SELECT id FROM (SELECT id, trusted,"
		" reasons, LAG(trusted) OVER w AS prev_trusted, LAG(reasons) OVER w AS prev_reasons"
		" FROM verdicts WINDOW w AS (PARTITION BY agent ORDER BY id)) x"
		" WHERE prev_trusted = trusted AND prev_reasons = reasons);"
		"CREATE TABLE verdict_hours("
		" agent TEXT NOT NULL, hour INTEGER NOT NULL, rounds INTEGER NOT NULL,"
		" trusted INTEGER NOT NULL, untrusted INTEGER NOT NULL, PRIMARY KEY(agent, hour));"
		"CREATE INDEX verdict_hours_hour ON verdict_hours(hour);"
		"INSERT INTO verdict_hours(agent, hour, rounds, trusted, untrusted)"
		" SELECT agent, time - time % 3600, COUNT(*),"
		" SUM(CASE WHEN trusted <> 0 THEN 1 ELSE 0 END), SUM(CASE WHEN trusted = 0 THEN 1 ELSE 0 END)"
		" FROM verdicts GROUP BY agent, time - time % 3600;");
}

/*
 * 10: deleted policies, each with the newest version it had: a policy written again under the
 * name goes on from there, so that a (name, version) never names two texts.
 */
static int m10_policy_deletions(sqlite3 *db)
{
	return store_sqlite_exec(db,
		"CREATE TABLE policy_deletions("
		" name TEXT PRIMARY KEY, version INTEGER NOT NULL, actor TEXT NOT NULL,"
		" time INTEGER NOT NULL);");
}

/*
 * 11: the audit trail (verifier/store/audit.h): its records in a hash chain, the cursor that
 * serializes appends (one row, made by the first), the heads signed by the verifier's key.
 */
static int m11_audit(sqlite3 *db)
{
	return store_sqlite_exec(db,
		"CREATE TABLE audit_log("
		" seq INTEGER PRIMARY KEY, time INTEGER NOT NULL, kind TEXT NOT NULL,"
		" actor TEXT NOT NULL, agent TEXT NOT NULL, detail TEXT NOT NULL,"
		" prev_hash BLOB NOT NULL, hash BLOB NOT NULL);"
		"CREATE TABLE audit_head("
		" id INTEGER PRIMARY KEY CHECK(id = 1), seq INTEGER NOT NULL, hash BLOB NOT NULL);"
		"CREATE TABLE audit_signed("
		" seq INTEGER PRIMARY KEY, hash BLOB NOT NULL, time INTEGER NOT NULL,"
		" signature BLOB NOT NULL, public_key BLOB NOT NULL);");
}

/*
 * 12: what a signed policy or amendment version keeps of its DSSE envelope (store.h,
 * store_policy_sig): the keyid that verified it, the envelope without its payload.
 */
static int m12_policy_signatures(sqlite3 *db)
{
	return store_sqlite_exec(db,
		"ALTER TABLE policies ADD COLUMN signer TEXT NOT NULL DEFAULT '';"
		"ALTER TABLE policies ADD COLUMN signature TEXT NOT NULL DEFAULT '';");
}

/*
 * 13: the evidence of kept verdicts (store.h, "Evidence"): a record per verdict, beside it the
 * AK it was checked with; one copy of each firmware event log and of each policy or amendment
 * version that records name, however many do.
 */
static int m13_evidence(sqlite3 *db)
{
	return store_sqlite_exec(db,
		"CREATE TABLE verdict_evidence("
		" verdict_id INTEGER PRIMARY KEY, agent TEXT NOT NULL, record TEXT NOT NULL,"
		" ak_pub BLOB NOT NULL, boot_log BLOB);"
		"CREATE INDEX verdict_evidence_agent ON verdict_evidence(agent, verdict_id);"
		"CREATE INDEX verdict_evidence_boot_log ON verdict_evidence(boot_log);"
		"CREATE TABLE evidence_boot_logs("
		" sha256 BLOB PRIMARY KEY, log BLOB NOT NULL, used_at INTEGER NOT NULL);"
		"CREATE TABLE evidence_policies("
		" name TEXT NOT NULL, version INTEGER NOT NULL, json TEXT NOT NULL,"
		" PRIMARY KEY(name, version));");
}

/*
 * 14: admission (store.h, "Registrations"): agents an operator registered before they enroll,
 * each with the SHA-256 that names its EK, the policy and labels it starts with; the labels of
 * enrolled agents, one row per key.
 */
static int m14_registrations(sqlite3 *db)
{
	return store_sqlite_exec(db,
		"CREATE TABLE registrations("
		" agent TEXT PRIMARY KEY, ek_kind TEXT NOT NULL, ek_sha256 BLOB NOT NULL,"
		" ek_cert BLOB, policy TEXT NOT NULL, labels TEXT NOT NULL, actor TEXT NOT NULL,"
		" created_at INTEGER NOT NULL);"
		"CREATE INDEX registrations_policy ON registrations(policy);"
		"CREATE TABLE agent_labels("
		" agent TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
		" PRIMARY KEY(agent, key));"
		"CREATE INDEX agent_labels_key ON agent_labels(key, value);");
}

static const struct migration {
	const char *what;
	int (*apply)(sqlite3 *db);
} migrations[] = {
	{ "the first tables", m1_tables },
	{ "boot state in a versioned encoding", m2_boot_state_encoded },
	{ "pending enrollments by age and EK, boot state versions", m3_enrollment_limits_round_cas },
	{ "violations with raw paths, reopened when they recur", m4_violations_reviewed },
	{ "firmware event logs", m5_boot_logs },
	{ "retired and reset agents, their history and intervals, a webhook outbox",
	  m6_operators },
	{ "spent challenges of several verifiers", m7_spent_nonces },
	{ "the policy and amendment versions that judged each verdict", m8_verdict_versions },
	{ "verdicts that changed trust marked, hourly counters of rounds", m9_retention },
	{ "deleted policies and their last versions", m10_policy_deletions },
	{ "the audit trail", m11_audit },
	{ "who signed each policy version", m12_policy_signatures },
	{ "the evidence of kept verdicts", m13_evidence },
	{ "registrations of agents before they enroll, labels", m14_registrations },
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == STORE_SQLITE_SCHEMA_VERSION,
	       "one migration per schema version");

/* The integer the one-row, one-column query `sql` answers. */
static int query_int(sqlite3 *db, const char *sql, int *v)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);

	if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		*v = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
		return 0;
	}
	sqlite3_finalize(s);
	return db_fail(db, rc, sql);
}

int store_sqlite_migrate(sqlite3 *db, const char *path)
{
	char sql[64], where[PATH_MAX + 2];
	int from = -1, v = 0, tables = 0, ret;

	for (;;) {
		/* IMMEDIATE: two verifiers starting on one file do not both migrate it. */
		if ((ret = store_sqlite_exec(db, "BEGIN IMMEDIATE")))
			return ret;
		if ((ret = query_int(db, "PRAGMA user_version", &v)))
			goto fail;
		if (from < 0) {
			from = v;
			if ((ret = query_int(db, "SELECT count(*) FROM sqlite_master", &tables)))
				goto fail;
		}
		if (v == STORE_SQLITE_SCHEMA_VERSION)
			break;
		if (v < 0 || v > STORE_SQLITE_SCHEMA_VERSION) {
			log_error("store: \"%s\" has schema version %d; this verifier knows 0 to %d:"
				  " run the verifier that wrote it (or a newer one)",
				  path, v, STORE_SQLITE_SCHEMA_VERSION);
			ret = -EPROTO;
			goto fail;
		}
		if ((ret = migrations[v].apply(db))) {
			log_error("store: upgrading \"%s\" to schema version %d (%s) failed; it stays"
				  " at version %d", path, v + 1, migrations[v].what, v);
			goto fail;
		}
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
		if ((ret = store_sqlite_exec(db, sql)) || (ret = store_sqlite_exec(db, "COMMIT")))
			goto fail;
	}
	if ((ret = store_sqlite_exec(db, "COMMIT")))
		goto fail;
	snprintf(where, sizeof(where), "\"%s\"", path);
	store_schema_opened(where, !tables, from, STORE_SQLITE_SCHEMA_VERSION);
	return 0;
fail:
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return ret;
}
