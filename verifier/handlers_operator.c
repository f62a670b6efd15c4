/*
 * Operator calls (bearer token), health and metrics, the route table and the policy cache.
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

#include "proto/encoding.h"
#include "proto/limits.h"
#include "verifier/attest.h"
#include "verifier/agentcache.h"
#include "verifier/handlers.h"
#include "common/log.h"
#include "verifier/policy.h"

#define LIST_LIMIT_DEFAULT 100u
#define LIST_LIMIT_MAX 10000u

const struct http_route app_routes[] = {
	{ "POST", "/v1/agents", LIMIT_SMALL_BODY, false, "enroll", handle_enroll },
	{ "POST", "/v1/agents/*/activate", LIMIT_SMALL_BODY, false, "activate", handle_activate },
	{ "POST", "/v1/agents/*/challenges", LIMIT_SMALL_BODY, false, "challenge", handle_challenge },
	{ "POST", "/v1/agents/*/evidence", LIMIT_REQUEST_BODY, false, "evidence", handle_evidence },
	{ "GET", "/healthz", LIMIT_SMALL_BODY, false, "healthz", handle_healthz },
	{ "GET", "/metrics", LIMIT_SMALL_BODY, false, "metrics", handle_metrics },
	{ "GET", "/v1/agents", LIMIT_SMALL_BODY, true, "agents", handle_agents_list },
	{ "GET", "/v1/agents/*", LIMIT_SMALL_BODY, true, "agent", handle_agent_get },
	{ "GET", "/v1/agents/*/verdicts", LIMIT_SMALL_BODY, true, "verdicts", handle_agent_verdicts },
	{ "PUT", "/v1/agents/*/policy", LIMIT_SMALL_BODY, true, "agent_policy",
	  handle_agent_set_policy },
	{ "GET", "/v1/violations", LIMIT_SMALL_BODY, true, "violations", handle_violations_list },
	{ "POST", "/v1/violations/*/approve", LIMIT_SMALL_BODY, true, "approve",
	  handle_violation_approve },
	{ "POST", "/v1/violations/*/dismiss", LIMIT_SMALL_BODY, true, "dismiss",
	  handle_violation_dismiss },
	{ "GET", "/v1/policies/*", LIMIT_SMALL_BODY, true, "policy_get", handle_policy_get },
	/* Policies can be large (a whole distribution's digests). */
	{ "PUT", "/v1/policies/*", LIMIT_REQUEST_BODY, true, "policy_put", handle_policy_put },
	/* The web page: a fixed set of embedded files, public (its data needs the token). */
	{ "GET", "/ui/", LIMIT_SMALL_BODY, false, "ui", handle_ui_index },
	{ "GET", "/ui/app.js", LIMIT_SMALL_BODY, false, "ui", handle_ui_js },
	{ "GET", "/ui/style.css", LIMIT_SMALL_BODY, false, "ui", handle_ui_css },
};
const size_t app_nroutes = sizeof(app_routes) / sizeof(app_routes[0]);

bool app_authorize(void *arg, const struct http_request *req)
{
	struct app *app = arg;
	const char *h = http_header(req, "Authorization");
	uint8_t d[32];
	unsigned int dlen = 0;
	bool ok;

	if (!h || strncmp(h, "Bearer ", 7) != 0)
		return false;
	h += 7;
	/* Compare digests: constant time, and independent of the length of what was sent. */
	if (EVP_Digest(h, strlen(h), d, &dlen, EVP_sha256(), NULL) != 1 || dlen != sizeof(d))
		return false;
	ok = CRYPTO_memcmp(d, app->token_digest, sizeof(d)) == 0;
	if (!ok)
		log_warn("http: operator call with a wrong token");
	return ok;
}

void app_observe(void *arg, const struct http_route *route, unsigned status, double seconds)
{
	struct app *app = arg;

	(void)route;
	(void)seconds;
	APP_COUNT(app, http_requests);
	if (status >= 400)
		APP_COUNT(app, http_errors);
}

/* Policy cache ------------------------------------------------------------------------------ */

