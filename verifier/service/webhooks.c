/* The webhook delivery thread and the stale scan; the contract is in webhooks.h. */
#include "verifier/service/webhooks.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "common/file.h"
#include "common/http_client.h"
#include "common/log.h"
#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "verifier/service/app.h"
#include "verifier/service/ear.h"

#define SECRET_MIN 16u
#define SECRET_MAX 4096u
#define CONNECT_TIMEOUT 5L   /* seconds */
#define TOTAL_TIMEOUT 10L    /* seconds for one delivery */
/* A claimed row is another thread's (or verifier's) this long: past any delivery in flight. */
#define CLAIM_LEASE (TOTAL_TIMEOUT + 20)
#define ROWS_PER_PASS 64u    /* deliveries to one URL before the others get their turn */
/*
 * Rows claimed (one transaction) and settled (another) at a time: a backlog after a fleet
 * enrolls is delivered at HTTP speed, not at two commits per event.
 */
#define ROWS_PER_CLAIM 32u
#define STALE_MAX 4096u      /* stale agents raised per scan; the rest in the next one */
#define RESPONSE_MAX 4096u   /* what is kept of a receiver's answer (only its status counts) */

struct target {
	char *url;
	bool failing; /* the last attempt failed: logged once until it answers again */
};

struct webhooks {
	struct app *app;
	struct target *targets;
	size_t n;
	uint8_t secret[SECRET_MAX];
	size_t secret_len;
	unsigned max_backoff;
	struct http_client *client;
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;
	bool kicked; /* webhooks_kick() since the thread last looked at the outbox */
};

int webhook_sign(const uint8_t *secret, size_t secret_len, int64_t timestamp, const char *body,
		 size_t body_len, char hex[WEBHOOK_SIG_HEX + 1])
{
	char ts[24];
	uint8_t mac[32];
	size_t mac_len = 0;
	EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = m ? EVP_MAC_CTX_new(m) : NULL;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	int n = snprintf(ts, sizeof(ts), "%" PRId64 ".", timestamp), ret = -EIO;

	if (!ctx || EVP_MAC_init(ctx, secret, secret_len, params) != 1 ||
	    EVP_MAC_update(ctx, (const uint8_t *)ts, (size_t)n) != 1 ||
	    EVP_MAC_update(ctx, (const uint8_t *)body, body_len) != 1 ||
	    EVP_MAC_final(ctx, mac, &mac_len, sizeof(mac)) != 1 || mac_len != sizeof(mac))
		goto out;
	hex_encode(mac, sizeof(mac), hex);
	ret = 0;
out:
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(m);
	return ret;
}

unsigned webhook_backoff(uint32_t attempts, unsigned max_backoff)
{
	unsigned s = 1;

	for (uint32_t i = 1; i < attempts && s < max_backoff; i++)
		s *= 2;
	return s < max_backoff ? s : max_backoff;
}

/* A row being delivered, copied out of the claim's callback. */
struct claimed {
	int64_t row;
	char event_id[STORE_EVENT_ID_MAX + 1];
	char type[32];
	char agent[LIMIT_AGENT_ID + 1]; /* "" for an event about no agent */
	uint32_t attempts;
	char *body;
};

struct claim {
	struct claimed rows[ROWS_PER_CLAIM];
	size_t n;
};

static int claim_cb(void *arg, const struct store_outbox_row *r)
{
	struct claim *cl = arg;
	struct claimed *c;

	if (cl->n == ROWS_PER_CLAIM)
		return -EOVERFLOW; /* more than asked for: a store bug */
	c = &cl->rows[cl->n];
	*c = (struct claimed){ .row = r->id, .attempts = r->attempts };
	snprintf(c->event_id, sizeof(c->event_id), "%s", r->event_id);
	snprintf(c->type, sizeof(c->type), "%s", r->type);
	snprintf(c->agent, sizeof(c->agent), "%s", r->agent ? r->agent : "");
	c->body = strdup(r->body);
	if (!c->body)
		return -ENOMEM;
	cl->n++;
	return 0;
}

/*
 * POSTs one row; 0 when the receiver answered 2xx, else -1 with why in err: *answered says
 * whether the receiver answered at all (it refused this event) or could not be reached.
 */
