/*
 * metrics: the verifier's counters since start, and their Prometheus text.
 *
 * Counters are plain uint64_t bumped with relaxed atomics from any thread (METRICS_COUNT);
 * metrics_render() reads them the same way, so a scrape never takes a lock on the hot path.
 */
#ifndef VERIFIER_METRICS_H
#define VERIFIER_METRICS_H

#include <stdint.h>

#include "verifier/store/store.h"

#define METRICS_LATENCY_BUCKETS 12u

struct metrics {
	uint64_t attest_trusted;     /* evidence answered with a verdict */
	uint64_t attest_untrusted;
	uint64_t attest_refused;     /* evidence refused before a verdict (4xx) */
	uint64_t enroll_ok, enroll_refused, activate_ok, activate_failed, challenges;
	uint64_t challenges_given;   /* with a verdict, for the agent's next round */
	uint64_t challenges_foreign; /* answers to another verifier's challenge (cluster key) */
	uint64_t http_requests, http_errors;
	uint64_t webhook_delivered, webhook_failed; /* delivery attempts, by outcome */
	/* evidence latency: bucket counts (cumulative when printed), sum in microseconds */
	uint64_t latency_bucket[METRICS_LATENCY_BUCKETS];
	uint64_t latency_count;
	uint64_t latency_sum_us;
};

#define METRICS_COUNT(m, field) __atomic_add_fetch(&(m)->field, 1, __ATOMIC_RELAXED)

/* Records one evidence round that took `seconds`. */
void metrics_observe_latency(struct metrics *m, double seconds);

/*
 * What the agents' rows say: how many active agents are stale, and one sample per
 * agent with a verdict, "attest_agent_last_verdict_timestamp_seconds{agent="ID"} T\n" lines
 * (metrics_agent_sample() writes them; agent ids need no escaping: their alphabet has no quote
 * or backslash).
 */
struct metrics_fleet {
	uint64_t stale;
	uint64_t untrusted; /* active agents whose last verdict is untrusted */
	uint64_t webhook_pending; /* webhook deliveries waiting in the outbox */
	const char *last_verdict_samples; /* NULL: none */
};
struct dynbuf;
void metrics_agent_sample(struct dynbuf *b, const char *agent, int64_t last_verdict_at);

/*
 * The Prometheus text exposition of m, the store's counts and the fleet's; malloc'd, NULL if
 * out of memory. c and f NULL: the store could not be read for this scrape; the counters of m
 * are still rendered, the families read from the store are left out, and attest_store_up is 0
 * (1 otherwise), so an alert tells a store down from a verifier down. Every family has its HELP and TYPE; counters end in _total, times are in
 * seconds (tests/integration/metrics.sh parses it).
 */
char *metrics_render(const struct metrics *m, const struct store_counts *c,
		     const struct metrics_fleet *f);

#endif
