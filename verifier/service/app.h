/*
 * app: the verifier service's state, shared by the services (round.c, review.c), the HTTP
 * handlers and main.c.
 *
 * `struct app` is created by main() before the server starts and freed after it stopped;
 * everything else only reads its configuration. Shared mutable parts, each thread-safe on its
 * own: the store, the challenge table, the agent cache, the policy cache and the metrics.
 */
#ifndef VERIFIER_APP_H
#define VERIFIER_APP_H

#include <pthread.h>
#include <stdint.h>

#include "verifier/facts/enroll.h"
#include "verifier/facts/metrics.h"
#include "verifier/facts/nonces.h"
#include "verifier/policy/policy_cache.h"
#include "verifier/store/store.h"

struct agentcache;
struct cluster;
struct ear_keys;
struct audit_signer;
struct policy_signers;
struct ear_results;
struct tokens;
struct webhooks;

/* Which rounds keep their evidence with their verdict (store.h, "Evidence"): --evidence-keep. */
enum evidence_keep {
	EVIDENCE_KEEP_UNTRUSTED = 0, /* the default */
	EVIDENCE_KEEP_ALL,
	EVIDENCE_KEEP_NONE,
};

/* Who may enroll (store.h, "Registrations"): --admission. */
enum admission {
	ADMISSION_OPEN = 0,   /* the default: an unregistered id is bound to the first EK */
	ADMISSION_REGISTERED, /* only registered ids, each with the EK registered */
};

struct app {
	struct store *store;
	struct nonces *nonces;     /* outstanding challenges */
	struct agentcache *agents; /* active agents' AKs */
	struct cluster *cluster;   /* --cluster-key: challenges any verifier of the fleet accepts
				    * (cluster.h); NULL: this verifier alone */
	struct enroll_trust *trust;
	int64_t nonce_ttl;
	int64_t pending_ttl;       /* seconds a pending enrollment lives (the store's limit) */
	/*
	 * What SIGHUP reloads (main.c): the operator tokens, the EK CAs and the policy signers.
	 * Readers hold reload_lock for reading while they use any; a reload swaps them holding it
	 * for writing. NULL tokens: every operator call is refused.
	 */
	pthread_rwlock_t reload_lock;
	struct tokens *tokens;
	/* --policy-signers (policy_sign.h): NULL when policies need no signature */
	struct policy_signers *signers;
	struct policy_cache policies;
	/* agents' amendments (store.h, store_amendment_name()): their own cache, so that many of
	 * them never evict the large shared policies */
	struct policy_cache amendments;
	struct metrics metrics;
	struct store_liveness liveness; /* when an agent is stale (store.h) */
	struct ear_keys *ear_keys;       /* the key EARs are signed with (store/ear_keys.h) */
	struct audit_signer *audit;      /* signs the audit trail's head (audit_sign.h) */
	struct ear_results *ear_results; /* each agent's latest result (service/ear.h) */
	/* --metrics-agents public: /metrics names every agent without a token (the fleet's
	 * inventory); by default only to a request with a token of any role. */
	bool metrics_agents_public;
	enum evidence_keep evidence_keep;
	enum admission admission;
	struct webhooks *webhooks;  /* the delivery thread (webhooks.h); NULL without --webhook.
				     * Set before the server starts. */
	/*
	 * Tests only (NULL otherwise): called by round_evidence() after a round is judged and
	 * before it commits, to run another round of the agent in between deterministically.
	 */
	void (*before_commit)(struct app *app, const char *agent);
	/*
	 * Tests only (NULL otherwise): called by review.c after an approval read the policy
	 * document `name` and before it writes the new version, to land another write (a PUT, a
	 * rollback) in between deterministically.
	 */
	void (*before_policy_write)(struct app *app, const char *name);
};

#define APP_COUNT(app, field) METRICS_COUNT(&(app)->metrics, field)

#endif
