/*
 * Operator calls (bearer token), health and metrics, as HTTP: reads go to the store, decisions
 * on violations to review.c, the metrics text to metrics.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>

#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "proto/limits.h"
#include "proto/text.h"
#include "verifier/facts/agentcache.h"
#include "verifier/http/handlers.h"
#include "common/log.h"
#include "verifier/policy/policy.h"
#include "verifier/policy/policy_json.h"
#include "verifier/facts/reasons.h"
#include "verifier/service/review.h"

#define LIST_LIMIT_DEFAULT 100u

/* Helpers ------------------------------------------------------------------------------------- */

void reply_json_value(struct http_response *resp, unsigned status, json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;

	json_decref(v);
	http_reply_json(resp, status, s);
}

static unsigned query_limit(const struct http_request *req)
{
	const char *s = http_query(req, "limit");
	char *end;
	unsigned long n;

	if (!s)
		return LIST_LIMIT_DEFAULT;
	n = strtoul(s, &end, 10);
	if (end == s || *end || n == 0)
		return LIST_LIMIT_DEFAULT;
	return n > LIMIT_LIST_ROWS ? LIMIT_LIST_ROWS : (unsigned)n;
}

/*
 * The codes of a verdict's stored reasons (round.c: [{code, detail, entry}, ...]), each once, in
 * order: what the fleet shows beside the last verdict. Only the codes: the details (paths) of a
 * thousand agents' verdicts would make the list as large as their histories.
 */
static json_t *reason_codes(const char *reasons_json)
{
	json_t *all = json_loads(reasons_json, 0, NULL), *codes = json_array(), *r, *c;
	size_t i, j;

	if (!codes) {
		json_decref(all);
		return NULL;
	}
	json_array_foreach(all, i, r) {
		const char *code = json_string_value(json_object_get(r, "code"));
		bool seen = false;

		if (!code)
			continue;
		json_array_foreach(codes, j, c)
			seen = seen || !strcmp(json_string_value(c), code);
		if (!seen && json_array_append_new(codes, json_string(code))) {
			json_decref(codes);
			codes = NULL;
			break;
		}
	}
	json_decref(all);
	return codes;
}

/*
 * An agent as JSON. Its "state" is "stale" for an active agent that sent no valid evidence
 * for --stale-intervals of its intervals (store_agent_stale()): a state of its own, so that a
 * silenced agent never looks trusted; "last_seen", "interval" and "stale_after" say why.
 */
static json_t *agent_json(const struct app *app, const struct store_agent *a, int64_t now)
{
	bool stale = store_agent_stale(a, &app->liveness, now);
	char name_hex[2 * sizeof(a->ak_name) + 1];
	json_t *o;

	hex_encode(a->ak_name, a->ak_name_len, name_hex);
	o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "agent_id", a->id,
		      "state", stale ? "stale" : agent_state_str(a->state), "policy",
		      a->policy[0] ? a->policy : POLICY_DEFAULT_NAME, "ak_name", name_hex,
		      "created_at", (json_int_t)a->created_at, "activated_at",
		      (json_int_t)a->activated_at, "boot_number", (json_int_t)a->boot_number,
		      "next_entry", (json_int_t)a->next_entry, "last_verdict_at",
		      (json_int_t)a->last_verdict_at, "open_violations",
		      (json_int_t)a->open_violations);
	if (o) {
		/* Lifecycle (issue 16): when it was retired, and whether its next enrollment may
		 * bring another EK and AK (an operator reset it). */
		json_object_set_new(o, "retired_at", json_integer(a->retired_at));
		json_object_set_new(o, "reset_at", json_integer(a->reset_at));
		/* Liveness: the last valid evidence (or activation), the interval it is held to. */
		json_object_set_new(o, "last_seen", json_integer(a->state == AGENT_PENDING
								 ? 0 : store_agent_last_seen(a)));
		json_object_set_new(o, "interval", json_integer(a->interval ? a->interval
								: app->liveness.default_interval));
		json_object_set_new(o, "interval_reported", json_boolean(a->interval != 0));
		json_object_set_new(o, "stale_after",
				    json_integer(store_agent_stale_after(a, &app->liveness)));
		json_object_set_new(o, "stale", json_boolean(stale));
	}
	if (o && a->last_reasons_json)
		json_object_set_new(o, "last_reasons", reason_codes(a->last_reasons_json));
	if (o)
		json_object_set_new(o, "last_verdict",
				    a->last_trusted < 0 ? json_null()
							: json_string(a->last_trusted ? "trusted"
										      : "untrusted"));
	return o;
}

