/*
 * metrics: the verifier's counters since start, and their Prometheus text.
 *
 * Counters are plain uint64_t bumped with relaxed atomics from any thread (METRICS_COUNT);
 * metrics_render() reads them the same way, so a scrape never takes a lock on the hot path.
 */
#ifndef VERIFIER_METRICS_H
#define VERIFIER_METRICS_H

#include <stdint.h>

#include "verifier/store.h"

#define METRICS_LATENCY_BUCKETS 12u

struct metrics {
	uint64_t attest_trusted;     /* evidence answered with a verdict */
	uint64_t attest_untrusted;
	uint64_t attest_refused;     /* evidence refused before a verdict (4xx) */
	uint64_t enroll_ok, enroll_refused, activate_ok, activate_failed, challenges;
	uint64_t http_requests, http_errors;
	/* evidence latency: bucket counts (cumulative when printed), sum in microseconds */
	uint64_t latency_bucket[METRICS_LATENCY_BUCKETS];
	uint64_t latency_count;
	uint64_t latency_sum_us;
};

#define METRICS_COUNT(m, field) __atomic_add_fetch(&(m)->field, 1, __ATOMIC_RELAXED)

/* Records one evidence round that took `seconds`. */
void metrics_observe_latency(struct metrics *m, double seconds);

/* The Prometheus text exposition of m and of the store's counts; malloc'd, NULL if out of memory. */
char *metrics_render(const struct metrics *m, const struct store_counts *c);

#endif
