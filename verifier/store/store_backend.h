/*
 * store_backend: what a store backend implements, for store.c alone (callers use store.h).
 *
 * A backend is a `struct store_ops` with a URI scheme. store_open() finds the ops by the
 * scheme and calls open() with the rest of the URI; every other store.h function is
 * store.c's: it calls the op of the same name with the backend handle (same arguments, same
 * returns and contracts as in store.h). A backend serializes the calls on its handle itself
 * and may be called from any thread. Every backend of this build is the same ops, store_sql.c
 * (the rules, written once), over an SQL driver (store_driver.h): SQLite's and PostgreSQL's
 * files are drivers; another database is one more driver.
 *
 * Each backend embeds `struct store_backend` as the first member of its own state and
 * returns a pointer to it from open(); close() frees it (NULL is never passed). Every op that
 * raises webhook events (store.h) writes them with store_event_rows() in its own transaction.
 *
 * Group commit is store.c's: it queues the rounds of concurrent store_round_commit() callers
 * and hands a batch to commit_rounds(), which writes all of them in one transaction. Each
 * round's failure is confined to that round (a savepoint or equivalent): its `ret` gets the
 * error, the others still commit. Each round is a compare-and-swap on its agent's boot state:
 * written only if the stored version is still r->prev_version (0: no row), which it then
 * raises by one; otherwise `ret` is -ESTALE and nothing of the round is written (two rounds
 * of one agent in the same batch: the second finds the first's version). A round with a nonce
 * records it as spent; one recorded before makes `ret` -EALREADY, and nothing of the round is
 * written. A failed commit sets `ret` of every round of the batch.
 * It sets `verdict_id` of every round that succeeded, and leaves `next` and `done` alone.
 */
#ifndef VERIFIER_STORE_BACKEND_H
#define VERIFIER_STORE_BACKEND_H

#include "verifier/store/store.h"

/*
 * The versions a verdict row names, from the text the agent summary selects: "POLICY PV AV"
 * (the verdict's policy, policy_version and amendment_version joined by spaces), '' for no
 * verdict or a verdict from before they were named (known false then).
 */
void store_judged_versions_parse(const char *text, struct judged_versions *out);

/*
 * What a backend's migration did to the store it opened, logged once by every backend alike:
 * a new store "created at schema version TO", an older one "upgraded from schema version FROM
 * to TO", nothing for one that was current. `where` names the store as the backend shows it.
 * A backend migrates a new store in one go, not one step per verifier, so that a verifier that
 * found it empty is the one that says it created it (store.c's).
 */
void store_schema_opened(const char *where, bool created, long from, long to);

/* The webhook URLs events are written for (store_set_webhooks()), store.c's. */
struct store_webhook_targets {
	char **urls;
	size_t n;
};

struct store_backend {
	const struct store_ops *ops;
	/* store.c's, set after open(): where events go (store_event_rows()); never NULL. */
	const struct store_webhook_targets *targets;
};

/*
 * Spent challenges (struct store_round's nonce) are kept STORE_NONCES_KEEP seconds past their
 * expiry, longer than any clock difference between verifiers, and pruned by commit_rounds()
 * at most every STORE_NONCES_PRUNE_EVERY seconds.
 */
#define STORE_NONCES_KEEP 600
#define STORE_NONCES_PRUNE_EVERY 60

/* A round waiting in the commit queue; lives on its caller's stack. */
struct store_pending_round {
	const struct store_round *r;
	struct store_pending_round *next;
	int64_t verdict_id;
	int ret;
	bool done; /* store.c's: set once the batch holding it is over */
	bool trust_changed; /* the backend's: its verdict changed the agent's trust (audited) */
	bool raised; /* the backend's: the round wrote an event into the outbox */
};

struct store_ops {
	const char *scheme; /* "sqlite" in "sqlite:PATH" */
	/* location: the URI after "SCHEME:". */
	int (*open)(const char *location, struct store_backend **out);
	void (*close)(struct store_backend *b);

