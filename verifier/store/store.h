/*
 * store: the verifier's durable state behind one interface (agents, boot state, verdicts,
 * violations, policies; outstanding challenges need no durability and live in nonces.h).
 *
 * Backends: store_open() takes a URI and picks the backend by its scheme; "sqlite:PATH" is
 * SQLite (store_sqlite.c), the embedded default; "postgresql://USER@HOST:PORT/DB" (a libpq URI)
 * is PostgreSQL (store_pg.c), which several verifiers may share. What every backend shares (the group commit, state names, the
 * enrollment decision) is in store.c; a backend implements struct store_ops
 * (store_backend.h) in its own file. A backend keeps a schema version and upgrades an older
 * database when it opens it; it refuses one newer than itself.
 *
 * Durability: every function that changes state has committed (synchronous=FULL) when it
 * returns 0. The evidence path relies on this: store_round_commit() stores the new boot state,
 * the verdict and the violations in one transaction before the verdict is acknowledged.
 *
 * Concurrency: a store may be used from any number of threads at once; calls are serialized.
 * store_round_commit() blocks its caller until the transaction holding its round committed:
 * rounds from concurrent callers share one transaction and one fsync (group commit), so it
 * pays to call it from many threads at once.
 *
 * Returns: 0 or -errno. -ENOENT "no such row", -EIO a backend failure (logged with the backend's
 * own code), -EINVAL bad arguments or a stored row that fails its own checks.
 *
 * Ownership: structs filled by the store own their malloc'd buffers; release each with its
 * *_release() (NULL-safe, idempotent). Row callbacks get rows valid only during the call; a
 * callback returning non-zero stops the listing and that value is returned.
 */
#ifndef VERIFIER_STORE_H
#define VERIFIER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/limits.h"
#include "verifier/store/audit.h"
#include "verifier/store/boot_state.h"

#define STORE_CRED_DIGEST_LEN 32u /* SHA-256 of the MakeCredential secret */

struct store;
struct store_round_evidence;

enum agent_state {
	AGENT_PENDING = 0, /* enrolled, credential not yet activated: AK not trusted */
	AGENT_ACTIVE,      /* activated: AK trusted */
	AGENT_RETIRED,     /* retired by an operator: evidence refused, EK free, history kept */
};
const char *agent_state_str(enum agent_state s);
/* The state a store row names ("active", "retired"; anything else is pending). */
enum agent_state agent_state_of(const char *s);

struct store_agent {
	char id[LIMIT_AGENT_ID + 1];
	enum agent_state state;
	uint8_t *ek_pub;   /* marshalled TPM2B_PUBLIC */
	size_t ek_pub_len;
	uint8_t *ek_cert;  /* DER */
	size_t ek_cert_len;
	uint8_t *ak_pub;   /* marshalled TPM2B_PUBLIC */
	size_t ak_pub_len;
	uint8_t ak_name[LIMIT_TPM_NAME];
	size_t ak_name_len;
	uint8_t cred_digest[STORE_CRED_DIGEST_LEN];
	char policy[LIMIT_POLICY_NAME + 1]; /* "" = the default policy */
	int64_t created_at;
	int64_t activated_at;   /* 0 while pending */
	/* Summary columns, filled by store_agent_get()/store_agents_list(); ignored on write. */
	int64_t retired_at;      /* when an operator retired it; 0: not retired */
	int64_t reset_at;        /* when an operator allowed its next enrollment a new EK and AK;
				  * 0: not allowed (store_agent_reset()) */
	uint32_t interval;       /* seconds between rounds its attestd reported; 0: none yet */
	int64_t stale_event_for; /* the last-seen time agent.stale was raised for; 0: never */
	uint64_t boot_number;
	uint64_t next_entry;
	int64_t last_verdict_at; /* 0: none */
	int last_trusted;        /* -1: no verdict yet, 0 untrusted, 1 trusted */
	uint64_t open_violations;
	/* What judged the boot as of the last verdict (known false: no verdict, or one from
	 * before verdicts named it), and the newest version of the agent's amendment (0: none);
	 * with the assigned policy's newest version they say whether it awaits re-judgement. */
	struct judged_versions judged;
	int64_t amendment_version;
	int64_t policy_version; /* of the policy it names; 0 when it names none (the default's) */
	/* The last verdict's reasons as stored (a JSON array, "[]" for none): filled by
	 * store_agents_list() only, valid during its callback (one query for the whole fleet);
	 * NULL from store_agent_get(). */
	const char *last_reasons_json;
};
void store_agent_release(struct store_agent *a);

/*
 * Opens the store a URI names: "sqlite:PATH" (the file is created if missing) or
 * "postgresql://..." (the database must exist; its tables are created). Upgrades the
 * schema of an older database first. -EINVAL (logged) for a URI without a known scheme,
 * -EPROTO for a database newer than this verifier, else what the backend returns.
 */
int store_open(const char *uri, struct store **out);
/* NULL-safe. */
void store_close(struct store *st);

/* Agents ------------------------------------------------------------------------------- */

