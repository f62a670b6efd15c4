/*
 * The verifier service's private header: the application state shared by the HTTP handlers
 * (handlers_agent.c, handlers_operator.c) and main.c, and the route table.
 *
 * `struct app` is created by main() before the server starts and freed after it stopped; the
 * handlers only read its configuration. Shared mutable parts: the store (thread-safe), the
 * challenge table and the agent cache (thread-safe), the policy cache (own mutex) and the metrics (atomic counters).
 */
#ifndef VERIFIER_HANDLERS_H
#define VERIFIER_HANDLERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "verifier/enroll.h"
#include "verifier/nonces.h"
#include "verifier/server.h"
#include "verifier/store.h"

struct agentcache;
struct policy;

#define APP_POLICY_CACHE 32u
#define APP_LATENCY_BUCKETS 12u
#define APP_DEFAULT_POLICY "default"

struct policy_slot {
	char name[STORE_POLICY_NAME_MAX + 1];
	int64_t version;
	struct policy *policy;
};

struct app_metrics {
	uint64_t attest_trusted;     /* evidence answered with a verdict */
	uint64_t attest_untrusted;
	uint64_t attest_refused;     /* evidence refused before a verdict (4xx) */
	uint64_t enroll_ok, enroll_refused, activate_ok, activate_failed, challenges;
	uint64_t http_requests, http_errors;
	/* evidence latency: bucket counts (cumulative when printed), sum in microseconds */
	uint64_t latency_bucket[APP_LATENCY_BUCKETS];
	uint64_t latency_count;
	uint64_t latency_sum_us;
};

struct app {
	struct store *store;
	struct nonces *nonces; /* outstanding challenges (thread-safe) */
	struct agentcache *agents; /* active agents' AK and policy name (thread-safe) */
	struct enroll_trust *trust;
	int64_t nonce_ttl;
	uint8_t token_digest[32]; /* SHA-256 of the operator token */
	pthread_mutex_t policy_lock;
	struct policy_slot policies[APP_POLICY_CACHE];
	struct app_metrics metrics;
};

extern const struct http_route app_routes[];
extern const size_t app_nroutes;

bool app_authorize(void *app, const struct http_request *req);
void app_observe(void *app, const struct http_route *route, unsigned status, double seconds);

/*
 * The policy an agent is judged by: its assigned name, or "default". *out NULL means no policy
 * is configured at all (attest_evaluate then allows every entry). A new reference: release with
 * policy_unref(). -ENOENT if the agent names a policy the store does not have.
 */
int app_policy_get(struct app *app, const char *name, struct policy **out);
/* Drops cached versions of `name` so the next lookup loads the newest. */
void app_policy_invalidate(struct app *app, const char *name);
void app_policies_release(struct app *app);

#define APP_COUNT(app, field) __atomic_add_fetch(&(app)->metrics.field, 1, __ATOMIC_RELAXED)

/* Handlers ------------------------------------------------------------------------------- */
void handle_enroll(const struct http_request *req, struct http_response *resp);
void handle_activate(const struct http_request *req, struct http_response *resp);
void handle_challenge(const struct http_request *req, struct http_response *resp);
void handle_evidence(const struct http_request *req, struct http_response *resp);

void handle_healthz(const struct http_request *req, struct http_response *resp);
void handle_metrics(const struct http_request *req, struct http_response *resp);
void handle_agents_list(const struct http_request *req, struct http_response *resp);
void handle_agent_get(const struct http_request *req, struct http_response *resp);
void handle_agent_verdicts(const struct http_request *req, struct http_response *resp);
void handle_agent_set_policy(const struct http_request *req, struct http_response *resp);
void handle_violations_list(const struct http_request *req, struct http_response *resp);
void handle_violation_approve(const struct http_request *req, struct http_response *resp);
void handle_violation_dismiss(const struct http_request *req, struct http_response *resp);
void handle_policy_get(const struct http_request *req, struct http_response *resp);
void handle_policy_put(const struct http_request *req, struct http_response *resp);

/* The operator web page (handlers_ui.c): /ui/, /ui/app.js, /ui/style.css. */
void handle_ui_index(const struct http_request *req, struct http_response *resp);
void handle_ui_js(const struct http_request *req, struct http_response *resp);
void handle_ui_css(const struct http_request *req, struct http_response *resp);

#endif
