/*
 * The operator's view of the agents: GET /v1/agents, /v1/agents/{id} (with its boot summary),
 * /v1/agents/{id}/verdicts, and PUT /v1/agents/{id}/policy (which policy judges it).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/log.h"
#include "proto/encoding.h"
#include "proto/limits.h"
#include "verifier/facts/agentcache.h"
#include "verifier/http/handlers.h"
#include "verifier/policy/policy.h"
#include "verifier/service/judges.h"

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

/* The versions that judged a verdict (null: not recorded, a verdict from before they were). */
static json_t *versions_json(const struct judged_versions *j)
{
	if (!j->known)
		return json_null();
	return json_pack("{s:s, s:I, s:I}", "policy", j->policy, "policy_version",
			 (json_int_t)j->policy_version, "amendment_version",
			 (json_int_t)j->amendment_version);
}

/*
 * An agent as JSON. Its "state" is "stale" for an active agent that sent no valid evidence
 * for --stale-intervals of its intervals (store_agent_stale()), and "rejudging" for one whose
 * boot was judged by other policy or amendment versions than those that judge it now
 * (judges.h): states of their own, so that neither ever looks trusted. "last_seen",
 * "interval" and "stale_after" say why it is stale; "judged_by" names the versions of its last
 * verdict, "policy_version" and "amendment_version" today's. default_version: the default
 * policy's newest (judges_default_version()).
 */
static json_t *agent_json(const struct app *app, const struct store_agent *a, int64_t now,
			  int64_t default_version)
{
	bool stale = store_agent_stale(a, &app->liveness, now), rejudging = false;
	struct judged_versions current;
	char name_hex[2 * sizeof(a->ak_name) + 1];
	json_t *o;

	judges_awaited(a, default_version, &rejudging, &current);
	hex_encode(a->ak_name, a->ak_name_len, name_hex);
	o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "agent_id", a->id,
		      "state", stale ? "stale" : rejudging ? "rejudging" : agent_state_str(a->state),
		      "policy",
		      a->policy[0] ? a->policy : POLICY_DEFAULT_NAME, "ak_name", name_hex,
		      "created_at", (json_int_t)a->created_at, "activated_at",
		      (json_int_t)a->activated_at, "boot_number", (json_int_t)a->boot_number,
		      "next_entry", (json_int_t)a->next_entry, "last_verdict_at",
		      (json_int_t)a->last_verdict_at, "open_violations",
		      (json_int_t)a->open_violations);
	if (o) {
		/* Lifecycle: when it was retired, and whether its next enrollment may
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
		json_object_set_new(o, "rejudging", json_boolean(rejudging));
		json_object_set_new(o, "judged_by", versions_json(&a->judged));
		json_object_set_new(o, "policy_version", json_integer(current.policy_version));
		json_object_set_new(o, "amendment_version", json_integer(current.amendment_version));
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

struct agents_ctx {
	const struct app *app;
	json_t *arr;
	int64_t now;
	int64_t default_version;
	const char *state;  /* only agents shown in this state (NULL: any) */
	const char *policy; /* only agents judged by this policy, as shown (NULL: any) */
};

/* The states an agent is shown in (agent_json()), for ?state=. */
static const char *const shown_states[] = { "pending", "active", "stale", "rejudging", "retired" };

static bool shown_state_valid(const char *s)
{
	for (size_t i = 0; i < sizeof(shown_states) / sizeof(shown_states[0]); i++)
		if (!strcmp(s, shown_states[i]))
			return true;
	return false;
}

static bool field_is(json_t *o, const char *key, const char *want)
{
	return !want || !strcmp(json_string_value(json_object_get(o, key)), want);
}

static int agents_cb(void *arg, const struct store_agent *a)
{
	struct agents_ctx *c = arg;
	json_t *o = agent_json(c->app, a, c->now, c->default_version);

	if (o && !(field_is(o, "state", c->state) && field_is(o, "policy", c->policy))) {
		json_decref(o); /* filtered out by what it is shown as */
		return 0;
	}
	return o && json_array_append_new(c->arr, o) == 0 ? 0 : -ENOMEM;
}

/* GET /v1/agents[?state=S][&policy=NAME]: the fleet, or the agents shown so. */
void handle_agents_list(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	json_t *arr;
	struct agents_ctx c = { app, NULL, (int64_t)time(NULL), 0, http_query(req, "state"),
				http_query(req, "policy") };

	if (c.state && !shown_state_valid(c.state)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "state: one of pending, active, stale,"
				 " rejudging, retired");
		return;
	}
	if (c.policy && !policy_name_valid(c.policy)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "policy: a policy name");
		return;
	}
	c.arr = arr = json_array();
	/* The store is not called from its own callbacks: the default's version first. */
	if (!arr || judges_default_version(app, &c.default_version) ||
	    store_agents_list(app->store, agents_cb, &c)) {
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
	int64_t default_version = 0;
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
	if (judges_default_version(app, &default_version)) {
		store_agent_release(&a);
		http_reply_store_failure(resp);
		return;
	}
	o = agent_json(app, &a, (int64_t)time(NULL), default_version);
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

	if (o)
		json_object_set_new(o, "judged_by", versions_json(&v->judged));

	return o && json_array_append_new(arg, o) == 0 ? 0 : -ENOMEM;
}

void handle_agent_verdicts(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct store_agent a;
	json_t *arr;
	unsigned limit;
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
	if (!query_limit(req, resp, &limit))
		return;
	arr = json_array();
	if (!arr || store_verdicts_list(app->store, req->arg[0], limit, verdicts_cb, arr)) {
		json_decref(arr);
		http_reply_store_failure(resp);
		return;
	}
	reply_json_value(resp, 200, json_pack("{s:s, s:o}", "agent_id", req->arg[0], "verdicts", arr));
}

static int counters_cb(void *arg, const struct store_counters *c)
{
	json_t *o = json_pack("{s:I, s:I, s:I, s:I}", "hour", (json_int_t)c->hour, "rounds",
			      (json_int_t)c->rounds, "trusted", (json_int_t)c->trusted,
			      "untrusted", (json_int_t)c->untrusted);

	return o && json_array_append_new(arg, o) == 0 ? 0 : -ENOMEM;
}

/* The agent's hourly counters, newest hour first, at most ?limit= hours. */
void handle_agent_counters(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct store_agent a;
	json_t *arr;
	unsigned limit;
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
	if (!query_limit(req, resp, &limit))
		return;
	arr = json_array();
	if (!arr || store_counters_list(app->store, req->arg[0], 0, limit, counters_cb,
					arr)) {
		json_decref(arr);
		http_reply_store_failure(resp);
		return;
	}
	reply_json_value(resp, 200, json_pack("{s:s, s:o}", "agent_id", req->arg[0], "hours", arr));
}

void handle_agent_set_policy(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	json_error_t jerr;
	json_t *body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	const char *name = body ? json_string_value(json_object_get(body, "policy")) : NULL;
	int ret;

	if (!json_is_object(body) || !policy_name_valid(name)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "want {\"policy\": NAME}");
		goto out;
	}
	/* The store checks that the policy exists, serialized with its deletion. */
	ret = agent_id_valid(req->arg[0])
		      ? store_agent_set_policy(app->store, req->arg[0],
					       strcmp(name, POLICY_DEFAULT_NAME) ? name : "")
		      : -ENOENT;
	if (ret == -ENODATA) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no policy \"%s\"", name);
		goto out;
	}
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
	json_decref(body);
}
