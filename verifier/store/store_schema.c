/*
 * The store's migrations (store_schema.h), one list for every driver. Each step's comment says
 * what it brings; where a dialect has its own text, why.
 */
#include <stddef.h>

#include "verifier/store/store_schema.h"

/*
 * Step 6's history, begun from what the old rows say, and the webhook outbox: the same in every
 * dialect (the agents table is not).
 */
#define M6_HISTORY_OUTBOX \
	"CREATE TABLE agent_history(" \
	" id INTEGER PRIMARY KEY AUTOINCREMENT, agent TEXT NOT NULL, time INTEGER NOT NULL," \
	" event TEXT NOT NULL, actor TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '');" \
	"CREATE INDEX agent_history_agent ON agent_history(agent, id);" \
	"INSERT INTO agent_history(agent, time, event, actor, detail)" \
	" SELECT id, created_at, 'enrolled', 'agent', 'as the store said at its upgrade to" \
	" schema version 6' FROM agents ORDER BY created_at, id;" \
	"INSERT INTO agent_history(agent, time, event, actor, detail)" \
	" SELECT id, activated_at, 'activated', 'agent', 'as the store said at its upgrade to" \
	" schema version 6' FROM agents WHERE state = 'active' ORDER BY activated_at, id;" \
	"CREATE TABLE webhook_outbox(" \
	" id INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL, target TEXT NOT NULL," \
	" type TEXT NOT NULL, agent TEXT NOT NULL, created_at INTEGER NOT NULL, body TEXT NOT NULL," \
	" attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at INTEGER NOT NULL," \
	" last_error TEXT NOT NULL DEFAULT '');" \
	"CREATE INDEX webhook_outbox_due ON webhook_outbox(target, next_attempt_at, id);"