	/* With the limits of store_set_enroll_limits() (never NULL). */
	/* adm NULL: no registration consulted (store_agent_enroll()). */
	int (*agent_enroll)(struct store_backend *b, const struct store_agent *a,
			    const struct store_admission *adm, int64_t now,
			    const struct store_enroll_limits *lim,
			    enum store_enroll_result *result);
	int (*registrations_add)(struct store_backend *b, const struct store_registration *regs,
				 size_t n, const char *actor, int64_t now, size_t *failed);
	int (*registration_get)(struct store_backend *b, const char *agent,
				store_registration_cb cb, void *arg);
	int (*registrations_list)(struct store_backend *b, store_registration_cb cb, void *arg);
	int (*registration_delete)(struct store_backend *b, const char *agent, const char *actor,
				   int64_t now);
	int (*agent_labels)(struct store_backend *b, const char *agent, store_label_cb cb,
			    void *arg);
	int (*labels_all)(struct store_backend *b, store_fleet_label_cb cb, void *arg);
	int (*agent_labels_change)(struct store_backend *b, const char *id,
				   const struct store_label *set, size_t nset,
				   const char *const *remove, size_t nremove, const char *actor,
				   int64_t now);
	int (*policy_assign_label)(struct store_backend *b, const char *policy,
				   const struct store_label *l, bool apply, const char *actor,
				   int64_t now, store_id_cb cb, void *arg, uint64_t *matching);
	int (*agent_get)(struct store_backend *b, const char *id, struct store_agent *out);
	int (*agent_activate)(struct store_backend *b, const char *id,
			      const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now,
			      const struct store_enroll_limits *lim);
	int (*agent_set_policy)(struct store_backend *b, const char *id, const char *policy);
	int (*agents_list)(struct store_backend *b, store_agent_cb cb, void *arg);
	int (*agents_liveness)(struct store_backend *b, store_agent_cb cb, void *arg);

	int (*boot_get)(struct store_backend *b, const char *agent, struct boot_state *out,
			uint64_t *version);
	int (*boot_log_get)(struct store_backend *b, const char *agent, struct store_boot_log *out);
	/* The amendment's name is store.c's (store_amendment_name()). */
	int (*round_context)(struct store_backend *b, const char *agent, const char *default_policy,
			     const char *amendment, struct store_round_ctx *out);
	void (*commit_rounds)(struct store_backend *b, struct store_pending_round *batch);
	int (*verdicts_list)(struct store_backend *b, const char *agent, unsigned limit,
			     store_verdict_cb cb, void *arg);
	/* Retention (store.h): one transaction each. */
	int (*verdicts_prune)(struct store_backend *b, const char *agent, unsigned keep,
			      unsigned limit, uint64_t *deleted);
	int (*counters_prune)(struct store_backend *b, int64_t before, unsigned limit,
			      uint64_t *deleted);
	int (*counters_list)(struct store_backend *b, const char *agent, int64_t since,
			     unsigned limit, store_counters_cb cb, void *arg);
	int (*evidence_logs_prune)(struct store_backend *b, int64_t before, unsigned limit,
				   uint64_t *deleted);
	int (*evidence_get)(struct store_backend *b, int64_t verdict_id,
			    struct store_evidence *out);
	int (*evidence_policy)(struct store_backend *b, const char *name, int64_t version,
			       char **json);
	int (*agent_ids)(struct store_backend *b, const char *after, unsigned limit,
			 store_agent_id_cb cb, void *arg);
	/* The audit trail (store.h). */
	int (*audit_list)(struct store_backend *b, int64_t after, unsigned limit,
			  store_audit_cb cb, void *arg);
	int (*audit_last)(struct store_backend *b, int64_t *seq, uint8_t hash[AUDIT_HASH_LEN]);
	int (*audit_signed_put)(struct store_backend *b, const struct store_audit_signed *s);
	int (*audit_signed_list)(struct store_backend *b, unsigned limit,
				 store_audit_signed_cb cb, void *arg);

	int (*violations_list)(struct store_backend *b, int state, const char *agent,
			       unsigned limit, store_violation_cb cb, void *arg);
	int (*violation_get)(struct store_backend *b, int64_t id, store_violation_cb cb,
			     void *arg);
	int (*violations_open_count)(struct store_backend *b, const char *agent,
				     uint64_t boot_number, uint64_t *total, uint64_t *in_boot);
	int (*violation_decide)(struct store_backend *b, int64_t id, enum violation_state state,
				int64_t now, const char *decision);

	/* expected: STORE_POLICY_ANY, or the version the newest must be (-ESTALE if not). */
	int (*policy_put)(struct store_backend *b, const char *name, int64_t expected,
			  const char *json, const struct store_policy_sig *sig, const char *actor,
			  int64_t now, int64_t *version);
	int (*policy_version)(struct store_backend *b, const char *name, int64_t *version);
	int (*policy_get)(struct store_backend *b, const char *name, char **json,
			  int64_t *version);
	/* signer, signature: NULL, or filled as store_policy_get_signed_version() does. */
	int (*policy_get_version)(struct store_backend *b, const char *name, int64_t version,
				  char **json, char **signer, char **signature);
	int (*policy_versions)(struct store_backend *b, const char *name,
			       store_policy_version_cb cb, void *arg);
	int (*policy_agents)(struct store_backend *b, const char *name, uint64_t *count);
	int (*policies_list)(struct store_backend *b, const char *default_policy,
			     store_policy_summary_cb cb, void *arg);
	int (*policy_delete)(struct store_backend *b, const char *name, const char *actor,
			     int64_t now);

	int (*counts)(struct store_backend *b, struct store_counts *out);

