/* Counters and their Prometheus text; the contract is in metrics.h. */
#include "verifier/facts/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "proto/dynbuf.h"

/* Upper bounds of the latency buckets, in seconds; the last is +Inf (printed as such). */
static const double latency_bounds[METRICS_LATENCY_BUCKETS] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, HUGE_VAL
};

/* A few KB, and one line per agent with a verdict (about 100 bytes): room for 100,000s. */
#define METRICS_TEXT_MAX (1u << 24)

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

void metrics_agent_sample(struct dynbuf *b, const char *agent, int64_t last_verdict_at)
{
	dynbuf_addf(b, "attest_agent_last_verdict_timestamp_seconds{agent=\"%s\"} %" PRId64 "\n",
		    agent, last_verdict_at);
}

/* One counter family with one sample per result label. */
static void counter2(struct dynbuf *b, const char *name, const char *help, const char *l1,
		     uint64_t v1, const char *l2, uint64_t v2)
{
	dynbuf_addf(b, "# HELP %s %s\n# TYPE %s counter\n%s{result=\"%s\"} %" PRIu64 "\n"
		       "%s{result=\"%s\"} %" PRIu64 "\n",
		    name, help, name, name, l1, v1, name, l2, v2);
}

static void counter1(struct dynbuf *b, const char *name, const char *help, uint64_t v)
{
	dynbuf_addf(b, "# HELP %s %s\n# TYPE %s counter\n%s %" PRIu64 "\n", name, help, name, name,
		    v);
}

/* The families read from the store at this scrape. */
static void render_store(struct dynbuf *b, const struct store_counts *c,
			 const struct metrics_fleet *f)
{
	dynbuf_addf(b, "# HELP attest_verdicts_stored Verdicts in the store, by result.\n"
			"# TYPE attest_verdicts_stored gauge\n"
			"attest_verdicts_stored{result=\"trusted\"} %" PRIu64 "\n"
			"attest_verdicts_stored{result=\"untrusted\"} %" PRIu64 "\n",
		    c->verdicts_trusted, c->verdicts_untrusted);
	/* Stale agents are active ones that went silent: counted there, not as active. */
	dynbuf_addf(b, "# HELP attest_agents Agents in the store by state (stale: active, but no"
			" valid evidence for --stale-intervals of their intervals).\n"
			"# TYPE attest_agents gauge\n"
			"attest_agents{state=\"pending\"} %" PRIu64 "\n"
			"attest_agents{state=\"active\"} %" PRIu64 "\n"
			"attest_agents{state=\"stale\"} %" PRIu64 "\n"
			"attest_agents{state=\"retired\"} %" PRIu64 "\n",
		    c->agents_pending,
		    c->agents_active >= f->stale ? c->agents_active - f->stale : 0, f->stale,
		    c->agents_retired);
	dynbuf_addf(b, "# HELP attest_agent_last_verdict_timestamp_seconds When each agent's last"
			" verdict was stored (Unix time); agents without one are not listed.\n"
			"# TYPE attest_agent_last_verdict_timestamp_seconds gauge\n%s",
		    f->last_verdict_samples ? f->last_verdict_samples : "");
	dynbuf_addf(b, "# HELP attest_violations_open Violations waiting for operator review.\n"
			"# TYPE attest_violations_open gauge\n"
			"attest_violations_open %" PRIu64 "\n",
		    c->violations_open);
	dynbuf_addf(b, "# HELP attest_webhook_deliveries_pending Webhook deliveries (one event for"
			" one URL) waiting in the outbox.\n"
			"# TYPE attest_webhook_deliveries_pending gauge\n"
			"attest_webhook_deliveries_pending %" PRIu64 "\n",
		    f->webhook_pending);
	dynbuf_addf(b, "# HELP attest_agents_untrusted Active agents whose last verdict is"
		       " untrusted.\n"
		       "# TYPE attest_agents_untrusted gauge\n"
		       "attest_agents_untrusted %" PRIu64 "\n",
		    f->untrusted);
}

char *metrics_render(const struct metrics *m, const struct store_counts *c,
		     const struct metrics_fleet *f)
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
	dynbuf_addf(&b, "# HELP attest_store_up Whether this scrape could read the store (1) or"
			" not (0: the families read from it are left out).\n"
			"# TYPE attest_store_up gauge\nattest_store_up %d\n", c && f ? 1 : 0);
	if (c && f)
		render_store(&b, c, f);
	counter2(&b, "attest_enrollments_total", "Enrollment requests by result.", "ok",
		 ld(&m->enroll_ok), "refused", ld(&m->enroll_refused));
	counter2(&b, "attest_activations_total", "Credential activations by result.", "ok",
		 ld(&m->activate_ok), "failed", ld(&m->activate_failed));
	counter1(&b, "attest_challenges_total", "Challenges issued on request.", ld(&m->challenges));
	counter1(&b, "attest_challenges_given_total", "Challenges issued with a verdict, for the"
		 " agent's next round.", ld(&m->challenges_given));
	counter1(&b, "attest_challenges_foreign_total", "Evidence answering a challenge not in this"
		 " verifier's table, taken on the fleet's key (--cluster-key): another verifier's, or"
		 " its own from before a restart.", ld(&m->challenges_foreign));
	counter2(&b, "attest_webhook_deliveries_total", "Webhook delivery attempts by result"
		 " (failed: retried later from the outbox).", "delivered",
		 ld(&m->webhook_delivered), "failed", ld(&m->webhook_failed));
	counter1(&b, "attest_http_requests_total", "HTTP requests answered.",
		 ld(&m->http_requests));
	counter1(&b, "attest_http_errors_total", "HTTP requests answered with a status of 400 or"
		 " more.", ld(&m->http_errors));
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