static int post(struct webhooks *w, struct target *t, const struct claimed *c, char *err,
		size_t cap, bool *answered)
{
	char h_id[64], h_type[64], h_ts[48], h_sig[32 + WEBHOOK_SIG_HEX], sig[WEBHOOK_SIG_HEX + 1];
	char *h_ear = NULL, *ear = NULL;
	const char *headers[5] = { h_id, h_type, h_ts, h_sig, NULL };
	int64_t now = (int64_t)time(NULL), retry;
	struct dynbuf resp;
	long status = 0;
	int r;

	*answered = false;
	if (webhook_sign(w->secret, w->secret_len, now, c->body, strlen(c->body), sig)) {
		snprintf(err, cap, "cannot sign (OpenSSL)");
		return -1;
	}
	snprintf(h_id, sizeof(h_id), "X-Attest-Event-Id: %s", c->event_id);
	snprintf(h_type, sizeof(h_type), "X-Attest-Event: %s", c->type);
	snprintf(h_ts, sizeof(h_ts), "X-Attest-Timestamp: %" PRId64, now);
	snprintf(h_sig, sizeof(h_sig), "X-Attest-Signature: sha256=%s", sig);
	/*
	 * The agent's latest attestation result this verifier holds, signed (service/ear.h): in a
	 * header, not the body, so that the body a receiver's HMAC covers stays the same on every
	 * retry while the result may have moved on. It carries its own signature.
	 */
	if (c->agent[0] && w->app->ear_results && w->app->ear_keys &&
	    ear_token(w->app, c->agent, 0, NULL, now, &ear, &retry) == EAR_OK &&
	    asprintf(&h_ear, "X-Attest-EAR: %s", ear) > 0)
		headers[4] = h_ear;
	dynbuf_init(&resp, RESPONSE_MAX);
	r = http_client_request_headers(w->client, HTTP_POST, t->url, headers, 5, c->body,
					strlen(c->body), &status, &resp);
	dynbuf_release(&resp);
	free(ear);
	free(h_ear);
	if (r == -EFBIG)
		r = 0; /* a long answer: only its status counts */
	if (r < 0) {
		snprintf(err, cap, "%s", http_client_error(w->client));
		return -1;
	}
	*answered = true;
	if (status < 200 || status > 299) {
		snprintf(err, cap, "answered %ld", status);
		return -1;
	}
	return 0;
}

/*
 * Delivers one claimed row; fills its outcome. false when the receiver could not be reached
 * (the rows after it are left untried).
 */
static bool deliver_one(struct webhooks *w, struct target *t, const struct claimed *c,
			struct store_outbox_settle *out, char *err, size_t cap)
{
	bool answered;

	*out = (struct store_outbox_settle){ .row = c->row, .outcome = STORE_OUTBOX_DELIVERED };
	if (post(w, t, c, err, cap, &answered) == 0) {
		METRICS_COUNT(&w->app->metrics, webhook_delivered);
		if (t->failing)
			log_info("webhook: \"%s\" answers again", t->url);
		t->failing = false;
		log_debug("webhook: %s %s delivered to \"%s\"", c->type, c->event_id, t->url);
		return true;
	}
	METRICS_COUNT(&w->app->metrics, webhook_failed);
	out->outcome = STORE_OUTBOX_FAILED;
	out->next_at = (int64_t)time(NULL) + webhook_backoff(c->attempts + 1, w->max_backoff);
	out->error = err;
	if (!t->failing)
		log_warn("webhook: \"%s\": %s; its events wait in the outbox and are retried"
			 " (at most %u s apart)", t->url, err, w->max_backoff);
	t->failing = true;
	return answered;
}

/*
 * Delivers what is due for one URL, oldest first, until none is or the receiver cannot be
 * reached (a receiver that answers but refuses one event gets the next one meanwhile), at
 * most ROWS_PER_PASS. Rows are claimed and settled ROWS_PER_CLAIM at a time; a verifier that
 * dies between the two delivers its claimed rows again after the lease (at least once, as
 * verifier(8) says). true when a whole pass went out and more may be due now.
 */