/*
 * The boot summary of the agent's last round with a firmware event log (boot_check.h), with
 * when the log arrived; null if the verifier holds none.
 */
static json_t *boot_json(struct app *app, const char *id)
{
	struct store_boot_log bl;
	json_t *o = NULL;
	char hex[65];

	if (store_boot_log_get(app->store, id, &bl))
		return json_null();
	if (bl.summary)
		o = json_loads(bl.summary, 0, NULL);
	if (!json_is_object(o)) {
		json_decref(o);
		o = json_object();
	}
	hex_encode(bl.sha256, sizeof(bl.sha256), hex);
	json_object_set_new(o, "log_sha256", json_string(hex));
	json_object_set_new(o, "log_bytes", json_integer((json_int_t)bl.log_len));
	json_object_set_new(o, "received_at", json_integer(bl.received_at));
	store_boot_log_release(&bl);
	return o;
}

/* Handlers ------------------------------------------------------------------------------------ */

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
	int64_t now;
};

static int fleet_cb(void *arg, const struct store_agent *a)
{
	struct fleet_ctx *f = arg;

	if (store_agent_stale(a, &f->app->liveness, f->now))
		f->stale++;
	if (a->last_verdict_at)
		metrics_agent_sample(&f->samples, a->id, a->last_verdict_at);
	return 0;
}

void handle_metrics(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct store_counts c;
	struct fleet_ctx f = { .app = app, .now = (int64_t)time(NULL) };
	struct metrics_fleet mf;
	char *text;

	/* One sample line per agent with a verdict, capped as the whole text is (metrics.c). */
	dynbuf_init(&f.samples, 1u << 24);
	if (store_counts(app->store, &c) || store_agents_list(app->store, fleet_cb, &f) ||
	    store_outbox_pending(app->store, NULL, &mf.webhook_pending)) {
		dynbuf_release(&f.samples);
		http_reply_store_failure(resp);
		return;
	}
	mf.stale = f.stale;
	mf.last_verdict_samples = f.samples.len ? dynbuf_str(&f.samples) : NULL;
	text = metrics_render(&app->metrics, &c, &mf);
	dynbuf_release(&f.samples);
	if (!text) {
		http_reply_error(resp, PROTO_ERR_INTERNAL, "out of memory");
		return;
	}
	http_reply_json(resp, 200, text);
	resp->content_type = "text/plain; version=0.0.4";
}

struct agents_ctx {
	const struct app *app;
	json_t *arr;
	int64_t now;
};

static int agents_cb(void *arg, const struct store_agent *a)
{
	struct agents_ctx *c = arg;
	json_t *o = agent_json(c->app, a, c->now);

	return o && json_array_append_new(c->arr, o) == 0 ? 0 : -ENOMEM;
}

void handle_agents_list(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	json_t *arr = json_array();
	struct agents_ctx c = { app, arr, (int64_t)time(NULL) };

	if (!arr || store_agents_list(app->store, agents_cb, &c)) {
		json_decref(arr);
		http_reply_store_failure(resp);
		return;
	}
	reply_json_value(resp, 200, json_pack("{s:o}", "agents", arr));
}

void handle_agent_get(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct store_agent a;
	json_t *o;
	int ret;

	if (!agent_id_valid(req->arg[0])) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent with this id");
		return;
	}
	ret = store_agent_get(app->store, req->arg[0], &a);
	if (ret == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent \"%s\"", req->arg[0]);
		return;
	}
	if (ret) {
		http_reply_store_failure(resp);
		return;
	}
	o = agent_json(app, &a, (int64_t)time(NULL));
	if (o) {
		char *ek_cert = base64_encode_alloc(a.ek_cert, a.ek_cert_len);
		char *ak_pub = base64_encode_alloc(a.ak_pub, a.ak_pub_len);

		json_object_set_new(o, "ek_cert", ek_cert ? json_string(ek_cert) : json_null());
		json_object_set_new(o, "ak_pub", ak_pub ? json_string(ak_pub) : json_null());
		free(ek_cert);
		free(ak_pub);
		json_object_set_new(o, "boot", boot_json(app, a.id));
	}
	store_agent_release(&a);
	reply_json_value(resp, 200, o);
}

