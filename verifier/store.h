/*
 * store: the verifier's durable state behind one interface (agents, boot state, verdicts,
 * violations, policies; outstanding challenges need no durability and live in nonces.h).
 *
 * Backends: store_open() takes a URI and picks the backend by its scheme; "sqlite:PATH" is
 * SQLite (store_sqlite.c). What every backend shares (the group commit, state names, the
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
#include "verifier/boot_state.h"

#define STORE_CRED_DIGEST_LEN 32u /* SHA-256 of the MakeCredential secret */

struct store;

enum agent_state {
	AGENT_PENDING = 0, /* enrolled, credential not yet activated: AK not trusted */
	AGENT_ACTIVE,      /* activated: AK trusted */
};
const char *agent_state_str(enum agent_state s);

struct store_agent {
	char id[LIMIT_AGENT_ID + 1];
	enum agent_state state;
	uint8_t *ek_pub;   /* marshalled TPM2B_PUBLIC */
	size_t ek_pub_len;
	uint8_t *ek_cert;  /* DER */
	size_t ek_cert_len;
	uint8_t *ak_pub;   /* marshalled TPM2B_PUBLIC */
	size_t ak_pub_len;
	uint8_t ak_name[66];
	size_t ak_name_len;
	uint8_t cred_digest[STORE_CRED_DIGEST_LEN];
	char policy[LIMIT_POLICY_NAME + 1]; /* "" = the default policy */
	int64_t created_at;
	int64_t activated_at;   /* 0 while pending */
	/* Summary columns, filled by store_agent_get()/store_agents_list(); ignored on write. */
	uint64_t boot_number;
	uint64_t next_entry;
	int64_t last_verdict_at; /* 0: none */
	int last_trusted;        /* -1: no verdict yet, 0 untrusted, 1 trusted */
	uint64_t open_violations;
};
void store_agent_release(struct store_agent *a);

/*
 * Opens the store a URI names: "sqlite:PATH" (the file is created if missing). Upgrades the
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
};

/*
 * Decides and records an enrollment atomically (two concurrent enrollments of one id cannot
 * both win). Only NEW and REFRESHED change stored state.
 */
int store_agent_enroll(struct store *st, const struct store_agent *a, int64_t now,
		       enum store_enroll_result *result);

int store_agent_get(struct store *st, const char *id, struct store_agent *out);

/*
 * Marks a pending agent active if its stored credential digest still equals `digest` (the
 * caller compared the secret in constant time). -ENOENT unknown, -ESTALE if the agent
 * re-enrolled in between or is active already.
 */
int store_agent_activate(struct store *st, const char *id,
			 const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now);

/* Assigns a policy by name ("" = default). -ENOENT unknown agent. */
int store_agent_set_policy(struct store *st, const char *id, const char *policy);

typedef int (*store_agent_cb)(void *arg, const struct store_agent *a);
/* Every agent ordered by id; blobs are not loaded (lengths 0, pointers NULL). */
int store_agents_list(struct store *st, store_agent_cb cb, void *arg);

/* Boot state and rounds ------------------------------------------------------------------ */

/* The stored state, or a zeroed one (started = false) if the agent has none. */
int store_boot_get(struct store *st, const char *agent, struct boot_state *out);

/* A violation a round found (strings NUL-terminated, borrowed for the call). */
struct store_round_violation {
	uint64_t entry;
	const char *reason;        /* its wire name: not_in_allowlist, violation_entry, ... */
	const char *path;
	const char *digest;        /* "alg:hex" */
	const char *template_name;
};

struct store_round {
	const char *agent;
	const struct boot_state *next;
	bool trusted;
	const char *reasons_json; /* JSON array, as in verdict_response */
	uint64_t next_offset;
	const struct store_round_violation *violations;
	size_t nviolations;
	int64_t now;
};

/* One transaction: boot state, verdict, violations (deduplicated per agent, digest, path). */
int store_round_commit(struct store *st, const struct store_round *r, int64_t *verdict_id);

struct store_verdict {
	int64_t id;
	char agent[LIMIT_AGENT_ID + 1];
	uint64_t boot_number;
	int64_t time;
	bool trusted;
	const char *reasons_json;
	uint64_t next_offset;
};
typedef int (*store_verdict_cb)(void *arg, const struct store_verdict *v);
/* Newest first, at most `limit`. */
int store_verdicts_list(struct store *st, const char *agent, unsigned limit,
			store_verdict_cb cb, void *arg);

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
	uint64_t boot_number;
	uint64_t entry;
	const char *path;
	const char *digest;
	const char *template_name;
	const char *reason;
	int64_t first_seen;
	int64_t last_seen;
	uint64_t count;
	enum violation_state state;
};
typedef int (*store_violation_cb)(void *arg, const struct store_violation *v);
/* state < 0: any state; agent NULL: every agent. Newest last_seen first, at most limit. */
int store_violations_list(struct store *st, int state, const char *agent, unsigned limit,
			  store_violation_cb cb, void *arg);
/* Calls cb once with violation id; -ENOENT unknown id. */
int store_violation_get(struct store *st, int64_t id, store_violation_cb cb, void *arg);
/* Violations of this agent's boot that no operator approved or dismissed yet. */
int store_violations_open_count(struct store *st, const char *agent, uint64_t boot_number,
				uint64_t *count);
/* -ENOENT unknown id. */
int store_violation_set_state(struct store *st, int64_t id, enum violation_state state);

/* Policies ------------------------------------------------------------------------------- */

/*
 * Stores a new version of a policy unless the newest version has the same JSON text.
 * *version gets the version now current.
 */
int store_policy_put(struct store *st, const char *name, const char *json, const char *actor,
		     int64_t now, int64_t *version);
/* The newest version's number alone: cheap, for callers that cache parsed policies. -ENOENT
 * if none. */
int store_policy_version(struct store *st, const char *name, int64_t *version);
/* The newest version's JSON (caller frees). -ENOENT if none. */
int store_policy_get(struct store *st, const char *name, char **json, int64_t *version);

/* Metrics -------------------------------------------------------------------------------- */

struct store_counts {
	uint64_t agents_pending;
	uint64_t agents_active;
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
 * copy is a store the same backend opens (SQLite: a database file). -ENOSPC when the disk is
 * full, -EIO (logged).
 */
int store_backup(struct store *st, int *fd, uint64_t *size);

/*
 * Checks a backup before anyone relies on it: uri names the file as store_open() would
 * ("sqlite:PATH"); it is opened read-only and checked whole. 0 with its schema version, or
 * -EINVAL (logged, also for an unknown scheme).
 */
int store_backup_check(const char *uri, int64_t *version);

#endif