enum store_enroll_result {
	STORE_ENROLL_NEW = 0,       /* inserted as pending */
	STORE_ENROLL_REFRESHED,     /* pending with the same EK: AK and credential replaced */
	STORE_ENROLL_ALREADY,       /* active with the same EK and AK: nothing changed */
	STORE_ENROLL_CONFLICT,      /* id taken by another EK, or active with another AK */
	STORE_ENROLL_EK_IN_USE,     /* the EK is active under another id: one TPM, one agent */
	STORE_ENROLL_EK_PENDING_FULL, /* the EK has max_pending_per_ek pending under other ids */
	STORE_ENROLL_PENDING_FULL,  /* max_pending enrollments are pending in all */
	STORE_ENROLL_RETIRED,       /* the id was retired and not reset: refused */
	STORE_ENROLL_REPLACED,      /* reset by an operator: the id now holds this EK and AK,
				     * pending; its boot session starts over, its history stays */
	STORE_ENROLL_NOT_REGISTERED, /* admission required and the id has no registration */
	STORE_ENROLL_EK_NOT_REGISTERED, /* the id's registration names another EK */
};

/*
 * What bounds pending enrollments (enrolled, not activated: anyone holding a trusted EK
 * certificate can make one, without the TPM). Defaults: STORE_PENDING_TTL_DEFAULT and the
 * caps of proto/limits.h; store_set_enroll_limits() changes them before the store is used.
 */
struct store_enroll_limits {
	int64_t pending_ttl;         /* seconds from (re-)enrollment; older ones are expired */
	unsigned max_pending_per_ek; /* pending enrollments of one EK under other ids */
	unsigned max_pending;        /* pending enrollments in all */
};
#define STORE_PENDING_TTL_DEFAULT 600
void store_set_enroll_limits(struct store *st, const struct store_enroll_limits *lim);

/*
 * Decides and records an enrollment atomically (two concurrent enrollments of one id cannot
 * both win). Expired pending enrollments are deleted first, in the same transaction. Only NEW,
 * REFRESHED and REPLACED change stored state (and the deletion of expired ones); NEW and
 * REPLACED add a row to the agent's history (store_agent_history()).
 */
int store_agent_enroll(struct store *st, const struct store_agent *a, int64_t now,
		       enum store_enroll_result *result);

/*
 * What admission knows of the EK an enrollment brings (its certificate was verified to certify
 * ek_pub before): the two SHA-256 digests a registration may name it by (store_ek_kind).
 */
struct store_admission {
	bool required;                 /* --admission registered: an id needs a registration */
	uint8_t ek_pub_sha256[32];     /* of ek_pub, the marshalled TPM2B_PUBLIC as sent */
	uint8_t ek_spki_sha256[32];    /* of the EK certificate's DER SubjectPublicKeyInfo */
};
/*
 * The same, with admission decided in the enrollment's transaction: an id with a registration
 * enrolls only with the EK it names (STORE_ENROLL_EK_NOT_REGISTERED), whether or not
 * adm->required; without one it is refused only if adm->required
 * (STORE_ENROLL_NOT_REGISTERED). Either refusal stores nothing. A new agent (STORE_ENROLL_NEW)
 * of a registered id starts with the registration's policy and labels. store_agent_enroll()
 * is this with adm NULL: no registration is consulted.
 */
int store_agent_enroll_admitted(struct store *st, const struct store_agent *a,
				const struct store_admission *adm, int64_t now,
				enum store_enroll_result *result);

int store_agent_get(struct store *st, const char *id, struct store_agent *out);

/*
 * Marks a pending agent active if its stored credential digest still equals `digest` (the
 * caller compared the secret in constant time). -ESTALE if the agent is unknown (or its
 * expired enrollment was deleted), re-enrolled in between or is active already, -ETIMEDOUT if
 * the enrollment expired, -EEXIST if another agent with the same EK is active (one TPM, one
 * agent). Activation is the agent.enrolled event and a row of its history.
 */
int store_agent_activate(struct store *st, const char *id,
			 const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now);

/*
 * Assigns a policy by name ("" = default). -ENOENT unknown agent, -ENODATA no policy of that
 * name (nothing changed). Serialized with store_policy_delete(): a policy is never deleted
 * while an assignment to it commits. An id that is registered (store_registrations_add()) and
 * not enrolled yet is assigned through its registration: it enrolls with that policy. The
 * registration of an enrolled agent follows its assignment too (a purged agent that enrolls
 * again starts with it).
 */
int store_agent_set_policy(struct store *st, const char *id, const char *policy);

typedef int (*store_agent_cb)(void *arg, const struct store_agent *a);
/* Every agent ordered by id; blobs are not loaded (lengths 0, pointers NULL). */
int store_agents_list(struct store *st, store_agent_cb cb, void *arg);
/*
 * Every active agent with only what its liveness needs (id, state, activated_at,
 * last_verdict_at, interval, stale_event_for; the rest zero): the stale scan runs once a
 * second over the whole fleet, and the summary's other columns cost it most of its time.
 */
int store_agents_liveness(struct store *st, store_agent_cb cb, void *arg);

/* Registrations -------------------------------------------------------------------------- */

/*
 * Admission (verifier(8), ADMISSION): an operator registers an agent id before it enrolls,
 * with what names its EK, and the policy and labels it starts with. A registration binds the
 * id to that EK for good (until it is deleted): an enrollment of the id with another EK is
 * refused in either admission mode; with --admission registered an id without one is refused.
 */