static int verdicts_cb(void *arg, const struct store_verdict *v)
{
	json_t *reasons = json_loads(v->reasons_json, 0, NULL);
	json_t *o = json_pack("{s:I, s:I, s:I, s:s, s:b, s:o, s:I}", "id", (json_int_t)v->id,
			      "time", (json_int_t)v->time, "boot_number",
			      (json_int_t)v->boot_number, "verdict",
			      v->trusted ? "trusted" : "untrusted", "trusted", v->trusted,
			      "reasons", reasons ? reasons : json_array(), "next_offset",
			      (json_int_t)v->next_offset);

	return o && json_array_append_new(arg, o) == 0 ? 0 : -ENOMEM;
}

void handle_agent_verdicts(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct store_agent a;
	json_t *arr;
	int ret;

	if (!agent_id_valid(req->arg[0]) ||
	    (ret = store_agent_get(app->store, req->arg[0], &a)) == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no such agent");
		return;
	}
	if (ret) {
		http_reply_store_failure(resp);
		return;
	}
	store_agent_release(&a);
	arr = json_array();
	if (!arr || store_verdicts_list(app->store, req->arg[0], query_limit(req), verdicts_cb, arr)) {
		json_decref(arr);
		http_reply_store_failure(resp);
		return;
	}
	reply_json_value(resp, 200, json_pack("{s:s, s:o}", "agent_id", req->arg[0], "verdicts", arr));
}

bool policy_name_valid(const char *s)
{
	/* Same alphabet as agent ids, shorter. */
	return s && strlen(s) <= LIMIT_POLICY_NAME && agent_id_valid(s);
}

void handle_agent_set_policy(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	json_error_t jerr;
	json_t *body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	const char *name = body ? json_string_value(json_object_get(body, "policy")) : NULL;
	char *json = NULL;
	int64_t ver;
	int ret;

	if (!json_is_object(body) || !policy_name_valid(name)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "want {\"policy\": NAME}");
		goto out;
	}
	if (strcmp(name, POLICY_DEFAULT_NAME) != 0) {
		ret = store_policy_get(app->store, name, &json, &ver);
		if (ret == -ENOENT) {
			http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no policy \"%s\"", name);
			goto out;
		}
		if (ret) {
			http_reply_store_failure(resp);
			goto out;
		}
	}
	ret = agent_id_valid(req->arg[0])
		      ? store_agent_set_policy(app->store, req->arg[0],
					       strcmp(name, POLICY_DEFAULT_NAME) ? name : "")
		      : -ENOENT;
	if (ret == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no such agent");
		goto out;
	}
	if (ret) {
		http_reply_store_failure(resp);
		goto out;
	}
	agentcache_invalidate(app->agents, req->arg[0]); /* the store has the new name */
	log_info("policy: agent \"%s\" now uses policy \"%s\"", req->arg[0], name);
	reply_json_value(resp, 200, json_pack("{s:s, s:s}", "agent_id", req->arg[0], "policy", name));
out:
	free(json);
	json_decref(body);
}

/*
 * The policy and amendment an agent is judged by now (store_round_context(), the parsed copies
 * rounds use): looked up once per agent of a list, for its digest_mismatch violations.
 */
#define JUDGED_BY_AGENTS 16u

struct judged_by {
	char agent[LIMIT_AGENT_ID + 1];
	const char *policy; /* its name */
	int64_t policy_version, amendment_version;
	struct policy *p, *am; /* NULL: no policy configured, no amendment */
	bool failed;
	struct store_round_ctx ctx;
};

struct violations_ctx {
	struct app *app;
	json_t *arr;
	struct judged_by *by; /* JUDGED_BY_AGENTS of them, allocated at the first need */
	unsigned nby;
};