	/* Lifecycle, liveness, the webhook outbox. */
	int (*agent_retire)(struct store_backend *b, const char *id, int64_t now, const char *actor,
			    bool purge);
	int (*agent_reset)(struct store_backend *b, const char *id, int64_t now, const char *actor);
	int (*agent_history)(struct store_backend *b, const char *id, unsigned limit,
			     store_agent_event_cb cb, void *arg);
	int (*agent_mark_stale)(struct store_backend *b, const char *id, int64_t last_seen,
				uint32_t interval, int64_t stale_after, int64_t now);
	int (*outbox_claim)(struct store_backend *b, const char *target, int64_t now, int64_t lease,
			    unsigned limit, store_outbox_cb cb, void *arg);
	int (*outbox_settle)(struct store_backend *b, const struct store_outbox_settle *v,
			     size_t n);
	int (*outbox_pending)(struct store_backend *b, const char *target, uint64_t *count);

	int (*backup)(struct store_backend *b, int *fd, uint64_t *size);
};

/* The backends store_open() knows. */
extern const struct store_ops store_sqlite_ops;
extern const struct store_ops store_pg_ops;

/* What a backend finds in its enrollment transaction, after deleting expired pendings. */
struct store_enroll_facts {
	bool ek_active_elsewhere;  /* an active agent of another id has a's EK */
	uint64_t ek_pending_elsewhere; /* pending agents of other ids with a's EK */
	uint64_t pending;          /* pending agents in all */
};

/*
 * The enrollment rule every backend applies inside its transaction: what enrolling `a` does
 * given the agent stored under its id (`cur`, NULL if none), the facts about its EK and the
 * limits.
 */
enum store_enroll_result store_enroll_decide(const struct store_agent *cur,
					     const struct store_agent *a,
					     const struct store_enroll_facts *f,
					     const struct store_enroll_limits *lim);

/*
 * Events for the webhooks. A backend raises one inside the transaction of the change
 * it reports (store.h says which call raises which) and writes the rows store_event_rows()
 * gives: one per webhook target, each with the event's id and body, due at once. No target, no
 * row (and nothing rendered).
 */
enum store_event_type {
	STORE_EVENT_UNTRUSTED,  /* "agent.untrusted": verdict_id, boot_number, reasons_json */
	STORE_EVENT_VIOLATION,  /* "violation.opened": violation_id, reason, path..., recurs */
	STORE_EVENT_STALE,      /* "agent.stale": last_seen, interval, stale_after */
	STORE_EVENT_ENROLLED,   /* "agent.enrolled": ak_name */
	STORE_EVENT_RETIRED,    /* "agent.retired": actor, purged */
	STORE_EVENT_RESET,      /* "agent.reset": actor */
};
const char *store_event_type_str(enum store_event_type t);

/*
 * The audit trail's head as the transaction raising an event saw it when it wrote the event
 * (with the change's own record if that was appended first): every event carries it, so that
 * receivers can publish it (verifier(8), WEBHOOKS). signed_*: the newest head the verifier's
 * key signed (has_signed false: none yet).
 */
#define STORE_EVENT_SIG_MAX 160u  /* a DER ECDSA P-256 signature is at most 72 bytes */
#define STORE_EVENT_KEY_MAX 256u  /* a DER P-256 SubjectPublicKeyInfo is 91 */
struct store_event_audit {
	int64_t seq; /* 0: the trail is empty */
	uint8_t hash[AUDIT_HASH_LEN];
	bool has_signed;
	int64_t signed_seq;
	uint8_t signed_hash[AUDIT_HASH_LEN];
	int64_t signed_time;
	uint8_t signature[STORE_EVENT_SIG_MAX];
	size_t signature_len;
	uint8_t public_key[STORE_EVENT_KEY_MAX];
	size_t public_key_len;
};

struct store_event {
	enum store_event_type type;
	const char *agent;
	int64_t time;
	int64_t verdict_id;
	uint64_t boot_number;
	const char *reasons_json;   /* the verdict's reasons (store_round.reasons_json) */
	int64_t violation_id;
	const char *reason;
	const char *path;           /* raw bytes, path_len of them */
	size_t path_len;
	const char *digest;
	uint64_t entry;
	uint64_t count;
	int64_t recurs;
	int64_t last_seen;
	uint32_t interval;
	int64_t stale_after;
	const uint8_t *ak_name;
	size_t ak_name_len;
	const char *actor;
	bool purged;
	const struct store_event_audit *audit; /* NULL: the body carries no audit_head */
};

struct store_event_rows {
	char id[STORE_EVENT_ID_MAX + 1];
	char *body;                  /* JSON, malloc'd */
	const char *const *targets;  /* the webhook URLs: one row each */
	size_t ntargets;
};
/* 0 with *out to write (ntargets 0: nothing to write), -ENOMEM, -EIO (no randomness). */
int store_event_rows(const struct store_backend *b, const struct store_event *e,
		     struct store_event_rows *out);
void store_event_rows_release(struct store_event_rows *r);

#endif