enum store_ek_kind {
	STORE_EK_PUBLIC = 0, /* SHA-256 of the EK's marshalled TPM2B_PUBLIC (tpm2_readpublic -o) */
	STORE_EK_CERT,       /* SHA-256 of the DER SubjectPublicKeyInfo of its EK certificate */
};
const char *store_ek_kind_str(enum store_ek_kind k); /* "public", "cert" */

struct store_registration {
	const char *agent;
	enum store_ek_kind ek_kind;
	uint8_t ek_sha256[32];
	const uint8_t *ek_cert; /* DER, kept for the operator when given (NULL, 0: none) */
	size_t ek_cert_len;
	const char *policy;     /* "" = the default policy */
	const char *labels;     /* a JSON object of text values, canonical (sorted keys) */
	const char *actor;      /* read only: who registered it */
	int64_t created_at;     /* read only */
};

/*
 * Registers n agents in one transaction, all or none: -EEXIST if registrations[*failed]'s id
 * is registered already (or twice in the list), -ENODATA if it names a policy that does not
 * exist; nothing is stored then. Each registration is a record of the audit trail
 * ("agent.registered", by actor). An id that is enrolled already may be registered: that binds
 * its EK from then on, its policy and labels are not changed.
 */
int store_registrations_add(struct store *st, const struct store_registration *regs, size_t n,
			    const char *actor, int64_t now, size_t *failed);
typedef int (*store_registration_cb)(void *arg, const struct store_registration *r);
/* Calls cb once with the registration of `agent`; -ENOENT if none. */
int store_registration_get(struct store *st, const char *agent, store_registration_cb cb,
			   void *arg);
/* Every registration, by id. */
int store_registrations_list(struct store *st, store_registration_cb cb, void *arg);
/* Deletes the registration of `agent` (the agent, if enrolled, stays); audited
 * ("agent.unregistered"). -ENOENT if none. */
int store_registration_delete(struct store *st, const char *agent, const char *actor,
			      int64_t now);

/* Labels ------------------------------------------------------------------------------- */

/* An agent's labels (KEY=VALUE, proto/labels.h), by key; none for an unknown agent. */
typedef int (*store_label_cb)(void *arg, const char *key, const char *value);
int store_agent_labels(struct store *st, const char *agent, store_label_cb cb, void *arg);
/* Every enrolled agent's labels, by agent then key (one query for the fleet list). */
typedef int (*store_fleet_label_cb)(void *arg, const char *agent, const char *key,
				    const char *value);
int store_labels_all(struct store *st, store_fleet_label_cb cb, void *arg);

/*
 * Changes the labels of agent `id` in one transaction: each set[i] (keys and values checked by
 * the caller, proto/labels.h) is added or replaced, each remove[i] deleted (one it lacks is no
 * error). An id that is registered and not enrolled has its registration's labels changed (it
 * enrolls with them); an enrolled agent's registration, if any, follows too. -ENOENT if the id
 * is neither, -E2BIG if it would have more than LIMIT_LABELS (nothing changed). Audited
 * ("agent.labels", by actor).
 */
struct store_label {
	const char *key;
	const char *value;
};
int store_agent_labels_change(struct store *st, const char *id, const struct store_label *set,
			      size_t nset, const char *const *remove, size_t nremove,
			      const char *actor, int64_t now);

/*
 * Assigns policy `policy` ("" = the default) to every enrolled agent labelled key=value that is
 * not assigned it yet, in one transaction (apply), or only says which (!apply): cb is called
 * with each such agent's id, in id order, and *matching gets how many agents have the label in
 * all. Each assignment is audited ("agent.policy", with the label) and an agent's registration
 * follows. -ENODATA if no policy has that name (nothing changed). Serialized with
 * store_policy_delete() as store_agent_set_policy() is.
 */
typedef int (*store_id_cb)(void *arg, const char *id);
int store_policy_assign_label(struct store *st, const char *policy, const struct store_label *l,
			      bool apply, const char *actor, int64_t now, store_id_cb cb,
			      void *arg, uint64_t *matching);

/* Boot state and rounds ------------------------------------------------------------------ */

/*
 * The stored state, or a zeroed one (started = false) if the agent has none. *version (if not
 * NULL) gets the state's version for store_round_commit()'s compare-and-swap: 0 when there is
 * none, one more with every round committed.
 */
int store_boot_get(struct store *st, const char *agent, struct boot_state *out,
		   uint64_t *version);

/*
 * A violation a round found (borrowed for the call): one (reason, path, digest) and how many of
 * the round's entries it stands for. Zeroes mean the simple case: path_len 0 takes strlen(path),
 * count 0 is one entry, last_entry below entry is `entry`.
 */
struct store_round_violation {
	uint64_t entry;            /* the first of the round's entries */
	const char *reason;        /* its wire name: not_in_allowlist, violation_entry, ... */
	const char *path;          /* raw bytes as IMA recorded them, not necessarily UTF-8 */
	const char *digest;        /* "alg:hex" */
	const char *template_name;
	size_t path_len;
	uint64_t count;
	uint64_t last_entry;       /* the last of the round's entries */
};