static void judged_by_release(struct violations_ctx *c)
{
	for (unsigned i = 0; c->by && i < c->nby; i++) {
		policy_unref(c->by[i].p);
		policy_unref(c->by[i].am);
	}
	c->nby = 0;
}

static const struct judged_by *judged_by(struct violations_ctx *c, const char *agent)
{
	char amendment[STORE_AMENDMENT_NAME_MAX + 1];
	struct judged_by *b;

	for (unsigned i = 0; c->by && i < c->nby; i++)
		if (!strcmp(c->by[i].agent, agent))
			return &c->by[i];
	if (!c->by && !(c->by = calloc(JUDGED_BY_AGENTS, sizeof(*c->by))))
		return NULL;
	if (c->nby == JUDGED_BY_AGENTS)
		judged_by_release(c); /* a bound on what one list holds, not a cache */
	b = &c->by[c->nby++];
	memset(b, 0, sizeof(*b));
	snprintf(b->agent, sizeof(b->agent), "%s", agent);
	if (store_round_context(c->app->store, agent, POLICY_DEFAULT_NAME, &b->ctx)) {
		b->failed = true;
		return b;
	}
	b->policy = b->ctx.policy[0] ? b->ctx.policy : POLICY_DEFAULT_NAME;
	b->policy_version = b->ctx.policy_version;
	b->amendment_version = b->ctx.amendment_version;
	store_amendment_name(agent, amendment);
	b->failed = policy_cache_get_version(&c->app->policies, c->app->store, b->policy,
					     b->policy_version, &b->p) ||
		    (b->amendment_version &&
		     policy_cache_get_version(&c->app->amendments, c->app->store, amendment,
					      b->amendment_version, &b->am));
	return b;
}

/*
 * For a digest_mismatch: what the agent's policy and its amendment list for the path now, beside
 * the digest measured: {policy, policy_version, digests, amendment_version, amendment_digests}
 * ([] where the path is not listed, e.g. after a rollback). NULL when they cannot be read.
 */
static json_t *expected_json(struct violations_ctx *c, const char *agent, const char *path,
			     size_t path_len)
{
	const struct judged_by *b = judged_by(c, agent);
	json_t *d, *ad;

	if (!b || b->failed)
		return NULL;
	d = policy_json_path_digests(b->p, path, path_len);
	ad = policy_json_path_digests(b->am, path, path_len);
	return json_pack("{s:s, s:I, s:o, s:I, s:o}", "policy", b->policy, "policy_version",
			 (json_int_t)b->policy_version, "digests", d ? d : json_array(),
			 "amendment_version", (json_int_t)b->amendment_version, "amendment_digests",
			 ad ? ad : json_array());
}

/*
 * A stored violation as JSON. `path` is the path as text (proto/text.h: exact when it is UTF-8,
 * else escaped, and then `path_escaped` is true); `path_hex` is always its raw bytes. `approvable`
 * says whether approval can allow it (reasons.h), `recurs` names the decided violation it recurred
 * after.
 */
static json_t *violation_json(const struct store_violation *v)
{
	size_t plen = v->path_len < LIMIT_IMA_PATH ? v->path_len : LIMIT_IMA_PATH;
	char *text = malloc(TEXT_ESCAPED_MAX(LIMIT_IMA_PATH)), *hex = malloc(2 * plen + 1);
	enum reason reason;
	bool escaped;
	json_t *o = NULL;

	if (!text || !hex)
		goto out;
	escaped = text_render(v->path, plen, text, TEXT_ESCAPED_MAX(LIMIT_IMA_PATH));
	hex_encode((const uint8_t *)v->path, plen, hex);
	o = json_pack("{s:I, s:s, s:I, s:I, s:s, s:b, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:s, s:b,"
		      " s:I, s:s}",
		      "id", (json_int_t)v->id, "agent_id", v->agent, "boot_number",
		      (json_int_t)v->boot_number, "entry", (json_int_t)v->entry, "path", text,
		      "path_escaped", escaped, "path_hex", hex, "digest", v->digest, "template",
		      v->template_name, "reason", v->reason, "first_seen", (json_int_t)v->first_seen,
		      "last_seen", (json_int_t)v->last_seen, "count", (json_int_t)v->count, "state",
		      violation_state_str(v->state), "approvable",
		      reason_from_name(v->reason, &reason) &&
			      (reason_info(reason)->kind == REASON_KIND_LEARNABLE ||
			       reason_info(reason)->kind == REASON_KIND_BOOT_LEARNABLE),
		      "decided_at", (json_int_t)v->decided_at, "decision", v->decision);
	if (o && v->recurs)
		json_object_set_new(o, "recurs", json_integer(v->recurs));
out:
	free(text);
	free(hex);
	return o;
}

