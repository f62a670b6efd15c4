/*
 * GET /healthz and /metrics: whether the store answers, and the verifier's counters with the
 * fleet's as Prometheus text (metrics.c renders it).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "proto/dynbuf.h"
#include "verifier/facts/metrics.h"
#include "verifier/http/handlers.h"

void handle_healthz(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct store_counts c;

	if (store_counts(app->store, &c)) {
		http_reply_store_failure(resp);
		return;
	}
	http_reply_json(resp, 200, strdup("{\"status\":\"ok\"}"));
}

struct fleet_ctx {
	const struct app *app;
	struct dynbuf samples;
	uint64_t stale;
	uint64_t untrusted;
	int64_t now;
	bool per_agent; /* write the per-agent samples */
};

static int fleet_cb(void *arg, const struct store_agent *a)
{
	struct fleet_ctx *f = arg;

	if (store_agent_stale(a, &f->app->liveness, f->now))
		f->stale++;
	if (a->state == AGENT_ACTIVE && a->last_trusted == 0)
		f->untrusted++;
	if (f->per_agent && a->last_verdict_at)
		metrics_agent_sample(&f->samples, a->id, a->last_verdict_at);
	return 0;
}

void handle_metrics(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct store_counts c;
	struct fleet_ctx f = { .app = app, .now = (int64_t)time(NULL) };
	struct metrics_fleet mf = { 0 };
	bool store_ok;
	char *text;

	/*
	 * One sample line per agent with a verdict, capped as the whole text is (metrics.c): the
	 * fleet's inventory, so only to a request with a token unless --metrics-agents public.
	 * The counts (agents per state, stale) are public either way.
	 */
	f.per_agent = app->metrics_agents_public || app_token_known(app, req);
	dynbuf_init(&f.samples, 1u << 24);
	/* A store that cannot be read is itself what a scrape must report (attest_store_up 0),
	 * with the counters this process holds: not a failed scrape, which looks like a verifier
	 * down. */
	store_ok = !store_counts(app->store, &c) && !store_agents_list(app->store, fleet_cb, &f) &&
		   !store_outbox_pending(app->store, NULL, &mf.webhook_pending);
	mf.stale = f.stale;
	mf.untrusted = f.untrusted;
	mf.last_verdict_samples = f.samples.len ? dynbuf_str(&f.samples) : NULL;
	text = store_ok ? metrics_render(&app->metrics, &c, &mf)
			: metrics_render(&app->metrics, NULL, NULL);
	dynbuf_release(&f.samples);
	if (!text) {
		http_reply_error(resp, PROTO_ERR_INTERNAL, "out of memory");
		return;
	}
	http_reply_json(resp, 200, text);
	resp->content_type = "text/plain; version=0.0.4";
}