static bool deliver_due(struct webhooks *w, struct target *t)
{
	char errs[ROWS_PER_CLAIM][256];
	bool reachable = true;

	for (unsigned pass = 0; reachable && pass < ROWS_PER_PASS / ROWS_PER_CLAIM; pass++) {
		struct store_outbox_settle settle[ROWS_PER_CLAIM];
		struct claim cl = { .n = 0 };
		int64_t now = (int64_t)time(NULL);
		size_t delivered = 0;
		int ret;

		ret = store_outbox_claim(w->app->store, t->url, now, CLAIM_LEASE, ROWS_PER_CLAIM,
					 claim_cb, &cl);
		if (ret) {
			log_warn("webhook: cannot read the outbox: %s", strerror(-ret));
			reachable = false; /* the next pass waits for the timer */
		}
		for (size_t i = 0; i < cl.n; i++) {
			if (!reachable) {
				settle[i] = (struct store_outbox_settle){ .row = cl.rows[i].row,
					.outcome = STORE_OUTBOX_UNTRIED, .next_at = now };
				continue;
			}
			reachable = deliver_one(w, t, &cl.rows[i], &settle[i], errs[i],
						sizeof(errs[i]));
			delivered += settle[i].outcome == STORE_OUTBOX_DELIVERED;
		}
		ret = store_outbox_settle(w->app->store, settle, cl.n);
		if (ret < 0)
			log_warn("webhook: %zu events delivered to \"%s\", but the outbox could not"
				 " record it (%s): they will be delivered again after %ld s", delivered,
				 t->url, strerror(-ret), CLAIM_LEASE);
		for (size_t i = 0; i < cl.n; i++)
			free(cl.rows[i].body);
		if (cl.n < ROWS_PER_CLAIM)
			return false; /* nothing more is due */
	}
	return reachable;
}

/* Stale scan ------------------------------------------------------------------------------ */

struct stale_agent {
	char id[LIMIT_AGENT_ID + 1];
	int64_t last_seen, stale_after;
	uint32_t interval;
};

struct stale_scan {
	const struct store_liveness *lv;
	int64_t now;
	struct stale_agent *v;
	size_t n;
};

static int stale_cb(void *arg, const struct store_agent *a)
{
	struct stale_scan *s = arg;
	struct stale_agent *x;

	if (!store_agent_stale(a, s->lv, s->now) ||
	    a->stale_event_for == store_agent_last_seen(a))
		return 0;
	if (s->n == STALE_MAX)
		return 1; /* the rest in the next scan */
	x = &s->v[s->n++];
	snprintf(x->id, sizeof(x->id), "%s", a->id);
	x->last_seen = store_agent_last_seen(a);
	x->stale_after = store_agent_stale_after(a, s->lv);
	x->interval = a->interval ? a->interval : s->lv->default_interval;
	return 0;
}

/* Raises agent.stale for every agent that went stale since the last scan. */
static void scan_stale(struct webhooks *w)
{
	struct stale_scan s = { &w->app->liveness, (int64_t)time(NULL), NULL, 0 };
	int ret;

	s.v = calloc(STALE_MAX, sizeof(*s.v));
	if (!s.v)
		return;
	/* Listed first, marked after: the store is not called back from its own callback. */
	ret = store_agents_liveness(w->app->store, stale_cb, &s);
	if (ret < 0)
		log_warn("webhook: cannot list agents for the stale scan: %s", strerror(-ret));
	for (size_t i = 0; i < s.n; i++) {
		ret = store_agent_mark_stale(w->app->store, s.v[i].id, s.v[i].last_seen,
					     s.v[i].interval, s.v[i].stale_after, s.now);
		if (ret == 0)
			log_warn("agent \"%s\" is stale: no valid evidence since %" PRId64
				 " (every %" PRIu32 " s expected)", s.v[i].id, s.v[i].last_seen,
				 s.v[i].interval);
		else if (ret != -EALREADY && ret != -ENOENT)
			log_warn("agent \"%s\": cannot record it stale: %s", s.v[i].id,
				 strerror(-ret));
	}
	free(s.v);
}