/*
 * Each digest_mismatch of the list gets its "expected" digests. After the list, not in its
 * callback: the store is not re-entered while it walks its rows (the SQLite store holds its
 * lock through the callbacks).
 */
static void add_expected(struct violations_ctx *c)
{
	uint8_t *raw = malloc(LIMIT_IMA_PATH);
	size_t i;
	json_t *o;

	if (!raw)
		return;
	json_array_foreach(c->arr, i, o) {
		const char *agent = json_string_value(json_object_get(o, "agent_id"));
		const char *reason = json_string_value(json_object_get(o, "reason"));
		json_t *hex = json_object_get(o, "path_hex"), *e;
		ssize_t n;

		if (!agent || !reason || !json_is_string(hex) ||
		    strcmp(reason, reason_name(REASON_DIGEST_MISMATCH)))
			continue;
		n = hex_decode(json_string_value(hex), json_string_length(hex), raw, LIMIT_IMA_PATH);
		if (n < 0)
			continue;
		e = expected_json(c, agent, (const char *)raw, (size_t)n);
		if (e)
			json_object_set_new(o, "expected", e);
	}
	free(raw);
}

static int violations_cb(void *arg, const struct store_violation *v)
{
	struct violations_ctx *c = arg;
	json_t *o = violation_json(v);

	return o && json_array_append_new(c->arr, o) == 0 ? 0 : -ENOMEM;
}

void handle_violations_list(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	const char *state = http_query(req, "state");
	const char *agent = http_query(req, "agent");
	struct violations_ctx c = { .app = app };
	int st = -1;

	if (state) {
		st = violation_state_from_str(state);
		if (st < 0) {
			http_reply_error(resp, PROTO_ERR_BAD_REQUEST,
					 "state must be open, approved or dismissed");
			return;
		}
	}
	if (agent && !agent_id_valid(agent)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "bad agent id");
		return;
	}
	c.arr = json_array();
	if (!c.arr || store_violations_list(app->store, st, agent, query_limit(req),
					    violations_cb, &c)) {
		json_decref(c.arr);
		http_reply_store_failure(resp);
		goto out;
	}
	add_expected(&c);
	reply_json_value(resp, 200, json_pack("{s:o}", "violations", c.arr));
out:
	judged_by_release(&c);
	free(c.by);
}

/* The {id} of /v1/violations/{id}/...: a positive decimal, else 0. */
static int64_t violation_id_arg(const struct http_request *req)
{
	char *end;
	long long id;

	errno = 0;
	id = strtoll(req->arg[0], &end, 10);
	if (errno || end == req->arg[0] || *end || id <= 0)
		return 0;
	return id;
}

/* The scope of an approval: the body's "scope" ("agent" when there is no body). */
static int approve_scope(const struct http_request *req, enum review_scope *scope)
{
	json_t *body, *v;
	int sc;

	*scope = REVIEW_SCOPE_AGENT;
	if (!req->body_len)
		return 0;
	body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, NULL);
	v = json_object_get(body, "scope");
	sc = review_scope_from_str(json_string_value(v));
	if (!json_is_object(body) || json_object_size(body) != (v ? 1u : 0u) || (v && sc < 0)) {
		json_decref(body);
		return -EINVAL;
	}
	if (v)
		*scope = (enum review_scope)sc;
	json_decref(body);
	return 0;
}

static void act_on_violation(const struct http_request *req, struct http_response *resp,
			     enum violation_state st)
{
	struct app *app = req->app;
	enum review_scope scope;
	struct review_result *r = calloc(1, sizeof(*r)); /* large: it holds a path as text */
	json_t *o;

