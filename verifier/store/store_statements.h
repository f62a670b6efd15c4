/*
 * store_statements: every statement the store runs, by name (store_sql.c runs them through a
 * driver, store_driver.h).
 *
 * One table, in portable SQL: parameters are ?1, ?2 ... (a driver of another placeholder
 * syntax rewrites them when it prepares), and a statement is written once for every dialect
 * unless the dialects truly differ; then `sql` is the portable form and the other dialect's
 * text sits beside it. Every driver prepares all of them when it opens, but for a fold.
 *
 * A fold does in one statement what several of the table do one after the other (a WITH that
 * writes): for a server database, where every statement is a round trip. It exists only in the
 * dialect that has it (`sql` NULL), and only a driver that says so (store_driver.h, `folds`)
 * prepares and runs it; store_sql.c runs the statements it folds on the others.
 */
#ifndef VERIFIER_STORE_STATEMENTS_H
#define VERIFIER_STORE_STATEMENTS_H

enum store_stmt {
	STMT_AGENT_GET,
	STMT_AGENT_REFRESH,
	STMT_AGENT_INSERT,
	STMT_AGENT_REPLACE,
	STMT_AGENT_ACTIVATE,
	STMT_ACTIVATE_FACTS,
	STMT_PENDING_EXPIRE,
	STMT_ENROLL_FACTS,
	STMT_AGENT_SET_POLICY,
	STMT_AGENTS_LIST,
	STMT_AGENTS_LIVENESS,
	STMT_AGENT_STATE,
	STMT_AGENT_INTERVAL,
	STMT_AGENT_RETIRE,
	STMT_AGENT_RESET,
	STMT_AGENT_MARK_STALE,
	STMT_BOOT_GET,
	STMT_BOOT_INSERT,
	STMT_BOOT_UPDATE,
	STMT_BOOT_UPDATE_SPEND,
	STMT_BOOT_RESTART,
	STMT_BOOT_LOG_GET,
	STMT_BOOT_LOG_PUT,
	STMT_BOOT_LOG_DELETE,
	STMT_ROUND_CONTEXT,
	STMT_NONCE_SPEND,
	STMT_NONCES_PRUNE,
	STMT_VERDICT_INSERT,
	STMT_VERDICT_INSERT_HOUR,
	STMT_VERDICTS_LIST,
	STMT_HOUR_ADD,
	STMT_VERDICTS_PRUNE_BOUND,
	STMT_VERDICTS_PRUNE,
	STMT_EVIDENCE_PRUNE,
	STMT_EVIDENCE_INSERT,
	STMT_EVIDENCE_BOOT_LOG,
	STMT_EVIDENCE_POLICY,
	STMT_EVIDENCE_GET,
	STMT_EVIDENCE_POLICY_GET,
	STMT_EVIDENCE_LOGS_PRUNE,
	STMT_HOURS_PRUNE,
	STMT_HOURS_LIST,
	STMT_AGENT_IDS,
	STMT_AUDIT_CURSOR,
	STMT_AUDIT_CURSOR_SET,
	STMT_AUDIT_INSERT,
	STMT_AUDIT_LIST,
	STMT_AUDIT_SIGNED_PUT,
	STMT_AUDIT_SIGNED_LIST,
	STMT_AUDIT_LAST,
	STMT_VIOLATION_NEWEST,
	STMT_VIOLATION_INSERT,
	STMT_VIOLATION_AGAIN,
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
	STMT_POLICIES_LIST,
	STMT_POLICY_DELETE,
	STMT_POLICY_DELETED_VERSION,
	STMT_POLICY_DELETION_RECORD,
	STMT_COUNTS,
	STMT_HISTORY_ADD,
	STMT_HISTORY_LIST,
	STMT_OUTBOX_ADD,
	STMT_OUTBOX_DUE,
	STMT_OUTBOX_CLAIM,
	STMT_OUTBOX_DELETE,
	STMT_OUTBOX_RETRY,
	STMT_OUTBOX_PENDING,
	STMT_PURGE_BOOT_STATE,
	STMT_PURGE_BOOT_LOG,
	STMT_PURGE_VERDICTS,
	STMT_PURGE_HOURS,
	STMT_PURGE_VIOLATIONS,
	STMT_PURGE_AMENDMENT,
	STMT_PURGE_HISTORY,
	STMT_PURGE_AGENT,
	STMT_PURGE_EVIDENCE,
	STMT_PURGE_EVIDENCE_AMENDMENT,
	STMT_PURGE_LABELS,
	STMT_REGISTRATION_ADD,
	STMT_REGISTRATION_GET,
	STMT_REGISTRATIONS_LIST,
	STMT_REGISTRATION_DELETE,
	STMT_REGISTRATION_SET_POLICY,
	STMT_POLICY_REGISTRATIONS,
	STMT_LABEL_SET,
	STMT_LABEL_ADD,
	STMT_PENDING_EXPIRE_LABELS,
	STMT_LABEL_DELETE,
	STMT_LABELS_GET,
	STMT_LABELS_ALL,
	STMT_LABELS_COUNT,
	STMT_REGISTRATION_LABELS_SET,
	STMT_LABEL_AGENTS,
	STMT_COUNT /* the number of statements */
};

/*
 * The columns of an agent's summary (STMT_AGENT_GET, STMT_AGENTS_LIST select it first); what
 * a query selects after them follows.
 */
#define STORE_AGENT_SUMMARY_NCOLS 19

struct store_statement {
	const char *what; /* for messages: "agent lookup failed" */
	const char *sql;  /* portable SQL; NULL: a fold, only in `pg` */
	const char *pg;   /* PostgreSQL's text where it differs, else NULL */
};

extern const struct store_statement store_statements[STMT_COUNT];

#endif