/*
 * The firmware event log the verifier holds for an agent (one per agent: the newest it sent),
 * what the last judgement of it by a boot policy covered, and its summary for operators.
 */
struct store_boot_log {
	uint8_t *log;
	size_t log_len;
	uint8_t sha256[32];    /* of log: the challenge names it, so the agent resends only a change */
	char *cmdline;         /* the kernel command line sent with it; NULL: none */
	uint64_t judged_boot;  /* the boot session of the last judgement; 0: never judged */
	uint8_t judged_key[32];
	char *summary;         /* JSON object text (boot_check.h); NULL: none */
	int64_t received_at;   /* when the agent sent this log */
};
void store_boot_log_release(struct store_boot_log *b);

/*
 * What one attestation round reads of an agent, in one call (one statement, so one network
 * round trip on PostgreSQL; several verifiers see each other's changes through it): the
 * agent's state, AK name and policy; its boot state and that state's version (0: none); its
 * open violations, in all and in the boot state's boot; whether a firmware log is stored and
 * its digest (the log itself: store_boot_log_get()); the newest versions of its policy (named
 * `default_policy` when it names none) and of its amendment (0: no such policy). -ENOENT for an
 * unknown agent; -EINVAL if its boot state does not decode.
 */
struct store_round_ctx {
	enum agent_state state;
	char policy[LIMIT_POLICY_NAME + 1]; /* as stored: "" = the default */
	uint8_t ak_name[LIMIT_TPM_NAME];
	size_t ak_name_len;
	struct boot_state boot;
	uint64_t version;
	uint64_t open_violations;
	uint64_t open_violations_in_boot;
	bool has_boot_log;
	uint8_t boot_log_sha256[32];
	int64_t policy_version;
	int64_t amendment_version;
};
int store_round_context(struct store *st, const char *agent, const char *default_policy,
			struct store_round_ctx *out);

/* The agent's stored event log; -ENOENT if it has none. */
int store_boot_log_get(struct store *st, const char *agent, struct store_boot_log *out);

struct store_round {
	const char *agent;
	uint64_t prev_version; /* store_boot_get()'s version of the state this round started from */
	const struct boot_state *next;
	const struct store_boot_log *boot_log; /* written with the round; NULL: unchanged */
	bool trusted;
	const char *reasons_json; /* JSON array, as in verdict_response */
	uint64_t next_offset;
	/* The versions that judged the boot as `next` folds it (NULL: unknown), named by the verdict */
	const struct judged_versions *judged;
	const struct store_round_violation *violations;
	size_t nviolations;
	uint32_t interval; /* seconds between rounds the agent reported with it; 0: as stored */
	int64_t now;
	/*
	 * The challenge this round answered (verifier/store/cluster.h), recorded as spent in the round's
	 * transaction so that no verifier sharing the store accepts it again; nonce_len 0 when the
	 * verifier alone keeps its challenges (nonces.h). The record is kept until a while after
	 * nonce_expires.
	 */
	const uint8_t *nonce;
	size_t nonce_len;
	int64_t nonce_expires;
	/* The evidence kept with the verdict ("Evidence" below); NULL: none is kept. */
	const struct store_round_evidence *evidence;
	/* Announced with store_round_announce(): the commit ends the announcement. */
	bool announced;
	/*
	 * Out, may be NULL: set once the round committed, true when it wrote an event into the
	 * webhook outbox (the caller wakes the delivery for it; most untrusted rounds raise none).
	 */
	bool *raised;
};

/*
 * One transaction: boot state, verdict, violations, the agent's reported interval and the
 * webhook events they raise (agent.untrusted when its last verdict was trusted or it had none,
 * violation.opened for each new open row). A compare-and-swap on the boot state's version: if
 * another round of the agent committed since r->prev_version was read, nothing is written and
 * -ESTALE is returned (two rounds of one agent in flight: the slower one must not overwrite the
 * newer state). -EKEYREVOKED, nothing written, if the agent is no longer active (retired,
 * purged or re-enrolled after a reset while the round was judged). A round whose r->nonce was
 * recorded as spent before (by any verifier on this store) writes nothing either: -EALREADY.
 *
 * A violation is one row per agent, reason, path and digest while it is open: seen again, its
 * count and last entry grow. Once an operator decided it (approved, dismissed), a later
 * occurrence is a new event: a new open row whose `recurs` names the decided one. Entries the
 * verifier was sent again (the same boot, at or before the row's last entry: a tail the quote
 * did not cover yet), and boot findings of a boot judged again, are not new occurrences of an
 * open or dismissed row; of an approved one they are (approval taught a policy to allow them,
 * so they come back only because that was rolled back).
 */
int store_round_commit(struct store *st, const struct store_round *r, int64_t *verdict_id);

/*
 * What the group commit waits for: a round whose evidence is being judged, so that its
 * store_round_commit() follows soon. A leader about to commit first waits, at most
 * STORE_GATHER_MAX_US, until the rounds announced when it took the lead have been queued (or
 * withdrawn), so that its one transaction and one fsync cover them too, instead of one more
 * each; it never waits when none is announced (a lone round commits at once). Every
 * store_round_announce() is ended exactly once: by store_round_commit() of a round with
 * `announced` set, or by store_round_withdraw() (the round ends without a commit).
 */