	if (!r) {
		http_reply_error(resp, PROTO_ERR_INTERNAL, "out of memory");
		return;
	}
	if (approve_scope(req, &scope)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST,
				 "want no body or {\"scope\": \"agent\"|\"policy\"}");
		goto out;
	}
	switch (review_decide(app, violation_id_arg(req), st, scope, app_actor(req), r)) {
	case REVIEW_OK:
		break;
	case REVIEW_UNKNOWN_VIOLATION:
		http_reply_error(resp, PROTO_ERR_UNKNOWN_VIOLATION, "no such violation");
		goto out;
	case REVIEW_UNKNOWN_AGENT:
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "the violation's agent is gone");
		goto out;
	case REVIEW_ALREADY_DECIDED:
		http_reply_error(resp, PROTO_ERR_ALREADY_DECIDED, "%s", r->why);
		goto out;
	case REVIEW_NOT_APPROVABLE:
		http_reply_error(resp, PROTO_ERR_NOT_APPROVABLE, "%s", r->why);
		goto out;
	case REVIEW_UNKNOWN_POLICY:
		http_reply_error(resp, PROTO_ERR_REVIEW_UNKNOWN_POLICY, "%s", r->why);
		goto out;
	case REVIEW_POLICY_BROKEN:
		http_reply_error(resp, PROTO_ERR_INTERNAL, "%s", r->why);
		goto out;
	case REVIEW_CONFLICT:
		http_reply_error(resp, PROTO_ERR_POLICY_CONFLICT, "%s", r->why);
		goto out;
	case REVIEW_STORE_FAILED:
	case REVIEW_INTERNAL:
	default:
		http_reply_store_failure(resp);
		goto out;
	}
	/* What the call did, exactly: the scope, and the policy or amendment version it wrote. */
	o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:b, s:s, s:s}", "id",
		      (json_int_t)violation_id_arg(req), "state", violation_state_str(r->state),
		      "agent_id", r->agent, "reason", r->reason, "path", r->path, "path_escaped",
		      r->path_escaped, "digest", r->digest, "policy", r->policy);
	if (o && st == VIOLATION_APPROVED)
		json_object_set_new(o, "scope", json_string(review_scope_str(r->scope)));
	if (o && r->into_policy) {
		json_object_set_new(o, "policy_version", json_integer(r->policy_version));
		json_object_set_new(o, "policy_agents", json_integer((json_int_t)r->policy_agents));
	}
	if (o && r->into_amendment)
		json_object_set_new(o, "amendment_version", json_integer(r->amendment_version));
	reply_json_value(resp, 200, o);
out:
	free(r);
}

void handle_violation_approve(const struct http_request *req, struct http_response *resp)
{
	act_on_violation(req, resp, VIOLATION_APPROVED);
}

void handle_violation_dismiss(const struct http_request *req, struct http_response *resp)
{
	act_on_violation(req, resp, VIOLATION_DISMISSED);
}

void handle_policy_get(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	char *json = NULL;
	int64_t ver = 0;
	int ret;

	if (!policy_name_valid(req->arg[0])) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no such policy");
		return;
	}
	ret = store_policy_get(app->store, req->arg[0], &json, &ver);
	if (ret == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no policy \"%s\"", req->arg[0]);
		return;
	}
	if (ret) {
		http_reply_store_failure(resp);
		return;
	}
	http_reply_json(resp, 200, json);
}