static double monotonic_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * The delivery thread: the stale scan once a second (it reads every agent: not once per kick,
 * or a fleet's rounds would pay for it), then each URL's due events in turn. It sleeps until a
 * kick or the next second, unless a URL had more due than one pass delivers: a backlog drains
 * at the receivers' speed.
 */
static void *run(void *arg)
{
	struct webhooks *w = arg;
	double last_scan = 0;
	struct timespec until;

	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		bool more = false;

		w->kicked = false;
		pthread_mutex_unlock(&w->mu);
		if (monotonic_s() - last_scan >= 1.0) {
			last_scan = monotonic_s();
			scan_stale(w);
		}
		for (size_t i = 0; i < w->n; i++)
			more |= deliver_due(w, &w->targets[i]);
		pthread_mutex_lock(&w->mu);
		if (more)
			continue;
		/* Rows are due by the second (the outbox keeps whole seconds). */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		while (!w->stop && !w->kicked &&
		       pthread_cond_timedwait(&w->cv, &w->mu, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Setup ----------------------------------------------------------------------------------- */

static int read_secret(struct webhooks *w, const char *path)
{
	struct dynbuf b;
	size_t n;
	int ret;

	if (!path) {
		log_error("--webhook needs --webhook-secret-file FILE: every event is signed with it");
		return -EINVAL;
	}
	dynbuf_init(&b, SECRET_MAX - 1);
	ret = file_read(path, &b);
	if (ret) {
		log_error("cannot read the webhook secret \"%s\": %s", path, strerror(-ret));
		dynbuf_release(&b);
		return ret;
	}
	n = b.len;
	while (n > 0 && (b.buf[n - 1] == '\n' || b.buf[n - 1] == '\r' || b.buf[n - 1] == ' '))
		n--;
	if (n < SECRET_MIN) {
		log_error("the webhook secret in \"%s\" is shorter than %u bytes", path, SECRET_MIN);
		ret = -EINVAL;
	} else {
		memcpy(w->secret, b.buf, n);
		w->secret_len = n;
	}
	OPENSSL_cleanse(b.buf, b.len);
	dynbuf_release(&b);
	return ret;
}

int webhooks_start(struct app *app, const struct webhooks_config *cfg, struct webhooks **out)
{
	const struct http_client_opts copts = {
		.ca_file = cfg->ca_file,
		.allow_http = true,
		.connect_timeout = CONNECT_TIMEOUT,
		.total_timeout = TOTAL_TIMEOUT,
		.user_agent = "attest-verifier-webhook",
	};
	struct webhooks *w;
	int ret;

	*out = NULL;
	if (cfg->n == 0)
		return 0;
	for (size_t i = 0; i < cfg->n; i++) {
		if (strncmp(cfg->urls[i], "http://", 7) && strncmp(cfg->urls[i], "https://", 8)) {
			log_error("--webhook \"%s\": not an http:// or https:// URL", cfg->urls[i]);
			return -EINVAL;
		}
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->app = app;
	w->max_backoff = cfg->max_backoff ? cfg->max_backoff : 1;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	if ((ret = read_secret(w, cfg->secret_file)))
		goto fail;
	ret = -ENOMEM;
	w->targets = calloc(cfg->n, sizeof(*w->targets));
	if (!w->targets)
		goto fail;
	for (size_t i = 0; i < cfg->n; i++, w->n++)
		if (!(w->targets[i].url = strdup(cfg->urls[i])))
			goto fail;
	w->client = http_client_new(&copts);
	if (!w->client) {
		log_error("webhook: cannot set up the HTTP client");
		goto fail;
	}
	if ((ret = store_set_webhooks(app->store, cfg->urls, cfg->n)))
		goto fail;
	if ((ret = -pthread_create(&w->thread, NULL, run, w)))
		goto fail;
	w->started = true;
	for (size_t i = 0; i < cfg->n; i++)
		log_info("webhook: events go to \"%s\" (signed, retried at most %u s apart)",
			 cfg->urls[i], w->max_backoff);
	*out = w;
	return 0;
fail:
	webhooks_stop(w);
	return ret;
}

void webhooks_kick(struct webhooks *w)
{
	if (!w || !w->started)
		return;
	pthread_mutex_lock(&w->mu);
	if (!w->kicked) {
		w->kicked = true;
		pthread_cond_signal(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
}

void webhooks_stop(struct webhooks *w)
{
	if (!w)
		return;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->stop = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
	}
	http_client_free(w->client);
	for (size_t i = 0; i < w->n; i++)
		free(w->targets[i].url);
	free(w->targets);
	OPENSSL_cleanse(w->secret, sizeof(w->secret));
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
