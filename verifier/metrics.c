/* Counters and their Prometheus text; the contract is in metrics.h. */
#include "verifier/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "proto/dynbuf.h"

/* Upper bounds of the latency buckets, in seconds; the last is +Inf (printed as such). */
static const double latency_bounds[METRICS_LATENCY_BUCKETS] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, HUGE_VAL
};

/* The text is a few KB; anything near this means a bug, not a big fleet. */
#define METRICS_TEXT_MAX (1u << 20)

void metrics_observe_latency(struct metrics *m, double s)
{
	for (unsigned i = 0; i < METRICS_LATENCY_BUCKETS; i++) {
		if (s <= latency_bounds[i]) {
			__atomic_add_fetch(&m->latency_bucket[i], 1, __ATOMIC_RELAXED);
			break;
		}
	}
	__atomic_add_fetch(&m->latency_count, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&m->latency_sum_us, (uint64_t)(s * 1e6), __ATOMIC_RELAXED);
}

static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

char *metrics_render(const struct metrics *m, const struct store_counts *c)
{
	struct dynbuf b;
	uint64_t cum = 0;

	dynbuf_init(&b, METRICS_TEXT_MAX);
	dynbuf_addf(&b, "# HELP attest_attestations_total Evidence answered since start, by result.\n"
			"# TYPE attest_attestations_total counter\n"
			"attest_attestations_total{result=\"trusted\"} %" PRIu64 "\n"
			"attest_attestations_total{result=\"untrusted\"} %" PRIu64 "\n"
			"attest_attestations_total{result=\"refused\"} %" PRIu64 "\n",
		    ld(&m->attest_trusted), ld(&m->attest_untrusted), ld(&m->attest_refused));
	dynbuf_addf(&b, "# HELP attest_verdicts_stored Verdicts in the store, by result.\n"
			"# TYPE attest_verdicts_stored gauge\n"
			"attest_verdicts_stored{result=\"trusted\"} %" PRIu64 "\n"
			"attest_verdicts_stored{result=\"untrusted\"} %" PRIu64 "\n",
		    c->verdicts_trusted, c->verdicts_untrusted);
	dynbuf_addf(&b, "# HELP attest_agents Enrolled agents by state.\n"
			"# TYPE attest_agents gauge\n"
			"attest_agents{state=\"pending\"} %" PRIu64 "\n"
			"attest_agents{state=\"active\"} %" PRIu64 "\n",
		    c->agents_pending, c->agents_active);
	dynbuf_addf(&b, "# HELP attest_violations_open Violations waiting for operator review.\n"
			"# TYPE attest_violations_open gauge\n"
			"attest_violations_open %" PRIu64 "\n",
		    c->violations_open);
	dynbuf_addf(&b, "# HELP attest_enrollments_total Enrollment requests by result.\n"
			"# TYPE attest_enrollments_total counter\n"
			"attest_enrollments_total{result=\"ok\"} %" PRIu64 "\n"
			"attest_enrollments_total{result=\"refused\"} %" PRIu64 "\n"
			"attest_activations_total{result=\"ok\"} %" PRIu64 "\n"
			"attest_activations_total{result=\"failed\"} %" PRIu64 "\n"
			"attest_challenges_total %" PRIu64 "\n"
			"attest_http_requests_total %" PRIu64 "\n"
			"attest_http_errors_total %" PRIu64 "\n",
		    ld(&m->enroll_ok), ld(&m->enroll_refused), ld(&m->activate_ok),
		    ld(&m->activate_failed), ld(&m->challenges), ld(&m->http_requests),
		    ld(&m->http_errors));
	dynbuf_addf(&b, "# HELP attest_evidence_seconds Time to judge and store one piece of evidence.\n"
			"# TYPE attest_evidence_seconds histogram\n");
	for (unsigned i = 0; i < METRICS_LATENCY_BUCKETS; i++) {
		cum += ld(&m->latency_bucket[i]);
		if (i + 1 < METRICS_LATENCY_BUCKETS)
			dynbuf_addf(&b, "attest_evidence_seconds_bucket{le=\"%g\"} %" PRIu64 "\n",
				    latency_bounds[i], cum);
		else
			dynbuf_addf(&b, "attest_evidence_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n",
				    cum);
	}
	dynbuf_addf(&b, "attest_evidence_seconds_sum %.6f\nattest_evidence_seconds_count %" PRIu64 "\n",
		    (double)ld(&m->latency_sum_us) / 1e6, ld(&m->latency_count));
	return dynbuf_take(&b, NULL);
}
