/*
 * The operator's view of the agents: GET /v1/agents, /v1/agents/{id} (with its boot summary),
 * /v1/agents/{id}/verdicts, /v1/agents/{id}/counters, and PUT /v1/agents/{id}/policy (which
 * policy judges it). What each answer holds is decided here; how it is written, api_codec.h.
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
#include "proto/labels.h"
#include "proto/limits.h"
#include "verifier/facts/agentcache.h"
#include "verifier/api/api_codec.h"
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
		struct api_reason rs;
		const char *code;
		bool seen = false;

		api_reason_decode(r, &rs);
		code = rs.code;

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

/* The versions that judged a verdict (not known: a verdict from before they were recorded). */
static struct api_versions versions_of(const struct judged_versions *j)
{
	return (struct api_versions){ .known = j->known, .policy = j->policy,
				      .policy_version = j->policy_version,
				      .amendment_version = j->amendment_version };
}

/*
 * An agent as the API shows it (api_codec.h). Its "state" is "stale" for an active agent that
 * sent no valid evidence for --stale-intervals of its intervals (store_agent_stale()), and
 * "rejudging" for one whose boot was judged by other policy or amendment versions than those
 * that judge it now (judges.h): states of their own, so that neither ever looks trusted.
 * last_seen, interval and stale_after say why it is stale; judged_by names the versions of its
 * last verdict, policy_version and amendment_version today's. default_version: the default
 * policy's newest (judges_default_version()). The caller may add the detail, and encodes it
 * (which takes last_reasons) or drops last_reasons; name_hex has room for the AK name's hex.
 */
static void agent_view(const struct app *app, const struct store_agent *a, int64_t now,
		       int64_t default_version, char *name_hex, struct api_agent *v)
{
	bool stale = store_agent_stale(a, &app->liveness, now), rejudging = false;
	struct judged_versions current;

	judges_awaited(a, default_version, &rejudging, &current);
	hex_encode(a->ak_name, a->ak_name_len, name_hex);
	*v = (struct api_agent){
		.agent_id = a->id,
		.state = stale ? "stale" : rejudging ? "rejudging" : agent_state_str(a->state),
		.policy = a->policy[0] ? a->policy : POLICY_DEFAULT_NAME,
		.ak_name = name_hex,
		.created_at = a->created_at,
		.activated_at = a->activated_at,
		.boot_number = a->boot_number,
		.next_entry = a->next_entry,
		.last_verdict_at = a->last_verdict_at,
		.open_violations = a->open_violations,
		.retired_at = a->retired_at,
		.reset_at = a->reset_at,
		.last_seen = a->state == AGENT_PENDING ? 0 : store_agent_last_seen(a),
		.interval = a->interval ? a->interval : app->liveness.default_interval,
		.interval_reported = a->interval != 0,
		.stale_after = store_agent_stale_after(a, &app->liveness),
		.stale = stale,
		.rejudging = rejudging,
		.judged_by = versions_of(&a->judged),
		.policy_version = current.policy_version,
		.amendment_version = current.amendment_version,
		.last_reasons = a->last_reasons_json ? reason_codes(a->last_reasons_json) : NULL,
		.last_verdict = a->last_trusted < 0 ? NULL
				: a->last_trusted   ? "trusted"
						    : "untrusted",
	};
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
	(void)api_boot_log_annotate(o, &(struct api_boot_log){ hex, (int64_t)bl.log_len, bl.received_at });
	store_boot_log_release(&bl);
	return o;
}

static int one_label(void *arg, const char *key, const char *value)
{
	return json_object_set_new(arg, key, json_string(value)) ? -ENOMEM : 0;
}

static int registration_seen(void *arg, const struct store_registration *r)
{
	(void)arg;
	(void)r;
	return 0;
}

/* Agent id's labels, {KEY: VALUE}, into *out: 0, or the store's failure. */
static int agent_labels_json(struct app *app, const char *id, json_t **out)
{
	json_t *l = json_object();
	int ret = l ? store_agent_labels(app->store, id, one_label, l) : -ENOMEM;

	if (ret) {
		json_decref(l);
		l = NULL;
	}
	*out = l;
	return ret;
}

struct agents_ctx {
	const struct app *app;
	json_t *arr;
	int64_t now;
	int64_t default_version;
	const char *state;  /* only agents shown in this state (NULL: any) */
	const char *policy; /* only agents judged by this policy, as shown (NULL: any) */
	json_t *labels;     /* every agent's labels: {ID: {KEY: VALUE}} (store_labels_all()) */
	json_t *registered; /* the registered ids: {ID: true} (store_registrations_list()) */
	const char *label_key; /* only agents labelled so (NULL: any) */
	const char *label_value;
};

/* Collects store_labels_all() rows into {ID: {KEY: VALUE}}. */
static int fleet_label(void *arg, const char *agent, const char *key, const char *value)
{
	json_t *all = arg, *o = json_object_get(all, agent);

	if (!o && (!(o = json_object()) || json_object_set_new(all, agent, o)))
		return -ENOMEM;
	return json_object_set_new(o, key, json_string(value)) ? -ENOMEM : 0;
}

/* Collects the registered ids into {ID: true}. */
static int registered_id(void *arg, const struct store_registration *r)
{
	return json_object_set_new(arg, r->agent, json_true()) ? -ENOMEM : 0;
}

/* An agent's labels as the API shows them: an object, {} for none (a new reference). */
static json_t *labels_of(json_t *all, const char *id)
{
	json_t *o = json_object_get(all, id);

	return o ? json_incref(o) : json_object();
}

/* The states an agent is shown in (agent_view()), for ?state=. */
static const char *const shown_states[] = { "pending", "active", "stale", "rejudging", "retired" };

