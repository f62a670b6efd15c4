/*
 * The store's statements (store_statements.h), in one table for every driver.
 *
 * Where PostgreSQL's text is given beside the portable one, the dialects differ: SQLite's
 * two-argument max() is PostgreSQL's GREATEST(), a text's length in bytes is spelled two ways,
 * PostgreSQL finds a path through the index on its sha256, types parameters only from where
 * they stand (a SELECT list needs casts), and a PostgreSQL outbox claim skips the rows another
 * verifier is claiming (FOR UPDATE SKIP LOCKED; SQLite has one writer). A parameter tested with IS NULL is cast once, so that a
 * server that types parameters when it prepares knows it is text.
 */
#include <stddef.h>

#include "verifier/store/store_statements.h"

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

/* The fleet list's last column: the reasons of each agent's last verdict, in the same query. */
#define LAST_REASONS_COL                                                                    \
	"COALESCE((SELECT reasons FROM verdicts v WHERE v.agent = a.id ORDER BY id DESC LIMIT 1), '[]')"

#define VIOLATION_COLUMNS                                                                  \
	"id, agent, boot_number, entry, path, digest, template, reason, first_seen, last_seen," \
	" count, state, COALESCE(recurs, 0), decided_at, decision"

#define OUTBOX_DUE_SQL                                                                     \
	"SELECT id, event_id, target, type, agent, created_at, body, attempts"                 \
	" FROM webhook_outbox WHERE target = ?1 AND next_attempt_at <= ?2"                     \
	" ORDER BY id LIMIT ?3"

#define MARK_STALE_SQL(greatest)                                                           \
	"UPDATE agents SET stale_event_for = ?2 WHERE id = ?1 AND state = 'active'"            \
	" AND stale_event_for <> ?2 AND " greatest "(activated_at, COALESCE((SELECT time FROM" \
	" verdicts v WHERE v.agent = ?1 ORDER BY v.id DESC LIMIT 1), 0)) = ?2"

/*
 * SELECT ?1, ?2 ... names no column a server could type the parameters by: PostgreSQL's are
 * cast.
 */
#define BOOT_INSERT_SQL(values)                                                            \
	"INSERT INTO boot_state(agent, state, reset_count, restart_count,"                     \
	" boot_number, next_entry, updated_at, version)"                                       \
	" SELECT " values ", 1"                                                                \
	" WHERE EXISTS(SELECT 1 FROM agents WHERE id = ?1 AND state = 'active')"               \
	" ON CONFLICT(agent) DO NOTHING"

/* PostgreSQL indexes a path by its sha256 (a B-tree entry is shorter than a path may be). */
#define VIOLATION_NEWEST_SQL(path_index)                                                   \
	"SELECT id, state, boot_number, entry FROM violations"                                 \
	" WHERE agent = ?1 AND reason = ?2" path_index " AND path = ?3 AND digest = ?4"         \
	" ORDER BY id DESC LIMIT 1"

#define REGISTRATION_SELECT                                                                \
	"SELECT agent, ek_kind, ek_sha256, ek_cert, policy, labels, actor, created_at"         \
	" FROM registrations"

/* STMT(what, sql) or STMT(what, sql, pg): one entry of the table. */
#define STMT_(what_, sql_, pg_, ...) { .what = (what_), .sql = (sql_), .pg = (pg_) }
#define STMT(...) STMT_(__VA_ARGS__, NULL, 0)