const struct store_migration store_migrations[STORE_SCHEMA_VERSION] = {
	/*
	 * 1: the tables as they were before schema versions. IF NOT EXISTS: a SQLite database
	 * from then is at this version already (it has user_version 0 too). Challenges live in
	 * memory now (nonces.h); older stores had them here.
	 */
	{ .what = "the first tables",
	  .sql =
		"CREATE TABLE IF NOT EXISTS agents("
		" id TEXT PRIMARY KEY,"
		" ek_pub BLOB NOT NULL, ek_cert BLOB NOT NULL, ak_pub BLOB NOT NULL, ak_name BLOB NOT NULL,"
		" state TEXT NOT NULL CHECK(state IN ('pending','active')),"
		" cred_digest BLOB NOT NULL,"
		" policy TEXT NOT NULL DEFAULT '',"
		" created_at INTEGER NOT NULL, activated_at INTEGER NOT NULL DEFAULT 0);"
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
		" time INTEGER NOT NULL, PRIMARY KEY(name, version));" },
	/*
	 * 2: boot states in boot_state.h's encoding, which says its version itself (no layout).
	 * SQLite converts the rows of older verifiers into a new table; no PostgreSQL store has
	 * any, and drops the column.
	 */
	{ .what = "boot state in a versioned encoding",
	  .own[STORE_DIALECT_SQLITE] =
		"ALTER TABLE boot_state RENAME TO boot_state_layout1;"
		"CREATE TABLE boot_state("
		" agent TEXT PRIMARY KEY, state BLOB NOT NULL,"
		" reset_count INTEGER NOT NULL, restart_count INTEGER NOT NULL,"
		" boot_number INTEGER NOT NULL, next_entry INTEGER NOT NULL, updated_at INTEGER NOT NULL);",
	  .own[STORE_DIALECT_PG] = "ALTER TABLE boot_state DROP COLUMN layout;",
	  .old_rows = STORE_OLD_BOOT_STATE_LAYOUT1 },
	/*
	 * 3: abuse resistance: agents.enrolled_at starts a pending enrollment's time to live
	 * (created_at stays the first enrollment); an index finds the agents of one EK (one TPM,
	 * one agent) and the pending ones by age; boot_state.version is the compare-and-swap of
	 * store_round_commit() (rows that exist are version 1). Active agents that already share
	 * an EK are kept, and named in the log for an operator.
	 */
	{ .what = "pending enrollments by age and EK, boot state versions",
	  .sql =
		"ALTER TABLE agents ADD COLUMN enrolled_at INTEGER NOT NULL DEFAULT 0;"
		"UPDATE agents SET enrolled_at = created_at;"
		"CREATE INDEX agents_ek ON agents(ek_pub, state);"
		"CREATE INDEX agents_pending ON agents(state, enrolled_at);"
		"ALTER TABLE boot_state ADD COLUMN version INTEGER NOT NULL DEFAULT 1;",
	  .old_rows = STORE_OLD_SHARED_EKS },
	/*
	 * 4 (trust that holds under review): violations keep raw path bytes (a BLOB), one open
	 * row per (agent, reason, path, digest) instead of one row per file whatever its state, so
	 * a file that recurs after an operator's decision opens a new row; that row names the
	 * decided one (`recurs`), and a decision says when and what it did. PostgreSQL converts
	 * the text with convert_to(), moves the identity past the copied ids, and indexes a path
	 * by its sha256 (a B-tree entry is limited to about 2.7 kB, a path may be 4 kB); SQLite
	 * then turns the escapes older verifiers wrote back into bytes.
	 */
	{ .what = "violations with raw paths, reopened when they recur",
	  .own[STORE_DIALECT_SQLITE] =
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
		" WHERE state = 'open';",
	  .own[STORE_DIALECT_PG] =
		"CREATE TABLE violations_v3("
		" id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, agent TEXT NOT NULL,"
		" boot_number BIGINT NOT NULL, entry BIGINT NOT NULL, path BYTEA NOT NULL,"
		" digest TEXT NOT NULL, template TEXT NOT NULL, reason TEXT NOT NULL,"
		" first_seen BIGINT NOT NULL, last_seen BIGINT NOT NULL, count BIGINT NOT NULL DEFAULT 1,"
		" state TEXT NOT NULL DEFAULT 'open' CHECK(state IN ('open','approved','dismissed')),"
		" recurs BIGINT, decided_at BIGINT NOT NULL DEFAULT 0, decision TEXT NOT NULL DEFAULT '');"
		"INSERT INTO violations_v3(id, agent, boot_number, entry, path, digest, template, reason,"
		" first_seen, last_seen, count, state, decision)"
		" SELECT id, agent, boot_number, entry, convert_to(path, 'UTF8'), digest, template, reason,"
		" first_seen, last_seen, count, state,"
		" CASE state WHEN 'open' THEN '' ELSE 'decided before schema version 4' END"
		" FROM violations ORDER BY id;"
		"SELECT setval(pg_get_serial_sequence('violations_v3', 'id'),"
		" COALESCE((SELECT max(id) FROM violations_v3), 0) + 1, false);"
		"DROP TABLE violations;"
		"ALTER TABLE violations_v3 RENAME TO violations;"
		"CREATE INDEX violations_state ON violations(state, last_seen);"
		"CREATE INDEX violations_key ON violations(agent, reason, sha256(path), digest, id);"
		"CREATE UNIQUE INDEX violations_open ON violations(agent, reason, sha256(path), digest)"
		" WHERE state = 'open';",
	  .old_rows = STORE_OLD_ESCAPED_PATHS },
	/*
	 * 5 (measured boot): the firmware event log each agent sent last, with what the last
	 * judgement by a boot policy covered and the boot summary operators see.
	 */
	{ .what = "firmware event logs",
	  .sql =
		"CREATE TABLE boot_logs("
		" agent TEXT PRIMARY KEY, log BLOB NOT NULL, sha256 BLOB NOT NULL, cmdline TEXT,"
		" judged_boot INTEGER NOT NULL DEFAULT 0, judged_key BLOB, summary TEXT,"
		" received_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);" },
	/*
	 * 6 (operators): an agent can be retired ('retired', when) and reset (its next enrollment
	 * may bring a new EK and AK); it keeps the interval its attestd reports and the last-seen
	 * time its agent.stale event was raised for. Its lifecycle is a history of its own, begun
	 * here from what the old rows say. Webhook events wait in an outbox, one row per event and
	 * URL, until delivered. The CHECK on agents.state changes: SQLite rebuilds the table,
	 * PostgreSQL changes the CHECK in place.
	 */
	{ .what = "retired and reset agents, their history and intervals, a webhook outbox",
	  .own[STORE_DIALECT_SQLITE] =
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
		M6_HISTORY_OUTBOX,
	  .own[STORE_DIALECT_PG] =
		"ALTER TABLE agents DROP CONSTRAINT agents_state_check;"
		"ALTER TABLE agents ADD CONSTRAINT agents_state_check"
		" CHECK(state IN ('pending','active','retired'));"
		"ALTER TABLE agents ADD COLUMN retired_at BIGINT NOT NULL DEFAULT 0,"
		" ADD COLUMN reset_at BIGINT NOT NULL DEFAULT 0,"
		" ADD COLUMN round_interval BIGINT NOT NULL DEFAULT 0,"
		" ADD COLUMN stale_event_for BIGINT NOT NULL DEFAULT 0;"
		M6_HISTORY_OUTBOX },
	/*
	 * 7 (several verifiers on one database): the challenges that rounds answered, so that a
	 * challenge one verifier issued is accepted once in the whole fleet (verifier/cluster.h);
	 * a row is kept until a while after its challenge expired.
	 */
	{ .what = "spent challenges of several verifiers",
	  .sql =
		"CREATE TABLE spent_nonces("
		" nonce BLOB PRIMARY KEY, agent TEXT NOT NULL, expires_at INTEGER NOT NULL)"
		" WITHOUT ROWID;"
		"CREATE INDEX spent_nonces_expiry ON spent_nonces(expires_at);" },
	/*
	 * 8: every verdict names the policy and the versions of that policy and of the agent's
	 * amendment that judged the boot as its state folds it ('' and 0 for verdicts from before).
	 */
	{ .what = "the policy and amendment versions that judged each verdict",
	  .sql =
		"ALTER TABLE verdicts ADD COLUMN policy TEXT NOT NULL DEFAULT '';"
		"ALTER TABLE verdicts ADD COLUMN policy_version INTEGER NOT NULL DEFAULT 0;"
		"ALTER TABLE verdicts ADD COLUMN amendment_version INTEGER NOT NULL DEFAULT 0;" },
	/*
	 * 9: retention. A verdict says whether it changed its agent's trust or reasons from the
	 * verdict before it (those are never pruned; the first of an agent did); rows from before
	 * are judged so here in id order. Per agent and hour, how many rounds were trusted and
	 * untrusted, begun from the verdicts stored.
	 */
	{ .what = "verdicts that changed trust marked, hourly counters of rounds",
	  .sql =
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
		" FROM verdicts GROUP BY agent, time - time % 3600;" },
	/*
	 * 10: deleted policies, each with the newest version it had: a policy written again under
	 * the name goes on from there, so that a (name, version) never names two texts.
	 */
	{ .what = "deleted policies and their last versions",
	  .sql =
		"CREATE TABLE policy_deletions("
		" name TEXT PRIMARY KEY, version INTEGER NOT NULL, actor TEXT NOT NULL,"
		" time INTEGER NOT NULL);" },
	/*
	 * 11: the audit trail (verifier/store/audit.h): its records in a hash chain, the cursor
	 * that serializes appends (one row, made by the first), the heads signed by the verifier's
	 * key.
	 */
	{ .what = "the audit trail",
	  .sql =
		"CREATE TABLE audit_log("
		" seq INTEGER PRIMARY KEY, time INTEGER NOT NULL, kind TEXT NOT NULL,"
		" actor TEXT NOT NULL, agent TEXT NOT NULL, detail TEXT NOT NULL,"
		" prev_hash BLOB NOT NULL, hash BLOB NOT NULL);"
		"CREATE TABLE audit_head("
		" id INTEGER PRIMARY KEY CHECK(id = 1), seq INTEGER NOT NULL, hash BLOB NOT NULL);"
		"CREATE TABLE audit_signed("
		" seq INTEGER PRIMARY KEY, hash BLOB NOT NULL, time INTEGER NOT NULL,"
		" signature BLOB NOT NULL, public_key BLOB NOT NULL);" },
	/*
	 * 12: what a signed policy or amendment version keeps of its DSSE envelope (store.h,
	 * store_policy_sig): the keyid that verified it, the envelope without its payload.
	 */
	{ .what = "who signed each policy version",
	  .sql =
		"ALTER TABLE policies ADD COLUMN signer TEXT NOT NULL DEFAULT '';"
		"ALTER TABLE policies ADD COLUMN signature TEXT NOT NULL DEFAULT '';" },
	/*
	 * 13: the evidence of kept verdicts (store.h, "Evidence"): a record per verdict, beside it
	 * the AK it was checked with; one copy of each firmware event log and of each policy or
	 * amendment version that records name, however many do.
	 */
	{ .what = "the evidence of kept verdicts",
	  .sql =
		"CREATE TABLE verdict_evidence("
		" verdict_id INTEGER PRIMARY KEY, agent TEXT NOT NULL, record TEXT NOT NULL,"
		" ak_pub BLOB NOT NULL, boot_log BLOB);"
		"CREATE INDEX verdict_evidence_agent ON verdict_evidence(agent, verdict_id);"
		"CREATE INDEX verdict_evidence_boot_log ON verdict_evidence(boot_log);"
		"CREATE TABLE evidence_boot_logs("
		" sha256 BLOB PRIMARY KEY, log BLOB NOT NULL, used_at INTEGER NOT NULL);"
		"CREATE TABLE evidence_policies("
		" name TEXT NOT NULL, version INTEGER NOT NULL, json TEXT NOT NULL,"
		" PRIMARY KEY(name, version));" },
	/*
	 * 14: admission (store.h, "Registrations"): agents an operator registered before they
	 * enroll, each with the SHA-256 that names its EK, the policy and labels it starts with;
	 * the labels of enrolled agents, one row per key.
	 */
	{ .what = "registrations of agents before they enroll, labels",
	  .sql =
		"CREATE TABLE registrations("
		" agent TEXT PRIMARY KEY, ek_kind TEXT NOT NULL, ek_sha256 BLOB NOT NULL,"
		" ek_cert BLOB, policy TEXT NOT NULL, labels TEXT NOT NULL, actor TEXT NOT NULL,"
		" created_at INTEGER NOT NULL);"
		"CREATE INDEX registrations_policy ON registrations(policy);"
		"CREATE TABLE agent_labels("
		" agent TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,"
		" PRIMARY KEY(agent, key));"
		"CREATE INDEX agent_labels_key ON agent_labels(key, value);" },
};

const char *store_migration_sql(unsigned i, enum store_dialect d)
{
	if (i >= STORE_SCHEMA_VERSION || (unsigned)d >= STORE_DIALECTS)
		return NULL;
	return store_migrations[i].own[d] ? store_migrations[i].own[d] : store_migrations[i].sql;
}