static bool shown_state_valid(const char *s)
{
	for (size_t i = 0; i < sizeof(shown_states) / sizeof(shown_states[0]); i++)
		if (!strcmp(s, shown_states[i]))
			return true;
	return false;
}

static int agents_cb(void *arg, const struct store_agent *a)
{
	struct agents_ctx *c = arg;
	char name_hex[2 * sizeof(a->ak_name) + 1];
	struct api_agent v;
	json_t *o;

	const char *lv = c->label_key ? json_string_value(json_object_get(
						json_object_get(c->labels, a->id), c->label_key))
				      : NULL;

	agent_view(c->app, a, c->now, c->default_version, name_hex, &v);
	if ((c->state && strcmp(v.state, c->state)) || (c->policy && strcmp(v.policy, c->policy)) ||
	    (c->label_key && (!lv || strcmp(lv, c->label_value)))) {
		json_decref(v.last_reasons); /* filtered out by what it is shown as */
		return 0;
	}
	v.labels = labels_of(c->labels, a->id);
	v.registered = json_object_get(c->registered, a->id) != NULL;
	o = api_agent_encode(&v);
	return o && json_array_append_new(c->arr, o) == 0 ? 0 : -ENOMEM;
}

/* GET /v1/agents[?state=S][&policy=NAME][&label=KEY=VALUE]: the fleet, or the agents shown
 * so, each with its labels and whether it is registered (admission). */
void handle_agents_list(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	char key[LIMIT_LABEL_KEY + 1], value[LIMIT_LABEL_VALUE + 1];
	const char *label = http_query(req, "label");
	json_t *arr;
	struct agents_ctx c = { app, NULL, (int64_t)time(NULL), 0, http_query(req, "state"),
				http_query(req, "policy"), NULL, NULL, NULL, NULL };

	if (c.state && !shown_state_valid(c.state)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "state: one of pending, active, stale,"
				 " rejudging, retired");
		return;
	}
	if (c.policy && !policy_name_valid(c.policy)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "policy: a policy name");
		return;
	}
	if (label && label_parse(label, key, value)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "label: KEY=VALUE (a key of 1-%u"
				 " [A-Za-z0-9._/-], a value of 1-%u [A-Za-z0-9._:/-])",
				 LIMIT_LABEL_KEY, LIMIT_LABEL_VALUE);
		return;
	}
	if (label) {
		c.label_key = key;
		c.label_value = value;
	}
	c.arr = arr = json_array();
	c.labels = json_object();
	c.registered = json_object();
	/* The store is not called from its own callbacks: the default's version and the labels
	 * first. */
	if (!arr || !c.labels || judges_default_version(app, &c.default_version) ||
	    !c.registered || store_registrations_list(app->store, registered_id, c.registered) ||
	    store_labels_all(app->store, fleet_label, c.labels) ||
	    store_agents_list(app->store, agents_cb, &c)) {
		json_decref(arr);
		json_decref(c.labels);
		json_decref(c.registered);
		http_reply_store_failure(resp);
		return;
	}
	json_decref(c.labels);
	json_decref(c.registered);
	reply_json_value(resp, 200, api_list_encode(API_AGENTS, arr));
}

void handle_agent_get(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct store_agent a;
	int64_t default_version = 0;
	char name_hex[2 * sizeof(a.ak_name) + 1];
	char *ek_cert, *ak_pub;
	struct api_agent v;
	json_t *o;
	int ret, reg;

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
	agent_view(app, &a, (int64_t)time(NULL), default_version, name_hex, &v);
	v.detail = true;
	v.ek_cert = ek_cert = base64_encode_alloc(a.ek_cert, a.ek_cert_len);
	v.ak_pub = ak_pub = base64_encode_alloc(a.ak_pub, a.ak_pub_len);
	v.boot = boot_json(app, a.id);
	reg = store_registration_get(app->store, a.id, registration_seen, NULL);
	v.registered = reg == 0;
	if (agent_labels_json(app, a.id, &v.labels) || (reg && reg != -ENOENT)) {
		json_decref(v.labels); /* encode takes them */
		json_decref(v.boot);
		json_decref(v.last_reasons);
		o = NULL; /* a 500 */
	} else {
		o = api_agent_encode(&v);
	}
	free(ek_cert);
	free(ak_pub);
	store_agent_release(&a);
	reply_json_value(resp, 200, o);
}

static int verdicts_cb(void *arg, const struct store_verdict *v)
{
	const struct api_verdict view = {
		.id = v->id,
		.time = v->time,
		.boot_number = v->boot_number,
		.verdict = v->trusted ? "trusted" : "untrusted",
		.trusted = v->trusted,
		.reasons = json_loads(v->reasons_json, 0, NULL),
		.next_offset = v->next_offset,
		.judged_by = versions_of(&v->judged),
	};
	json_t *o = api_verdict_encode(&view);

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
	reply_json_value(resp, 200, api_agent_list_encode(req->arg[0], API_VERDICTS, arr));
}

static int counters_cb(void *arg, const struct store_counters *c)
{
	const struct api_hour h = { c->hour, c->rounds, c->trusted, c->untrusted };
	json_t *o = api_hour_encode(&h);

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
	reply_json_value(resp, 200, api_agent_list_encode(req->arg[0], API_HOURS, arr));
}

void handle_agent_set_policy(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	json_error_t jerr;
	json_t *body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &jerr);
	struct api_agent_policy want = { 0 };
	const char *name;
	int ret;

	api_agent_policy_decode(body, &want);
	name = want.policy;
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
	reply_json_value(resp, 200, api_agent_policy_encode(&(struct api_agent_policy){ req->arg[0],
										       name }));
out:
	json_decref(body);
}