#define STORE_GATHER_MAX_US 2000
void store_round_announce(struct store *st);
void store_round_withdraw(struct store *st);
/* The bound of that wait in microseconds (default STORE_GATHER_MAX_US; tests lengthen it). */
void store_set_gather_max(struct store *st, unsigned us);

struct store_verdict {
	int64_t id;
	char agent[LIMIT_AGENT_ID + 1];
	uint64_t boot_number;
	int64_t time;
	bool trusted;
	const char *reasons_json;
	uint64_t next_offset;
	struct judged_versions judged; /* known false for verdicts from before they named it */
};
typedef int (*store_verdict_cb)(void *arg, const struct store_verdict *v);
/* Newest first, at most `limit`. */
int store_verdicts_list(struct store *st, const char *agent, unsigned limit,
			store_verdict_cb cb, void *arg);

/* Retention ------------------------------------------------------------------------------ */

/*
 * What history is kept (docs/design.md, "Retention"). Every verdict that changed its agent's
 * trust or reasons from the verdict before it (and each agent's first) is kept for good, and
 * so are violations, decisions, policy versions and lifecycle events; of the other verdicts,
 * each agent's newest `verdicts_keep` (0: every verdict). Each round is also counted in its
 * agent's hour (rounds, trusted, untrusted); hours older than `counters_age` seconds go (0:
 * none). Pruning runs in the background in small transactions (service/retention.h).
 */
#define STORE_VERDICTS_KEEP_DEFAULT 360 /* an hour of rounds at a 10 s interval */
#define STORE_COUNTERS_DAYS_DEFAULT 90
#define STORE_HOUR 3600

/* The first second of the hour holding `t`. */
static inline int64_t store_hour_of(int64_t t)
{
	return t - ((t % STORE_HOUR) + STORE_HOUR) % STORE_HOUR;
}

/*
 * Deletes, in one transaction, at most `limit` verdicts of agent `agent` that changed nothing
 * and are older than its `keep` newest, oldest first; *deleted says how many (fewer than
 * limit: none is left to prune). -EINVAL for keep or limit 0.
 */
int store_verdicts_prune(struct store *st, const char *agent, unsigned keep, unsigned limit,
			 uint64_t *deleted);

/* Deletes at most `limit` hourly counters of hours before `before`, oldest first. */
int store_counters_prune(struct store *st, int64_t before, unsigned limit, uint64_t *deleted);

struct store_counters {
	int64_t hour; /* its first second */
	uint64_t rounds;
	uint64_t trusted;
	uint64_t untrusted;
};
typedef int (*store_counters_cb)(void *arg, const struct store_counters *c);
/* Agent `agent`'s hours from `since` on, newest first, at most limit. */
int store_counters_list(struct store *st, const char *agent, int64_t since, unsigned limit,
			store_counters_cb cb, void *arg);

typedef int (*store_agent_id_cb)(void *arg, const char *id);
/* At most `limit` agent ids after `after` ("" or NULL: from the first), in order: a cheap walk
 * over the fleet a page at a time. */
int store_agent_ids(struct store *st, const char *after, unsigned limit, store_agent_id_cb cb,
		    void *arg);

/* Evidence ------------------------------------------------------------------------------- */

/*
 * What a round was judged from, kept with its verdict so that the verdict can be reached again
 * offline (verifier/decision/evidence_record.h; which rounds keep it is the verifier's
 * --evidence-keep). The record lives and dies with its verdict: it is deleted only with it
 * (retention, store_verdicts_prune(), in the same transaction; a purge), so a verdict kept
 * for good keeps its evidence for good. What records name is kept once: the AK beside each
 * record (an agent re-enrolled later has another), one copy of each firmware event log
 * (by SHA-256; a copy no record names is swept by store_evidence_logs_prune()) and of each
 * policy and amendment version (kept like the policy history, so a policy deleted later
 * stays provable; a purge drops its agent's amendment copies).
 */
struct store_round_evidence {
	const char *record;              /* the stored form (evidence_record_encode()) */
	const uint8_t *boot_log_sha256;  /* the event log the round judged; NULL: none */
	const char *policy;              /* the policy that judged it (NULL: none) ... */
	int64_t policy_version;          /* ... at this version (0: none) */
	int64_t amendment_version;       /* the agent's amendment's (0: none) */
};

/* A kept record as store_evidence_get() reads it (owned: store_evidence_release()). */
struct store_evidence {
	char *record;
	uint8_t *ak_pub;
	size_t ak_pub_len;
	uint8_t *boot_log;   /* NULL: it names none, or its copy is missing */
	size_t boot_log_len;
};
/* -ENOENT: no evidence is kept for verdict_id (none was, or the verdict was pruned). */
int store_evidence_get(struct store *st, int64_t verdict_id, struct store_evidence *out);
void store_evidence_release(struct store_evidence *e);
/* The kept copy of policy (or amendment) `name` at `version` (caller frees); -ENOENT. */
int store_evidence_policy(struct store *st, const char *name, int64_t version, char **json);
/*
 * Deletes at most `limit` event log copies that no record names and no round used since
 * `before` (a round naming one in a transaction not committed yet has just used it).
 */