int app_policy_get(struct app *app, const char *name, struct policy **out)
{
	struct policy_slot *free_slot = NULL;
	char err[256] = "";
	char *json = NULL;
	int64_t version = 0;
	struct policy *p;
	int ret;

	*out = NULL;
	if (!name || !name[0])
		name = APP_DEFAULT_POLICY;
	/* The version alone first: every evidence asks, and the JSON may be 100 MB. */
	ret = store_policy_version(app->store, name, &version);
	if (ret == -ENOENT && !strcmp(name, APP_DEFAULT_POLICY))
		return 0; /* no default policy configured: nothing to judge by */
	if (ret)
		return ret;
	pthread_mutex_lock(&app->policy_lock);
	for (unsigned i = 0; i < APP_POLICY_CACHE; i++) {
		struct policy_slot *s = &app->policies[i];

		if (s->policy && !strcmp(s->name, name) && s->version == version) {
			*out = policy_ref(s->policy);
			goto out;
		}
		if (!s->policy && !free_slot)
			free_slot = s;
	}
	/* A miss: load the newest (it may be newer than the version just read). */
	ret = store_policy_get(app->store, name, &json, &version);
	if (ret)
		goto out;
	p = policy_load(json, strlen(json), err, sizeof(err));
	if (!p) {
		log_error("policy: stored policy \"%s\" version %" PRId64 " does not load: %s", name,
			  version, err);
		ret = -EINVAL;
		goto out;
	}
	if (!free_slot) {
		/* Full: evict the first slot; agents holding it keep their reference. */
		free_slot = &app->policies[0];
		policy_unref(free_slot->policy);
		free_slot->policy = NULL;
	}
	snprintf(free_slot->name, sizeof(free_slot->name), "%s", name);
	free_slot->version = version;
	free_slot->policy = p;
	*out = policy_ref(p);
out:
	pthread_mutex_unlock(&app->policy_lock);
	free(json);
	return ret;
}

void app_policy_invalidate(struct app *app, const char *name)
{
	pthread_mutex_lock(&app->policy_lock);
	for (unsigned i = 0; i < APP_POLICY_CACHE; i++) {
		struct policy_slot *s = &app->policies[i];

		if (s->policy && !strcmp(s->name, name)) {
			policy_unref(s->policy);
			s->policy = NULL;
		}
	}
	pthread_mutex_unlock(&app->policy_lock);
}

void app_policies_release(struct app *app)
{
	for (unsigned i = 0; i < APP_POLICY_CACHE; i++) {
		policy_unref(app->policies[i].policy);
		app->policies[i].policy = NULL;
	}
}

/* Helpers ------------------------------------------------------------------------------------- */

static void reply_json_value(struct http_response *resp, unsigned status, json_t *v)
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
	return n > LIST_LIMIT_MAX ? LIST_LIMIT_MAX : (unsigned)n;
}

static json_t *agent_json(const struct store_agent *a)
{
	char name_hex[2 * sizeof(a->ak_name) + 1];
	json_t *o;

	hex_encode(a->ak_name, a->ak_name_len, name_hex);
	o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "agent_id", a->id,
		      "state", agent_state_str(a->state), "policy",
		      a->policy[0] ? a->policy : APP_DEFAULT_POLICY, "ak_name", name_hex,
		      "created_at", (json_int_t)a->created_at, "activated_at",
		      (json_int_t)a->activated_at, "boot_number", (json_int_t)a->boot_number,
		      "next_entry", (json_int_t)a->next_entry, "last_verdict_at",
		      (json_int_t)a->last_verdict_at, "open_violations",
		      (json_int_t)a->open_violations);
	if (o)
		json_object_set_new(o, "last_verdict",
				    a->last_trusted < 0 ? json_null()
							: json_string(a->last_trusted ? "trusted"
										      : "untrusted"));
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

static uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void handle_metrics(const struct http_request *req, struct http_response *resp)
{
	static const char *const bounds[APP_LATENCY_BUCKETS] = {
		"0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"
	};
	struct app *app = req->app;
	const struct app_metrics *m = &app->metrics;
	struct store_counts c;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	uint64_t cum = 0;

	if (store_counts(app->store, &c)) {
		http_reply_error(resp, 503, "store_unavailable", "the store does not answer");
		return;
	}
	f = open_memstream(&buf, &len);
	if (!f) {
		http_reply_error(resp, 500, "internal", "out of memory");
		return;
	}
	fprintf(f, "# HELP attest_attestations_total Evidence answered since start, by result.\n"
		   "# TYPE attest_attestations_total counter\n"
		   "attest_attestations_total{result=\"trusted\"} %" PRIu64 "\n"
		   "attest_attestations_total{result=\"untrusted\"} %" PRIu64 "\n"
		   "attest_attestations_total{result=\"refused\"} %" PRIu64 "\n",
		ld(&m->attest_trusted), ld(&m->attest_untrusted), ld(&m->attest_refused));
	fprintf(f, "# HELP attest_verdicts_stored Verdicts in the store, by result.\n"
		   "# TYPE attest_verdicts_stored gauge\n"
		   "attest_verdicts_stored{result=\"trusted\"} %" PRIu64 "\n"
		   "attest_verdicts_stored{result=\"untrusted\"} %" PRIu64 "\n",
		c.verdicts_trusted, c.verdicts_untrusted);
	fprintf(f, "# HELP attest_agents Enrolled agents by state.\n"
		   "# TYPE attest_agents gauge\n"
		   "attest_agents{state=\"pending\"} %" PRIu64 "\n"
		   "attest_agents{state=\"active\"} %" PRIu64 "\n",
		c.agents_pending, c.agents_active);
	fprintf(f, "# HELP attest_violations_open Violations waiting for operator review.\n"
		   "# TYPE attest_violations_open gauge\n"
		   "attest_violations_open %" PRIu64 "\n",
		c.violations_open);
	fprintf(f, "# HELP attest_enrollments_total Enrollment requests by result.\n"
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
	fprintf(f, "# HELP attest_evidence_seconds Time to judge and store one piece of evidence.\n"
		   "# TYPE attest_evidence_seconds histogram\n");
	for (unsigned i = 0; i < APP_LATENCY_BUCKETS; i++) {
		cum += ld(&m->latency_bucket[i]);
		fprintf(f, "attest_evidence_seconds_bucket{le=\"%s\"} %" PRIu64 "\n", bounds[i], cum);
	}
	fprintf(f, "attest_evidence_seconds_sum %.6f\nattest_evidence_seconds_count %" PRIu64 "\n",
		(double)ld(&m->latency_sum_us) / 1e6, ld(&m->latency_count));
	if (fclose(f) != 0 || !buf) {
		free(buf);
		http_reply_error(resp, 500, "internal", "out of memory");
		return;
	}
	http_reply_json(resp, 200, buf);
	resp->content_type = "text/plain; version=0.0.4";
}

static int agents_cb(void *arg, const struct store_agent *a)
{
	json_t *o = agent_json(a);

	return o && json_array_append_new(arg, o) == 0 ? 0 : -ENOMEM;
}

void handle_agents_list(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	json_t *arr = json_array();

	if (!arr || store_agents_list(app->store, agents_cb, arr)) {
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
	o = agent_json(&a);
	if (o) {
		char *ek_cert = base64_encode_alloc(a.ek_cert, a.ek_cert_len);
		char *ak_pub = base64_encode_alloc(a.ak_pub, a.ak_pub_len);

		json_object_set_new(o, "ek_cert", ek_cert ? json_string(ek_cert) : json_null());
		json_object_set_new(o, "ak_pub", ak_pub ? json_string(ak_pub) : json_null());
		free(ek_cert);
		free(ak_pub);
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

static bool policy_name_valid(const char *s)
{
	/* Same alphabet as agent ids, shorter. */
	return s && strlen(s) <= STORE_POLICY_NAME_MAX && agent_id_valid(s);
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
	if (strcmp(name, APP_DEFAULT_POLICY) != 0) {
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
					       strcmp(name, APP_DEFAULT_POLICY) ? name : "")
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

static int violations_cb(void *arg, const struct store_violation *v)
{
	struct violations_ctx *c = arg;
	json_t *o = json_pack("{s:I, s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:s}", "id",
			      (json_int_t)v->id, "agent_id", v->agent, "boot_number",
			      (json_int_t)v->boot_number, "entry", (json_int_t)v->entry, "path",
			      v->path, "digest", v->digest, "template", v->template_name,
			      "reason", v->reason, "first_seen", (json_int_t)v->first_seen,
			      "last_seen", (json_int_t)v->last_seen, "count",
			      (json_int_t)v->count, "state", violation_state_str(v->state));

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

static void reply_violation_state(struct http_response *resp, int64_t id,
				  enum violation_state st, const char *policy, int64_t version)
{
	json_t *o = json_pack("{s:I, s:s}", "id", (json_int_t)id, "state", violation_state_str(st));

	if (o && policy) {
		json_object_set_new(o, "policy", json_string(policy));
		json_object_set_new(o, "policy_version", json_integer(version));
	}
	reply_json_value(resp, 200, o);
}

/* A copy of the violation an operator acts on (the store's strings die with its cursor). */
struct violation_copy {
	char agent[LIMIT_AGENT_ID + 1];
	char path[LIMIT_IMA_PATH + 1];
	char digest[ATTEST_DIGEST_TEXT_MAX + 1];
	char reason[32];
};

static int copy_violation(void *arg, const struct store_violation *v)
{
	struct violation_copy *c = arg;

	snprintf(c->agent, sizeof(c->agent), "%s", v->agent ? v->agent : "");
	snprintf(c->path, sizeof(c->path), "%s", v->path ? v->path : "");
	snprintf(c->digest, sizeof(c->digest), "%s", v->digest ? v->digest : "");
	snprintf(c->reason, sizeof(c->reason), "%s", v->reason ? v->reason : "");
	return 0;
}

/*
 * Adds the violation's path and digest to the agent's policy as a new version (actor
 * "operator"). Serialised by a lock so two approvals never lose each other's digest.
 * Returns 0 with the policy name and version, or an HTTP status after replying.
 */
static int approve_into_policy(struct app *app, const struct violation_copy *vc,
			       struct http_response *resp, char *name, size_t name_cap,
			       int64_t *version)
{
	static pthread_mutex_t approve_lock = PTHREAD_MUTEX_INITIALIZER;
	struct store_agent a;
	struct policy *p = NULL;
	char *json = NULL, *out = NULL, err[160] = "";
	const char *colon = strchr(vc->digest, ':');
	uint8_t digest[64];
	ssize_t dlen = -1;
	uint16_t alg = 0;
	int status = 500, ret;

	if (colon) {
		alg = policy_alg_from_name(vc->digest, (size_t)(colon - vc->digest));
		dlen = hex_decode(colon + 1, strlen(colon + 1), digest, sizeof(digest));
	}
	if (!alg || dlen <= 0) {
		http_reply_error(resp, 409, "not_approvable", "violation has no usable digest");
		return 409;
	}
	memset(&a, 0, sizeof(a));
	if (store_agent_get(app->store, vc->agent, &a)) {
		http_reply_error(resp, 404, "unknown_agent", "the violation's agent is gone");
		return 404;
	}
	snprintf(name, name_cap, "%s", a.policy[0] ? a.policy : "default");
	store_agent_release(&a);

	pthread_mutex_lock(&approve_lock);
	ret = store_policy_get(app->store, name, &json, version);
	if (ret == -ENOENT)
		p = policy_new();
	else if (ret == 0)
		p = policy_load(json, strlen(json), err, sizeof(err));
	if (!p) {
		http_reply_error(resp, 500, "internal", "cannot load policy \"%s\": %s", name, err);
		goto out;
	}
	ret = policy_add_digest(p, vc->path, alg, digest, (size_t)dlen);
	if (ret) {
		http_reply_error(resp, 409, "not_approvable", "cannot add \"%s\" to the policy: %s",
				 vc->path, strerror(-ret));
		status = 409;
		goto out;
	}
	out = policy_to_json(p);
	if (!out || store_policy_put(app->store, name, out, "operator", (int64_t)time(NULL),
				     version)) {
		http_reply_error(resp, 500, "internal", "store failure");
		goto out;
	}
	app_policy_invalidate(app, name);
	status = 0;
out:
	pthread_mutex_unlock(&approve_lock);
	policy_free(p);
	free(json);
	free(out);
	return status;
}

static void act_on_violation(const struct http_request *req, struct http_response *resp,
			     enum violation_state st)
{
	struct app *app = req->app;
	struct violation_copy vc;
	int64_t id = violation_id_arg(req), version = 0;
	char policy[STORE_POLICY_NAME_MAX + 1];
	bool into_policy = false;
	int ret;

	memset(&vc, 0, sizeof(vc));
	ret = id ? store_violation_get(app->store, id, copy_violation, &vc) : -ENOENT;
	if (ret == -ENOENT) {
		http_reply_error(resp, 404, "unknown_violation", "no such violation");
		return;
	}
	if (ret) {
		http_reply_error(resp, 500, "internal", "store failure");
		return;
	}
	/*
	 * Approving a file the allowlist did not know teaches the policy that file; the next
	 * attestation is judged against the new version. Other kinds (violation entries,
	 * boot_aggregate) have nothing to learn: approval only closes them.
	 */
	if (st == VIOLATION_APPROVED &&
	    (!strcmp(vc.reason, "not_in_allowlist") || !strcmp(vc.reason, "digest_mismatch"))) {
		if (approve_into_policy(app, &vc, resp, policy, sizeof(policy), &version))
			return;
		into_policy = true;
	}
	ret = store_violation_set_state(app->store, id, st);
	if (ret) {
		http_reply_error(resp, ret == -ENOENT ? 404 : 500,
				 ret == -ENOENT ? "unknown_violation" : "internal", "cannot update");
		return;
	}
	log_info("violation %lld (%s \"%s\") %s by operator%s%s", (long long)id, vc.reason, vc.path,
		 violation_state_str(st), into_policy ? "; added to policy " : "",
		 into_policy ? policy : "");
	reply_violation_state(resp, id, st, into_policy ? policy : NULL, version);
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

void handle_policy_put(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	char err[256] = "";
	struct policy *p;
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
	policy_unref(p);
	if (store_policy_put(app->store, req->arg[0], req->body, "operator", (int64_t)time(NULL),
			     &ver)) {
		http_reply_error(resp, 500, "internal", "store failure");
		return;
	}
	app_policy_invalidate(app, req->arg[0]);
	log_info("policy: \"%s\" is now version %" PRId64, req->arg[0], ver);
	reply_json_value(resp, 200,
			 json_pack("{s:s, s:I}", "name", req->arg[0], "version", (json_int_t)ver));
}