const struct store_statement store_statements[STMT_COUNT] = {
	[STMT_AGENT_GET] = STMT("agent lookup",
		"SELECT " AGENT_SUMMARY_COLS ", a.ek_pub, a.ek_cert, a.ak_pub"
		" FROM agents a LEFT JOIN boot_state b ON b.agent = a.id WHERE a.id = ?1"),
	/* A re-enrollment restarts the pending enrollment's time to live. */
	[STMT_AGENT_REFRESH] = STMT("agent enroll",
		"UPDATE agents SET ek_cert = ?2, ak_pub = ?3, ak_name = ?4,"
		" cred_digest = ?5, enrolled_at = ?6, reset_at = 0 WHERE id = ?1 AND state = 'pending'"),
	[STMT_AGENT_INSERT] = STMT("agent enroll",
		"INSERT INTO agents(id, ek_cert, ak_pub, ak_name, cred_digest, ek_pub,"
		" policy, state, created_at, enrolled_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,"
		" 'pending', ?8, ?8)"),
	/* A reset agent's next enrollment: new keys, pending again, its history kept. */
	[STMT_AGENT_REPLACE] = STMT("agent enroll",
		"UPDATE agents SET ek_cert = ?2, ak_pub = ?3, ak_name = ?4, cred_digest = ?5,"
		" ek_pub = ?6, state = 'pending', enrolled_at = ?7, activated_at = 0,"
		" retired_at = 0, reset_at = 0, stale_event_for = 0 WHERE id = ?1"),
	[STMT_AGENT_ACTIVATE] = STMT("agent activate",
		"UPDATE agents SET state = 'active', activated_at = ?3"
		" WHERE id = ?1 AND state = 'pending' AND cred_digest = ?2"),
	[STMT_ACTIVATE_FACTS] = STMT("agent activate",
		"SELECT a.state, a.cred_digest, a.enrolled_at, EXISTS(SELECT 1 FROM agents o"
		" WHERE o.ek_pub = a.ek_pub AND o.state = 'active' AND o.id <> a.id)"
		" FROM agents a WHERE a.id = ?1"),
	/* Only pending agents: they have no boot state, verdicts or violations to lose. */
	[STMT_PENDING_EXPIRE] = STMT("expiry of pending enrollments",
		"DELETE FROM agents WHERE state = 'pending' AND enrolled_at <= ?1"),
	[STMT_ENROLL_FACTS] = STMT("enrollment facts",
		"SELECT EXISTS(SELECT 1 FROM agents WHERE ek_pub = ?1 AND state = 'active'"
		" AND id <> ?2),"
		" (SELECT COUNT(*) FROM agents WHERE ek_pub = ?1 AND state = 'pending' AND id <> ?2),"
		" (SELECT COUNT(*) FROM agents WHERE state = 'pending')"),
	/* Only to a policy that exists ('' is the default): store_sql.c holds the policy lock. */
	[STMT_AGENT_SET_POLICY] = STMT("agent policy",
		"UPDATE agents SET policy = ?2 WHERE id = ?1"
		" AND (?2 = '' OR EXISTS(SELECT 1 FROM policies WHERE name = ?2))"),
	[STMT_AGENTS_LIST] = STMT("agents list",
		"SELECT " AGENT_SUMMARY_COLS ", " LAST_REASONS_COL
		" FROM agents a LEFT JOIN boot_state b ON b.agent = a.id ORDER BY a.id"),
	/* The stale scan's columns: store_sql_agents_liveness() reads them in this order. */
	[STMT_AGENTS_LIVENESS] = STMT("agents liveness",
		"SELECT a.id, a.activated_at,"
		" COALESCE((SELECT time FROM verdicts v WHERE v.agent = a.id ORDER BY id DESC LIMIT 1), 0),"
		" a.round_interval, a.stale_event_for FROM agents a WHERE a.state = 'active'"),
	[STMT_AGENT_STATE] = STMT("agent state", "SELECT state FROM agents WHERE id = ?1"),
	[STMT_AGENT_INTERVAL] = STMT("agent interval",
		"UPDATE agents SET round_interval = ?2 WHERE id = ?1 AND round_interval <> ?2"),
	[STMT_AGENT_RETIRE] = STMT("agent retire",
		"UPDATE agents SET state = 'retired', retired_at = ?2, reset_at = 0"
		" WHERE id = ?1 AND state <> 'retired'"),
	[STMT_AGENT_RESET] = STMT("agent reset",
		"UPDATE agents SET reset_at = ?2 WHERE id = ?1 AND reset_at = 0"),
	/* Once per silence: the last-seen time the caller computed is still the agent's. */
	[STMT_AGENT_MARK_STALE] = STMT("agent stale", MARK_STALE_SQL("max"),
		MARK_STALE_SQL("GREATEST")),
	[STMT_BOOT_GET] = STMT("boot state lookup",
		"SELECT state, version FROM boot_state WHERE agent = ?1"),
	/*
	 * The compare-and-swap of store_round_commit(): version 0 is "no row yet". Only for an
	 * agent still active: one retired (or re-enrolled) while its round was judged writes none.
	 */
	[STMT_BOOT_INSERT] = STMT("boot state write", BOOT_INSERT_SQL("?1, ?2, ?3, ?4, ?5, ?6, ?7"),
		BOOT_INSERT_SQL("?1::text, ?2::bytea, ?3::bigint, ?4::bigint, ?5::bigint,"
				" ?6::bigint, ?7::bigint")),
	[STMT_BOOT_UPDATE] = STMT("boot state write",
		"UPDATE boot_state SET state = ?2, reset_count = ?3, restart_count = ?4,"
		" boot_number = ?5, next_entry = ?6, updated_at = ?7, version = version + 1"
		" WHERE agent = ?1 AND version = ?8"
		" AND EXISTS(SELECT 1 FROM agents WHERE id = ?1 AND state = 'active')"),
	/* A new TPM or AK: its boot session starts over, the boot numbers go on. */
	[STMT_BOOT_RESTART] = STMT("boot state restart",
		"UPDATE boot_state SET state = ?2, reset_count = 0, restart_count = 0, next_entry = 0,"
		" updated_at = ?3, version = version + 1 WHERE agent = ?1"),
	[STMT_BOOT_LOG_GET] = STMT("boot log lookup",
		"SELECT log, sha256, cmdline, judged_boot, judged_key, summary, received_at"
		" FROM boot_logs WHERE agent = ?1"),
	[STMT_BOOT_LOG_PUT] = STMT("boot log write",
		"INSERT INTO boot_logs(agent, log, sha256, cmdline, judged_boot, judged_key, summary,"
		" received_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
		" ON CONFLICT(agent) DO UPDATE SET"
		" log = excluded.log, sha256 = excluded.sha256, cmdline = excluded.cmdline,"
		" judged_boot = excluded.judged_boot, judged_key = excluded.judged_key,"
		" summary = excluded.summary, received_at = excluded.received_at,"
		" updated_at = excluded.updated_at"),
	[STMT_BOOT_LOG_DELETE] = STMT("boot log delete", "DELETE FROM boot_logs WHERE agent = ?1"),
	/* store_round_context(): everything a round reads, in one statement. */
	[STMT_ROUND_CONTEXT] = STMT("round context",
		"SELECT a.state, a.policy, a.ak_name, b.state, COALESCE(b.version, 0),"
		" (SELECT COUNT(*) FROM violations x WHERE x.agent = a.id AND x.state = 'open'),"
		" (SELECT COUNT(*) FROM violations x WHERE x.agent = a.id AND x.state = 'open'"
		"  AND x.boot_number = COALESCE(b.boot_number, 0)),"
		" l.sha256,"
		" COALESCE((SELECT max(version) FROM policies"
		"  WHERE name = CASE a.policy WHEN '' THEN ?2 ELSE a.policy END), 0),"
		" COALESCE((SELECT max(version) FROM policies WHERE name = ?3), 0)"
		" FROM agents a LEFT JOIN boot_state b ON b.agent = a.id"
		" LEFT JOIN boot_logs l ON l.agent = a.id WHERE a.id = ?1"),
	/* Single use of a challenge across verifiers (store.h, struct store_round). */
	[STMT_NONCE_SPEND] = STMT("challenge spend",
		"INSERT INTO spent_nonces(nonce, agent, expires_at) VALUES (?1, ?2, ?3)"
		" ON CONFLICT(nonce) DO NOTHING"),
	[STMT_NONCES_PRUNE] = STMT("spent challenges prune",
		"DELETE FROM spent_nonces WHERE expires_at < ?1"),
	[STMT_VERDICT_INSERT] = STMT("verdict write",
		"INSERT INTO verdicts(agent, boot_number, time, trusted, reasons,"
		" next_offset, policy, policy_version, amendment_version, changed)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id"),
	[STMT_VERDICTS_LIST] = STMT("verdicts list",
		"SELECT id, agent, boot_number, time, trusted, reasons, next_offset,"
		" policy, policy_version, amendment_version"
		" FROM verdicts WHERE agent = ?1 ORDER BY id DESC LIMIT ?2"),
	[STMT_LAST_VERDICT] = STMT("last verdict",
		"SELECT trusted, reasons FROM verdicts WHERE agent = ?1 ORDER BY id DESC LIMIT 1"),
	/* A round counted in its agent's hour (?2: the hour's first second). */
	[STMT_HOUR_ADD] = STMT("hourly counters write",
		"INSERT INTO verdict_hours(agent, hour, rounds, trusted, untrusted)"
		" VALUES (?1, ?2, 1, ?3, ?4) ON CONFLICT(agent, hour) DO UPDATE SET"
		" rounds = verdict_hours.rounds + 1,"
		" trusted = verdict_hours.trusted + excluded.trusted,"
		" untrusted = verdict_hours.untrusted + excluded.untrusted"),
	/*
	 * Retention: of agent ?1's verdicts older than its ?2 + 1 newest that changed nothing
	 * (store.h, store_verdicts_prune()), the ?3 oldest: the id of the newest of them, which
	 * bounds what the next two statements delete. A bound, not a list: the set "changed
	 * nothing, id at most the bound" stays the same while rounds commit (a verdict's
	 * `changed` never changes), so the evidence deleted is that of the verdicts deleted.
	 */
	[STMT_VERDICTS_PRUNE_BOUND] = STMT("verdicts prune",
		"SELECT max(id) FROM (SELECT id FROM verdicts WHERE agent = ?1"
		" AND changed = 0 AND id < (SELECT id FROM verdicts WHERE agent = ?1"
		" ORDER BY id DESC LIMIT 1 OFFSET ?2) ORDER BY id LIMIT ?3) x"),
	[STMT_VERDICTS_PRUNE] = STMT("verdicts prune",
		"DELETE FROM verdicts WHERE agent = ?1 AND changed = 0 AND id <= ?2"),
	[STMT_EVIDENCE_PRUNE] = STMT("evidence prune",
		"DELETE FROM verdict_evidence WHERE agent = ?1 AND verdict_id <= ?2"
		" AND verdict_id IN (SELECT id FROM verdicts WHERE agent = ?1 AND changed = 0"
		" AND id <= ?2)"),
	/*
	 * The evidence of verdict ?1 with the AK the round checked (the agent's now: a round
	 * whose agent was re-enrolled meanwhile commits nothing, store_round_commit()).
	 */
	[STMT_EVIDENCE_INSERT] = STMT("evidence write",
		"INSERT INTO verdict_evidence(verdict_id, agent, record, ak_pub, boot_log)"
		" SELECT ?1, ?2, ?3, ak_pub, ?4 FROM agents WHERE id = ?2",
		"INSERT INTO verdict_evidence(verdict_id, agent, record, ak_pub, boot_log)"
		" SELECT CAST(?1 AS BIGINT), CAST(?2 AS TEXT), CAST(?3 AS TEXT), ak_pub,"
		" CAST(?4 AS BYTEA) FROM agents WHERE id = ?2"),
	/*
	 * One copy of the event log the round judged (the agent's stored one, written before in
	 * the round when it sent it), marked used now: the sweep (STMT_EVIDENCE_LOGS_PRUNE) leaves
	 * a copy used lately, so that it never deletes one a round is naming in a transaction not
	 * committed yet (the update holds the row until then).
	 */
	[STMT_EVIDENCE_BOOT_LOG] = STMT("evidence event log write",
		"INSERT INTO evidence_boot_logs(sha256, log, used_at)"
		" SELECT sha256, log, ?3 FROM boot_logs WHERE agent = ?1 AND sha256 = ?2"
		" ON CONFLICT(sha256) DO UPDATE SET used_at = excluded.used_at",
		"INSERT INTO evidence_boot_logs(sha256, log, used_at)"
		" SELECT sha256, log, CAST(?3 AS BIGINT) FROM boot_logs WHERE agent = ?1"
		" AND sha256 = ?2 ON CONFLICT(sha256) DO UPDATE SET used_at = excluded.used_at"),
	/* One copy of a policy version records name: a policy deleted later stays provable. */
	[STMT_EVIDENCE_POLICY] = STMT("evidence policy write",
		"INSERT INTO evidence_policies(name, version, json) SELECT name, version, json"
		" FROM policies WHERE name = ?1 AND version = ?2 AND NOT EXISTS (SELECT 1"
		" FROM evidence_policies WHERE name = ?1 AND version = ?2)"
		" ON CONFLICT(name, version) DO NOTHING"),
	[STMT_EVIDENCE_GET] = STMT("evidence read",
		"SELECT e.record, e.ak_pub, l.log FROM verdict_evidence e"
		" LEFT JOIN evidence_boot_logs l ON l.sha256 = e.boot_log WHERE e.verdict_id = ?1"),
	[STMT_EVIDENCE_POLICY_GET] = STMT("evidence policy read",
		"SELECT json FROM evidence_policies WHERE name = ?1 AND version = ?2"),
	/* Event logs no record names any more, unused since ?1 (STMT_EVIDENCE_BOOT_LOG). */
	[STMT_EVIDENCE_LOGS_PRUNE] = STMT("evidence event logs prune",
		"DELETE FROM evidence_boot_logs WHERE sha256 IN (SELECT sha256 FROM"
		" evidence_boot_logs l WHERE used_at < ?1 AND NOT EXISTS (SELECT 1 FROM"
		" verdict_evidence e WHERE e.boot_log = l.sha256) LIMIT ?2)"),
	[STMT_HOURS_PRUNE] = STMT("hourly counters prune",
		"DELETE FROM verdict_hours WHERE (agent, hour) IN (SELECT agent, hour"
		" FROM verdict_hours WHERE hour < ?1 ORDER BY hour LIMIT ?2)"),
	[STMT_HOURS_LIST] = STMT("hourly counters",
		"SELECT hour, rounds, trusted, untrusted FROM verdict_hours"
		" WHERE agent = ?1 AND hour >= ?2 ORDER BY hour DESC LIMIT ?3"),
	[STMT_AGENT_IDS] = STMT("agent ids",
		"SELECT id FROM agents WHERE id > ?1 ORDER BY id LIMIT ?2"),
	/*
	 * The audit trail (audit.h). The cursor's row serializes appenders: the upsert takes it
	 * (row lock on a server) until the transaction ends, and answers the new record's seq and
	 * the hash of the one before (zeros before the first). Every writer appends last in its
	 * transaction, so nothing waits for it while holding it.
	 */
	[STMT_AUDIT_CURSOR] = STMT("audit append",
		"INSERT INTO audit_head(id, seq, hash) VALUES (1, 1, ?1)"
		" ON CONFLICT(id) DO UPDATE SET seq = audit_head.seq + 1 RETURNING seq, hash"),
	[STMT_AUDIT_CURSOR_SET] = STMT("audit append",
		"UPDATE audit_head SET hash = ?1 WHERE id = 1"),
	[STMT_AUDIT_INSERT] = STMT("audit append",
		"INSERT INTO audit_log(seq, time, kind, actor, agent, detail, prev_hash, hash)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
	[STMT_AUDIT_LIST] = STMT("audit trail",
		"SELECT seq, time, kind, actor, agent, detail, prev_hash, hash FROM audit_log"
		" WHERE seq > ?1 ORDER BY seq LIMIT ?2"),
	[STMT_AUDIT_SIGNED_PUT] = STMT("audit head signature",
		"INSERT INTO audit_signed(seq, hash, time, signature, public_key)"
		" VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(seq) DO NOTHING"),
	[STMT_AUDIT_SIGNED_LIST] = STMT("audit head signatures",
		"SELECT seq, hash, time, signature, public_key FROM audit_signed"
		" ORDER BY seq DESC LIMIT ?1"),
	[STMT_AUDIT_LAST] = STMT("audit head",
		"SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1"),
	/*
	 * A violation's newest row decides what a new occurrence does (store_sql.c): there is
	 * at most one open row per (agent, reason, path, digest) and it is always the newest.
	 */
	[STMT_VIOLATION_NEWEST] = STMT("violation lookup", VIOLATION_NEWEST_SQL(""),
		VIOLATION_NEWEST_SQL(" AND sha256(path) = sha256(?3)")),
	[STMT_VIOLATION_INSERT] = STMT("violation write",
		"INSERT INTO violations(agent, reason, path, digest, boot_number, entry, template,"
		" first_seen, last_seen, count, recurs)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?10) RETURNING id"),
	[STMT_VIOLATION_AGAIN] = STMT("violation update",
		"UPDATE violations SET boot_number = ?2, entry = ?3, last_seen = ?4,"
		" count = count + ?5 WHERE id = ?1"),
	[STMT_VIOLATION_GET] = STMT("violation get",
		"SELECT " VIOLATION_COLUMNS " FROM violations WHERE id = ?1"),
	[STMT_VIOLATIONS_OPEN_COUNT] = STMT("open violations",
		"SELECT COUNT(*), COUNT(CASE WHEN boot_number = ?2 THEN 1 END) FROM violations"
		" WHERE agent = ?1 AND state = 'open'"),
	[STMT_VIOLATIONS_LIST] = STMT("violations list",
		"SELECT " VIOLATION_COLUMNS " FROM violations"
		" WHERE (CAST(?1 AS TEXT) IS NULL OR state = ?1)"
		" AND (CAST(?2 AS TEXT) IS NULL OR agent = ?2)"
		" ORDER BY last_seen DESC, id DESC LIMIT ?3"),
	[STMT_VIOLATION_DECIDE] = STMT("violation decision",
		"UPDATE violations SET state = ?2, decided_at = ?3, decision = ?4"
		" WHERE id = ?1 AND state = 'open'"),
	[STMT_POLICY_NEWEST] = STMT("policy lookup",
		"SELECT version, json, signature FROM policies WHERE name = ?1"
		" ORDER BY version DESC LIMIT 1"),
	[STMT_POLICY_INSERT] = STMT("policy write",
		"INSERT INTO policies(name, version, json, actor, time, signer, signature)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
	[STMT_POLICY_VERSION] = STMT("policy version",
		"SELECT max(version) FROM policies WHERE name = ?1"),
	[STMT_POLICY_GET_VERSION] = STMT("policy version lookup",
		"SELECT json, signer, signature FROM policies WHERE name = ?1 AND version = ?2"),
	[STMT_POLICY_VERSIONS] = STMT("policy versions",
		"SELECT version, actor, time, length(CAST(json AS BLOB)), signer, signature <> ''"
		" FROM policies WHERE name = ?1 ORDER BY version DESC",
		"SELECT version, actor, time, octet_length(json), signer,"
		" CASE WHEN signature <> '' THEN 1 ELSE 0 END"
		" FROM policies WHERE name = ?1 ORDER BY version DESC"),
	[STMT_POLICY_AGENTS] = STMT("policy agents", "SELECT COUNT(*) FROM agents WHERE policy = ?1"),
	/*
	 * Named policies, each with its newest version: an amendment's name ("agent/ID") holds a
	 * '/', which policy names never do. ?1 is the default policy's name (its agents name none).
	 */
	[STMT_POLICIES_LIST] = STMT("policies list",
		"SELECT p.name, p.version, p.time, p.actor, (SELECT COUNT(*) FROM agents a"
		"  WHERE a.policy = p.name OR (p.name = ?1 AND a.policy = ''))"
		" FROM policies p WHERE p.name NOT LIKE 'agent/%'"
		" AND p.version = (SELECT max(version) FROM policies q WHERE q.name = p.name)"
		" ORDER BY p.name"),
	[STMT_POLICY_DELETE] = STMT("policy delete", "DELETE FROM policies WHERE name = ?1"),
	/* A deleted policy's newest version: one written again under its name goes on from it. */
	[STMT_POLICY_DELETED_VERSION] = STMT("policy deletion lookup",
		"SELECT version FROM policy_deletions WHERE name = ?1"),
	[STMT_POLICY_DELETION_RECORD] = STMT("policy deletion write",
		"INSERT INTO policy_deletions(name, version, actor, time) VALUES (?1, ?2, ?3, ?4)"
		" ON CONFLICT(name) DO UPDATE SET version = excluded.version,"
		" actor = excluded.actor, time = excluded.time"),
	[STMT_COUNTS] = STMT("counts",
		"SELECT (SELECT COUNT(*) FROM agents WHERE state = 'pending'),"
		" (SELECT COUNT(*) FROM agents WHERE state = 'active'),"
		" (SELECT COUNT(*) FROM violations WHERE state = 'open'),"
		" (SELECT COUNT(*) FROM verdicts WHERE trusted = 1),"
		" (SELECT COUNT(*) FROM verdicts WHERE trusted = 0),"
		" (SELECT COUNT(*) FROM agents WHERE state = 'retired')"),
	[STMT_HISTORY_ADD] = STMT("agent history write",
		"INSERT INTO agent_history(agent, time, event, actor, detail)"
		" VALUES (?1, ?2, ?3, ?4, ?5)"),
	[STMT_HISTORY_LIST] = STMT("agent history",
		"SELECT id, time, event, actor, detail FROM agent_history WHERE agent = ?1"
		" ORDER BY id DESC LIMIT ?2"),
	[STMT_OUTBOX_ADD] = STMT("webhook outbox write",
		"INSERT INTO webhook_outbox(event_id, target, type, agent, created_at, body,"
		" next_attempt_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?5)"),
	/* The rows due, oldest first; locked (skipping those another verifier claims) on a server. */
	[STMT_OUTBOX_DUE] = STMT("webhook outbox read", OUTBOX_DUE_SQL,
		OUTBOX_DUE_SQL " FOR UPDATE SKIP LOCKED"),
	[STMT_OUTBOX_CLAIM] = STMT("webhook outbox claim",
		"UPDATE webhook_outbox SET next_attempt_at = ?2 WHERE id = ?1"),
	[STMT_OUTBOX_DELETE] = STMT("webhook outbox delete", "DELETE FROM webhook_outbox WHERE id = ?1"),
	[STMT_OUTBOX_RETRY] = STMT("webhook outbox retry",
		"UPDATE webhook_outbox SET attempts = attempts + 1, next_attempt_at = ?2,"
		" last_error = ?3 WHERE id = ?1"),
	[STMT_OUTBOX_PENDING] = STMT("webhook outbox count",
		"SELECT COUNT(*) FROM webhook_outbox WHERE (CAST(?1 AS TEXT) IS NULL OR target = ?1)"),
	/* An agent purged: everything stored of it (store_agent_retire()). */
	[STMT_PURGE_BOOT_STATE] = STMT("purge", "DELETE FROM boot_state WHERE agent = ?1"),
	[STMT_PURGE_BOOT_LOG] = STMT("purge", "DELETE FROM boot_logs WHERE agent = ?1"),
	[STMT_PURGE_VERDICTS] = STMT("purge", "DELETE FROM verdicts WHERE agent = ?1"),
	[STMT_PURGE_HOURS] = STMT("purge", "DELETE FROM verdict_hours WHERE agent = ?1"),
	[STMT_PURGE_VIOLATIONS] = STMT("purge", "DELETE FROM violations WHERE agent = ?1"),
	[STMT_PURGE_AMENDMENT] = STMT("purge", "DELETE FROM policies WHERE name = ?1"),
	[STMT_PURGE_HISTORY] = STMT("purge", "DELETE FROM agent_history WHERE agent = ?1"),
	[STMT_PURGE_AGENT] = STMT("purge", "DELETE FROM agents WHERE id = ?1"),
	[STMT_PURGE_EVIDENCE] = STMT("purge", "DELETE FROM verdict_evidence WHERE agent = ?1"),
	[STMT_PURGE_EVIDENCE_AMENDMENT] = STMT("purge",
		"DELETE FROM evidence_policies WHERE name = ?1"),
	[STMT_PURGE_LABELS] = STMT("purge", "DELETE FROM agent_labels WHERE agent = ?1"),
	/* No change: the id is registered already (store_sql.c says -EEXIST). */
	[STMT_REGISTRATION_ADD] = STMT("registration write",
		"INSERT INTO registrations(agent, ek_kind, ek_sha256, ek_cert, policy, labels,"
		" actor, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
		" ON CONFLICT(agent) DO NOTHING"),
	[STMT_REGISTRATION_GET] = STMT("registration lookup", REGISTRATION_SELECT
		" WHERE agent = ?1"),
	[STMT_REGISTRATIONS_LIST] = STMT("registrations list", REGISTRATION_SELECT
		" ORDER BY agent"),
	[STMT_REGISTRATION_DELETE] = STMT("registration delete",
		"DELETE FROM registrations WHERE agent = ?1"),
	[STMT_REGISTRATION_SET_POLICY] = STMT("registration policy",
		"UPDATE registrations SET policy = ?2 WHERE agent = ?1"),
	[STMT_POLICY_REGISTRATIONS] = STMT("policy registrations",
		"SELECT COUNT(*) FROM registrations WHERE policy = ?1"),
	[STMT_LABEL_SET] = STMT("label write",
		"INSERT INTO agent_labels(agent, key, value) VALUES (?1, ?2, ?3)"
		" ON CONFLICT(agent, key) DO UPDATE SET value = excluded.value"),
	/* A label the agent has not got yet (a registration's, at enrollment). */
	[STMT_LABEL_ADD] = STMT("label write",
		"INSERT INTO agent_labels(agent, key, value) VALUES (?1, ?2, ?3)"
		" ON CONFLICT(agent, key) DO NOTHING"),
	/* The labels of the pending enrollments STMT_PENDING_EXPIRE is about to delete. */
	[STMT_PENDING_EXPIRE_LABELS] = STMT("expiry of pending enrollments",
		"DELETE FROM agent_labels WHERE agent IN (SELECT id FROM agents"
		" WHERE state = 'pending' AND enrolled_at <= ?1)"),
	[STMT_LABEL_DELETE] = STMT("label delete",
		"DELETE FROM agent_labels WHERE agent = ?1 AND key = ?2"),
	[STMT_LABELS_GET] = STMT("labels lookup",
		"SELECT key, value FROM agent_labels WHERE agent = ?1 ORDER BY key"),
	/* Of enrolled agents only: a pending enrollment that expired leaves none (store_sql.c
	 * deletes them with it), but a purge in flight is not listed either. */
	[STMT_LABELS_ALL] = STMT("labels list",
		"SELECT l.agent, l.key, l.value FROM agent_labels l"
		" WHERE EXISTS(SELECT 1 FROM agents a WHERE a.id = l.agent) ORDER BY l.agent, l.key"),
	[STMT_LABELS_COUNT] = STMT("labels count",
		"SELECT COUNT(*) FROM agent_labels WHERE agent = ?1"),
	[STMT_REGISTRATION_LABELS_SET] = STMT("registration labels",
		"UPDATE registrations SET labels = ?2 WHERE agent = ?1"),
	/* The enrolled agents labelled ?1=?2, and whether each is assigned policy ?3 already. */
	[STMT_LABEL_AGENTS] = STMT("label agents",
		"SELECT a.id, CASE WHEN a.policy = ?3 THEN 1 ELSE 0 END FROM agents a"
		" JOIN agent_labels l ON l.agent = a.id WHERE l.key = ?1 AND l.value = ?2"
		" ORDER BY a.id"),
};