int store_evidence_logs_prune(struct store *st, int64_t before, unsigned limit,
			      uint64_t *deleted);

/* Audit trail ---------------------------------------------------------------------------- */

/*
 * Every operator action that changed something (a violation decided, a policy version written
 * by a put, a rollback or an approval, a policy deleted, a policy assigned, an agent retired, purged or reset)
 * and every change of an agent's trust (a round whose verdict is the agent's first or turns
 * its trust) is appended to a hash chain (audit.h) in the transaction of the change itself.
 */
typedef int (*store_audit_cb)(void *arg, const struct audit_record *r);
/* Records after seq `after`, in seq order, at most limit (valid during the call). */
int store_audit_list(struct store *st, int64_t after, unsigned limit, store_audit_cb cb,
		     void *arg);
/* The newest record's seq and hash; seq 0 (hash zeros) for an empty trail. */
int store_audit_last(struct store *st, int64_t *seq, uint8_t hash[AUDIT_HASH_LEN]);

/* A head of the chain signed by the verifier's audit key (service/audit_sign.h). */
struct store_audit_signed {
	int64_t seq;
	uint8_t hash[AUDIT_HASH_LEN];
	int64_t time;
	const uint8_t *signature;  /* DER ECDSA */
	size_t signature_len;
	const uint8_t *public_key; /* DER SubjectPublicKeyInfo */
	size_t public_key_len;
};
/* Stores a signed head (a seq signed before is kept as it was). */
int store_audit_signed_put(struct store *st, const struct store_audit_signed *s);
typedef int (*store_audit_signed_cb)(void *arg, const struct store_audit_signed *s);
/* Signed heads, newest first, at most limit. */
int store_audit_signed_list(struct store *st, unsigned limit, store_audit_signed_cb cb,
			    void *arg);

/* Violations ----------------------------------------------------------------------------- */

enum violation_state {
	VIOLATION_OPEN = 0,
	VIOLATION_APPROVED,
	VIOLATION_DISMISSED,
};
const char *violation_state_str(enum violation_state s);
/* -1 if the text names no state. */
int violation_state_from_str(const char *s);

struct store_violation {
	int64_t id;
	const char *agent;
	uint64_t boot_number;      /* of its last occurrence */
	uint64_t entry;            /* its last occurrence's entry */
	const char *path;          /* raw bytes (path_len of them, NUL after), maybe not UTF-8 */
	size_t path_len;
	const char *digest;
	const char *template_name;
	const char *reason;
	int64_t first_seen;
	int64_t last_seen;
	uint64_t count;
	enum violation_state state;
	int64_t recurs;            /* the decided violation this one recurred after, or 0 */
	int64_t decided_at;        /* 0 while open */
	const char *decision;      /* what the decision did ("" while open) */
};
typedef int (*store_violation_cb)(void *arg, const struct store_violation *v);
/* state < 0: any state; agent NULL: every agent. Newest last_seen first, at most limit. */
int store_violations_list(struct store *st, int state, const char *agent, unsigned limit,
			  store_violation_cb cb, void *arg);
/* Calls cb once with violation id; -ENOENT unknown id. */
int store_violation_get(struct store *st, int64_t id, store_violation_cb cb, void *arg);
/* Violations of this agent that no operator approved or dismissed yet: *total of every boot,
 * *in_boot of boot `boot_number`. */
int store_violations_open_count(struct store *st, const char *agent, uint64_t boot_number,
				uint64_t *total, uint64_t *in_boot);
/*
 * An operator's decision on an open violation: its state (approved or dismissed), when, and
 * what it did (text kept with it). -ENOENT unknown id, -EALREADY decided already (a decision
 * is never replaced; a recurrence opens a new violation).
 */
int store_violation_decide(struct store *st, int64_t id, enum violation_state state, int64_t now,
			   const char *decision);

/* Policies ------------------------------------------------------------------------------- */

/*
 * Stores a new version of a policy unless the newest version has the same JSON text (and the
 * same signature). *version gets the version now current.
 */
int store_policy_put(struct store *st, const char *name, const char *json, const char *actor,
		     int64_t now, int64_t *version);
/*
 * What a signed version keeps of its DSSE envelope (proto/dsse.h): `signer`, the keyid of the
 * --policy-signers key that verified it ("" when no key was configured to check it), and
 * `signature`, the envelope without its payload as JSON text ({"payloadType", "signatures"}):
 * the payload is the version's JSON byte for byte, so the envelope can be made whole again and
 * checked later (a rollback checks it against the signers of that time).
 */
struct store_policy_sig {
	const char *signer;
	const char *signature;
};
/*
 * The same, only if the newest version is still `expected` (0: the policy has none yet), in
 * one transaction: -ESTALE if another writer stored a version since (nothing written, *version
 * gets the newest). A writer that read the policy to change it (an approval adds to it) uses
 * this, so that it never stores its change over a text it did not read.
 */
#define STORE_POLICY_ANY (-1) /* backends: no version expected (store_policy_put()) */
int store_policy_put_if(struct store *st, const char *name, int64_t expected, const char *json,
			const char *actor, int64_t now, int64_t *version);
/* Either of the above (expected STORE_POLICY_ANY: no expectation) for a signed version; sig
 * NULL is an unsigned one. */
