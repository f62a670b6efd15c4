/*
 * Operator calls (bearer token), health and metrics, as HTTP: reads go to the store, decisions
 * on violations to review.c, the metrics text to metrics.c.
 */
#include <errno.h>
#include <inttypes.h>
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
#include "verifier/agentcache.h"
#include "verifier/handlers.h"
#include "common/log.h"
#include "verifier/policy.h"
#include "verifier/reasons.h"
#include "verifier/review.h"

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
		http_reply_error(resp, 503, "store_unavailable", "the store does not answer");
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
		http_reply_error(resp, 503, "store_unavailable", "the store does not answer");
		return;
	}
	mf.stale = f.stale;
	mf.last_verdict_samples = f.samples.len ? dynbuf_str(&f.samples) : NULL;
	text = metrics_render(&app->metrics, &c, &mf);
	dynbuf_release(&f.samples);
	if (!text) {
		http_reply_error(resp, 500, "internal", "out of memory");
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
		http_reply_error(resp, 500, "internal", "store failure");
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
		http_reply_error(resp, 404, "unknown_agent", "no agent with this id");
		return;
	}
	ret = store_agent_get(app->store, req->arg[0], &a);
	if (ret == -ENOENT) {
		http_reply_error(resp, 404, "unknown_agent", "no agent \"%s\"", req->arg[0]);
		return;
	}
	if (ret) {
		http_reply_error(resp, 500, "internal", "store failure");
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
		http_reply_error(resp, 404, "unknown_agent", "no such agent");
		return;
	}
	if (ret) {
		http_reply_error(resp, 500, "internal", "store failure");
		return;
	}
	store_agent_release(&a);
	arr = json_array();
	if (!arr || store_verdicts_list(app->store, req->arg[0], query_limit(req), verdicts_cb, arr)) {
		json_decref(arr);
		http_reply_error(resp, 500, "internal", "store failure");
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
		http_reply_error(resp, 400, "bad_request", "want {\"policy\": NAME}");
		goto out;
	}
	if (strcmp(name, POLICY_DEFAULT_NAME) != 0) {
		ret = store_policy_get(app->store, name, &json, &ver);
		if (ret == -ENOENT) {
			http_reply_error(resp, 404, "unknown_policy", "no policy \"%s\"", name);
			goto out;
		}
		if (ret) {
			http_reply_error(resp, 500, "internal", "store failure");
			goto out;
		}
	}
	ret = agent_id_valid(req->arg[0])
		      ? store_agent_set_policy(app->store, req->arg[0],
					       strcmp(name, POLICY_DEFAULT_NAME) ? name : "")
		      : -ENOENT;
	if (ret == -ENOENT) {
		http_reply_error(resp, 404, "unknown_agent", "no such agent");
		goto out;
	}
	if (ret) {
		http_reply_error(resp, 500, "internal", "store failure");
		goto out;
	}
	agentcache_invalidate(app->agents, req->arg[0]); /* the store has the new name */
	log_info("policy: agent \"%s\" now uses policy \"%s\"", req->arg[0], name);
	reply_json_value(resp, 200, json_pack("{s:s, s:s}", "agent_id", req->arg[0], "policy", name));
out:
	free(json);
	json_decref(body);
}

struct violations_ctx {
	json_t *arr;
};

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
	struct violations_ctx c = { 0 };
	int st = -1;

	if (state) {
		st = violation_state_from_str(state);
		if (st < 0) {
			http_reply_error(resp, 400, "bad_request",
					 "state must be open, approved or dismissed");
			return;
		}
	}
	if (agent && !agent_id_valid(agent)) {
		http_reply_error(resp, 400, "bad_request", "bad agent id");
		return;
	}
	c.arr = json_array();
	if (!c.arr || store_violations_list(app->store, st, agent, query_limit(req),
					    violations_cb, &c)) {
		json_decref(c.arr);
		http_reply_error(resp, 500, "internal", "store failure");
		return;
	}
	reply_json_value(resp, 200, json_pack("{s:o}", "violations", c.arr));
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
		http_reply_error(resp, 500, "internal", "out of memory");
		return;
	}
	if (approve_scope(req, &scope)) {
		http_reply_error(resp, 400, "bad_request",
				 "want no body or {\"scope\": \"agent\"|\"policy\"}");
		goto out;
	}
	switch (review_decide(app, violation_id_arg(req), st, scope, app_actor(req), r)) {
	case REVIEW_OK:
		break;
	case REVIEW_UNKNOWN_VIOLATION:
		http_reply_error(resp, 404, "unknown_violation", "no such violation");
		goto out;
	case REVIEW_UNKNOWN_AGENT:
		http_reply_error(resp, 404, "unknown_agent", "the violation's agent is gone");
		goto out;
	case REVIEW_ALREADY_DECIDED:
		http_reply_error(resp, 409, "already_decided", "%s", r->why);
		goto out;
	case REVIEW_NOT_APPROVABLE:
		http_reply_error(resp, 409, "not_approvable", "%s", r->why);
		goto out;
	case REVIEW_UNKNOWN_POLICY:
		http_reply_error(resp, 409, "unknown_policy", "%s", r->why);
		goto out;
	case REVIEW_POLICY_BROKEN:
		http_reply_error(resp, 500, "internal", "%s", r->why);
		goto out;
	case REVIEW_CONFLICT:
		http_reply_error(resp, 409, "policy_conflict", "%s", r->why);
		goto out;
	case REVIEW_STORE_FAILED:
	case REVIEW_INTERNAL:
	default:
		http_reply_error(resp, 500, "internal", "store failure");
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
		http_reply_error(resp, 404, "unknown_policy", "no such policy");
		return;
	}
	ret = store_policy_get(app->store, req->arg[0], &json, &ver);
	if (ret == -ENOENT) {
		http_reply_error(resp, 404, "unknown_policy", "no policy \"%s\"", req->arg[0]);
		return;
	}
	if (ret) {
		http_reply_error(resp, 500, "internal", "store failure");
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

void handle_policy_put(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	char err[256] = "";
	struct policy *p;
	json_t *warnings;
	int64_t ver = 0;

	if (!policy_name_valid(req->arg[0])) {
		http_reply_error(resp, 400, "bad_request", "bad policy name");
		return;
	}
	p = policy_load(req->body, req->body_len, err, sizeof(err));
	if (!p) {
		http_reply_error(resp, 400, "bad_policy", "%s", err[0] ? err : "policy does not load");
		return;
	}
	/* What an imported Keylime policy asks for that is not enforced as Keylime would: the
	 * operator sees it in the answer (attestctl prints it), nothing is dropped silently. */
	warnings = warnings_json(p);
	policy_unref(p);
	if (!warnings) {
		http_reply_error(resp, 500, "internal", "out of memory");
		return;
	}
	if (store_policy_put(app->store, req->arg[0], req->body, app_actor(req), (int64_t)time(NULL),
			     &ver)) {
		json_decref(warnings);
		http_reply_error(resp, 500, "internal", "store failure");
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
		http_reply_error(resp, ret == -ENOSPC ? 507 : 503, "backup_failed",
				 "the store could not be copied: %s", strerror(-ret));
		return;
	}
	log_info("backup: a copy of the store, %" PRIu64 " bytes, sent to an operator", size);
	http_reply_file(resp, 200, "application/vnd.sqlite3", fd, size);
}
