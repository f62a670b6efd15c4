/*
 * app: the verifier service's state, shared by the services (round.c, review.c), the HTTP
 * handlers and main.c.
 *
 * `struct app` is built by main() before the server starts, one step at a time (app.c: the
 * store, the EAR keys, the cluster key, the background threads, the challenge table and agent
 * cache, the EK CAs, the policy signers), and released after it stopped; everything else only
 * reads its configuration. Shared mutable parts, each thread-safe on its
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
#include "verifier/service/retention.h"
#include "verifier/service/webhooks.h"
#include "verifier/store/statedir.h"
#include "verifier/store/store.h"

struct agentcache;
struct cluster;
struct ear_keys;
struct audit_signer;
struct policy_signers;
struct ear_results;
struct retention;
struct tokens;

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
	 * What SIGHUP reloads (main.c, through app.c and routes.c): the operator tokens, the EK CAs
	 * and the policy signers.
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
	struct retention *retention; /* the pruning thread (retention.h) */
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

/*
 * Building and releasing the state (app.c), in the order main() calls them. Each step but
 * app_init() answers 0, or -1 with the reason logged; app_release() frees whatever the steps
 * made (NULL members are skipped), after app_threads_stop(). The operator tokens are the HTTP
 * layer's (tokens.h: tokens_open(), tokens_free()).
 */
/* Zeroes *app; its policy caches and reload_lock ready. */
void app_init(struct app *app);
/* The store named by uri, or NULL: STATE_DIR/verifier.db (SQLite) reached through sd, named
 * state_dir in messages; with app->pending_ttl and the pending enrollments' caps. */
int app_store_open(struct app *app, const char *uri, const struct statedir *sd,
		   const char *state_dir);
/* The EAR signing keys (store/ear_keys.h, kept ear_key_keep seconds after a rotation) and the
 * agents' latest results (ear.h); before the webhooks' thread, which signs results too. */
int app_results_open(struct app *app, const struct statedir *sd, int64_t ear_key_keep);
/* --cluster-key (cluster.h): nothing when key_file is NULL; warns when the store (store_uri,
 * NULL for the default) is SQLite, which one verifier alone can use. */
int app_cluster_open(struct app *app, const char *key_file, const char *store_uri);

/* The background threads: webhook delivery, retention and the audit head's signer. */
struct app_threads_config {
	struct webhooks_config webhooks;
	struct retention_config retention;
	const char *audit_key;        /* NULL: STATE_DIR/audit-key.pem */
	unsigned audit_sign_interval; /* seconds */
};
int app_threads_start(struct app *app, const struct statedir *sd,
		      const struct app_threads_config *c);
/* Stops those started (retention, the audit signer, then webhooks); after the server stopped. */
void app_threads_stop(struct app *app);
/* The challenge table and the agent cache. */
int app_tables_new(struct app *app);
/* The EK CAs enrollment trusts (enroll.h); none: a warning, every enrollment refused. */
int app_trust_load(struct app *app, const char *const *ek_ca, size_t n);
/* --policy-signers (policy_sign.h): nothing when path is NULL. */
int app_signers_load(struct app *app, const char *path);
/*
 * SIGHUP: the EK CAs, and the policy signers when path names them, read again and swapped in
 * under reload_lock only when they load whole; else the old ones stay and the log says so.
 * Signing is switched on or off by a restart only.
 */
void app_trust_reload(struct app *app, const char *const *ek_ca, size_t n);
void app_signers_reload(struct app *app, const char *path);
void app_release(struct app *app);

#endif