int store_policy_put_signed(struct store *st, const char *name, int64_t expected,
			    const char *json, const struct store_policy_sig *sig, const char *actor,
			    int64_t now, int64_t *version);
/* The newest version's number alone: cheap, for callers that cache parsed policies. -ENOENT
 * if none. */
int store_policy_version(struct store *st, const char *name, int64_t *version);
/* The newest version's JSON (caller frees). -ENOENT if none. */
int store_policy_get(struct store *st, const char *name, char **json, int64_t *version);
/* Version `version`'s JSON (caller frees). -ENOENT if the policy has no such version. */
int store_policy_get_version(struct store *st, const char *name, int64_t version, char **json);
/* The same with what it keeps of its signature (store_policy_sig: both "" when unsigned; the
 * caller frees *signer and *signature). */
int store_policy_get_signed_version(struct store *st, const char *name, int64_t version,
				    char **json, char **signer, char **signature);

/* One version of a policy, for its history. */
struct store_policy_version {
	int64_t version;
	const char *actor;  /* who wrote it and why: "operator", "command line (FILE)", ... */
	int64_t time;
	uint64_t bytes;     /* length of its JSON */
	bool signed_;       /* it came in a DSSE envelope (store_policy_sig) */
	const char *signer; /* the keyid that verified it; "" unsigned, or signed but unchecked */
};
typedef int (*store_policy_version_cb)(void *arg, const struct store_policy_version *v);
/* Every version of a policy, newest first. 0 (no call at all for an unknown name). */
int store_policy_versions(struct store *st, const char *name, store_policy_version_cb cb,
			  void *arg);
/* How many agents are assigned policy `name`, spelt as agents store it ("" for the default). */
int store_policy_agents(struct store *st, const char *name, uint64_t *count);

/* One named policy (amendments are not listed): its newest version and who wrote it. */
struct store_policy_summary {
	const char *name;
	int64_t version;
	int64_t time;
	const char *actor;
	uint64_t agents; /* assigned it; for default_policy also the agents that name none */
};
typedef int (*store_policy_summary_cb)(void *arg, const struct store_policy_summary *p);
/* Every named policy, by name. default_policy: the name agents that name none are judged by. */
int store_policies_list(struct store *st, const char *default_policy,
			store_policy_summary_cb cb, void *arg);

/*
 * Deletes policy `name` and every version of it, only while no agent (nor any registration)
 * is assigned it, in one
 * transaction that an assignment (store_agent_set_policy()) cannot interleave with: -EBUSY if
 * one is (nothing deleted), -ENOENT if there is no such policy (an amendment is none). The
 * deletion is recorded (`actor`, `now`, its newest version): a policy written again under the
 * name goes on from that version, so that a (name, version) never names two texts (the
 * policy caches of every verifier, the versions a verdict names). The caller refuses the
 * default policy (agents that name none use it).
 */
int store_policy_delete(struct store *st, const char *name, const char *actor, int64_t now);

/*
 * An agent's amendment (the approvals an operator scoped to that one agent) is a policy of its
 * own, versioned like any other, stored under the name this writes into out: "agent/ID". An
 * operator cannot give a policy that name ('/' is not in policy names).
 */
#define STORE_AMENDMENT_NAME_MAX (6 + LIMIT_AGENT_ID)
void store_amendment_name(const char *agent, char out[STORE_AMENDMENT_NAME_MAX + 1]);

/* Lifecycle ------------------------------------------------------------------------------- */

/*
 * Retires agent `id` for `actor` (a token name): its evidence is refused from now on, its EK
 * may enroll under another id, its verdicts, violations and amendment stay; a row of its
 * history and the agent.retired event record it. With purge the agent and everything stored
 * for it (boot state, event log, verdicts, hourly counters, violations, amendment, history) is
 * deleted instead,
 * whatever its state, and the id is free; agent.retired says purged. -ENOENT unknown agent,
 * -EALREADY retired already (without purge: nothing changed).
 */
int store_agent_retire(struct store *st, const char *id, int64_t now, const char *actor,
		       bool purge);

/*
 * Allows the next enrollment of agent `id` to bring another EK and AK (a reimaged machine, a
 * new TPM; a retired agent comes back so): that enrollment replaces the keys, starts a new boot
 * session and keeps the history. Until then the agent goes on as it is. A row of its history
 * and the agent.reset event record it. -ENOENT unknown agent, -EALREADY reset already.
 */
int store_agent_reset(struct store *st, const char *id, int64_t now, const char *actor);

/* One step of an agent's lifecycle: enrolled, re-enrolled, activated, retired, reset. */
struct store_agent_event {
	int64_t id;
	int64_t time;
	const char *event;
	const char *actor;  /* a token name, or "agent" for what the agent did itself */
	const char *detail;
};
typedef int (*store_agent_event_cb)(void *arg, const struct store_agent_event *e);
/* The agent's history, newest first, at most limit rows (none for an unknown agent). */
int store_agent_history(struct store *st, const char *id, unsigned limit,
			store_agent_event_cb cb, void *arg);

/* Liveness -------------------------------------------------------------------------------- */