/* The policy's import warnings as a JSON list of strings; NULL on allocation failure. */
static json_t *warnings_json(const struct policy *p)
{
	json_t *a = json_array();
	const char *w;
	size_t n;

	for (size_t i = 0; a && (w = policy_warning(p, i, &n)); i++) {
		if (json_array_append_new(a, json_stringn(w, n))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/*
 * GET /v1/policies/{name}/enforced: the newest version as the verifier judges by it, which for
 * an imported Keylime policy is not the text stored: {name, version, format ("attest" or
 * "keylime"), warnings (what the import could not enforce as Keylime would), policy (our format,
 * policy_to_json(): excludes translated to our syntax, Keylime's digests["boot_aggregate"] as
 * the boot_aggregate list, never a path), source_excludes (Keylime's patterns as written, in the
 * order of policy.excludes; [] for ours)}.
 */
void handle_policy_enforced(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	const char *name = req->arg[0];
	struct policy *p = NULL;
	json_t *doc = NULL, *src = NULL, *warnings = NULL;
	char *json = NULL, *ours = NULL;
	int64_t ver = 0;
	int ret;

	if (!policy_name_valid(name)) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no such policy");
		return;
	}
	ret = store_policy_get(app->store, name, &json, &ver);
	if (ret == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no policy \"%s\"", name);
		return;
	}
	/* The loaded copy rounds use (policy_cache.h): no second parse of a large policy. */
	if (ret || (ret = policy_cache_get_version(&app->policies, app->store, name, ver, &p)) || !p) {
		if (ret == -EINVAL)
			http_reply_error(resp, PROTO_ERR_POLICY_BROKEN, "policy \"%s\" v%lld does not load", name,
					 (long long)ver);
		else
			http_reply_store_failure(resp);
		goto out;
	}
	ours = policy_to_json(p);
	doc = ours ? json_loads(ours, 0, NULL) : NULL;
	warnings = warnings_json(p);
	if (policy_is_keylime(p)) {
		json_t *raw = json_loads(json, 0, NULL);

		src = json_incref(json_object_get(raw, "excludes"));
		json_decref(raw);
	}
	if (!json_is_array(src)) {
		json_decref(src);
		src = json_array();
	}
	if (!doc || !warnings || !src) {
		http_reply_error(resp, PROTO_ERR_INTERNAL, "out of memory");
		goto out;
	}
	reply_json_value(resp, 200,
			 json_pack("{s:s, s:I, s:s, s:O, s:O, s:O}", "name", name, "version",
				   (json_int_t)ver, "format", policy_is_keylime(p) ? "keylime" : "attest",
				   "warnings", warnings, "source_excludes", src, "policy", doc));
out:
	json_decref(doc);
	json_decref(src);
	json_decref(warnings);
	free(ours);
	free(json);
	policy_unref(p);
}

void handle_policy_put(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	char err[256] = "";
	struct policy *p;
	json_t *warnings;
	int64_t ver = 0;

	if (!policy_name_valid(req->arg[0])) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "bad policy name");
		return;
	}
	p = policy_load(req->body, req->body_len, err, sizeof(err));
	if (!p) {
		http_reply_error(resp, PROTO_ERR_BAD_POLICY, "%s", err[0] ? err : "policy does not load");
		return;
	}
	/* What an imported Keylime policy asks for that is not enforced as Keylime would: the
	 * operator sees it in the answer (attestctl prints it), nothing is dropped silently. */
	warnings = warnings_json(p);
	policy_unref(p);
	if (!warnings) {
		http_reply_error(resp, PROTO_ERR_INTERNAL, "out of memory");
		return;
	}
	if (store_policy_put(app->store, req->arg[0], req->body, app_actor(req), (int64_t)time(NULL),
			     &ver)) {
		json_decref(warnings);
		http_reply_store_failure(resp);
		return;
	}
	policy_cache_invalidate(&app->policies, req->arg[0]);
	log_info("policy: \"%s\" is now version %" PRId64 " (%zu import warnings)", req->arg[0], ver,
		 json_array_size(warnings));
	reply_json_value(resp, 200,
			 json_pack("{s:s, s:I, s:o}", "name", req->arg[0], "version", (json_int_t)ver,
				   "warnings", warnings));
}

/*
 * GET /v1/backup: a consistent copy of the store (store_backup()), streamed as the SQLite file
 * it is. Rounds go on while it is taken; the copy holds every verdict acknowledged before.
 */
void handle_backup(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	uint64_t size = 0;
	int fd = -1, ret;

	ret = store_backup(app->store, &fd, &size);
	if (ret) {
		http_reply_error(resp,
				 ret == -ENOSPC ? PROTO_ERR_BACKUP_NO_SPACE : PROTO_ERR_BACKUP_FAILED,
				 "the store could not be copied: %s", strerror(-ret));
		return;
	}
	log_info("backup: a copy of the store, %" PRIu64 " bytes, sent to an operator", size);
	http_reply_file(resp, 200, "application/vnd.sqlite3", fd, size);
}