/*
 * An active agent whose last valid evidence (a committed verdict, or its activation) is older
 * than `intervals` times its interval (the one its attestd reported, else default_interval) is
 * stale. Computed from stored times alone, so verifiers sharing a store agree.
 */
struct store_liveness {
	uint32_t default_interval;
	uint32_t intervals;
};
int64_t store_agent_last_seen(const struct store_agent *a);
/* The time after which `a` is stale; 0 for an agent that is not active. */
int64_t store_agent_stale_after(const struct store_agent *a, const struct store_liveness *lv);
bool store_agent_stale(const struct store_agent *a, const struct store_liveness *lv, int64_t now);

/*
 * Raises agent.stale for agent `id`, once per silence: only if it is active, its last-seen
 * time is still `last_seen` (no evidence came since the caller looked) and no event was raised
 * for that time yet. `interval` and `stale_after` go into the event. 0 raised, -EALREADY not
 * (raised before, by this or another verifier, or the agent attested meanwhile), -ENOENT.
 */
int store_agent_mark_stale(struct store *st, const char *id, int64_t last_seen,
			   uint32_t interval, int64_t stale_after, int64_t now);

/* Webhook outbox -------------------------------------------------------------------------- */

/*
 * The webhook URLs events are written for, one outbox row per event and URL, in the
 * transaction of the change that raises the event (none are written without a URL). Copied;
 * call before the store is shared. An event's body is JSON: {"id", "type", "time",
 * "agent_id", "data"} (verifier(8), WEBHOOKS).
 */
int store_set_webhooks(struct store *st, const char *const *urls, size_t n);

#define STORE_EVENT_ID_MAX 36u /* "evt-" and 32 hex digits */

struct store_outbox_row {
	int64_t id;             /* the row: one event for one URL */
	const char *event_id;   /* the event: the same in every row of it, and in its body */
	const char *target;
	const char *type;
	const char *agent;
	int64_t created_at;
	const char *body;
	uint32_t attempts;      /* failed deliveries so far */
};
typedef int (*store_outbox_cb)(void *arg, const struct store_outbox_row *r);
/*
 * Up to `limit` rows for `target` that are due (their next attempt at or before now), oldest
 * first, each claimed until now + lease in the same transaction (another verifier on the store
 * does not take it meanwhile; a verifier that dies leaves it due again after the lease).
 */
int store_outbox_claim(struct store *st, const char *target, int64_t now, int64_t lease,
		       unsigned limit, store_outbox_cb cb, void *arg);
/* What became of one claimed row. */
enum store_outbox_outcome {
	STORE_OUTBOX_DELIVERED, /* the receiver took it: deleted */
	STORE_OUTBOX_FAILED,    /* one more attempt counted, the next at next_at, error kept */
	STORE_OUTBOX_UNTRIED,   /* not attempted (the receiver went away first): due at next_at */
};
struct store_outbox_settle {
	int64_t row;
	enum store_outbox_outcome outcome;
	int64_t next_at;   /* FAILED, UNTRIED */
	const char *error; /* FAILED: why, as the row keeps it */
};
/*
 * Settles claimed rows in one transaction, so that a batch of deliveries costs one commit. A
 * row gone meanwhile (its lease ran out and another verifier delivered it) is skipped. The
 * number of rows settled, or -errno with none settled.
 */
int store_outbox_settle(struct store *st, const struct store_outbox_settle *v, size_t n);
/* Rows not delivered yet, of one target (NULL: all). */
int store_outbox_pending(struct store *st, const char *target, uint64_t *count);

/* Metrics -------------------------------------------------------------------------------- */

struct store_counts {
	uint64_t agents_pending;
	uint64_t agents_active;
	uint64_t agents_retired;
	uint64_t violations_open;
	uint64_t verdicts_trusted;
	uint64_t verdicts_untrusted;
};
int store_counts(struct store *st, struct store_counts *out);

/* Backups -------------------------------------------------------------------------------- */

/*
 * A consistent copy of the whole store, taken while every other call goes on: the store as of
 * one commit, holding every round committed before the call began. *fd is an open file at
 * offset 0 holding the copy (it has no name; the caller closes it), *size its length. The
 * copy is a SQLite store (a database file: sqlite:PATH opens it) whatever the backend.
 * -ENOSPC when the disk is full, -EIO (logged).
 */
int store_backup(struct store *st, int *fd, uint64_t *size);

/*
 * Checks a backup before anyone relies on it: uri names the file as store_open() would
 * ("sqlite:PATH"); it is opened read-only and checked whole. 0 with its schema version, or
 * -EINVAL (logged, also for a URI that is not sqlite:).
 */
int store_backup_check(const char *uri, int64_t *version);

/*
 * Copies the whole store at from_uri into the store at to_uri (created, or brought to this
 * build's schema, as store_open() does): agents with their keys and history, boot states and
 * logs, verdicts and hourly counters, violations with their decisions, every version of every
 * policy and amendment,
 * spent challenges, webhook events not yet delivered; ids are kept. Offline: no verifier uses
 * either store meanwhile. One transaction on the target: on failure it is left as it was.
 * 0; -ENOTEMPTY (logged) if the target holds anything; -EINVAL a bad URI; what store_open()
 * returns; -EIO (logged).
 */
int store_copy(const char *from_uri, const char *to_uri);

#endif
