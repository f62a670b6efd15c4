/*
 * Policy history and agents' amendments as HTTP (operator token):
 *
 *   GET  /v1/policies/{name}/versions          {name, agents, versions: [{version, actor, time, bytes,
 *                                              signed, signer}]} (signer: the keyid of the
 *                                              --policy-signers key that verified it, "" if none)
 *   GET  /v1/policies/{name}/versions/{v}      that version's JSON, as stored
 *   POST /v1/policies/{name}/rollback {version} {name, version, from, changed, agents}
 *   GET  /v1/agents/{id}/amendment             {agent_id, version, amendment} (version 0, null: none)
 *   GET  /v1/agents/{id}/amendment/versions    {agent_id, versions: [...]}
 *   POST /v1/agents/{id}/amendment/rollback {version}  (version 0: the empty amendment)
 *
 * The decisions are policy_history.c's; this file only turns them into status codes and JSON.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "verifier/api/api_codec.h"
#include "verifier/http/handlers.h"
#include "verifier/service/policy_history.h"

static int version_cb(void *arg, const struct store_policy_version *v)
{
	const struct api_policy_version pv = { v->version, v->actor, v->time, v->bytes, v->signed_,
					       v->signer };
	json_t *o = api_policy_version_encode(&pv);

	return o && json_array_append_new(arg, o) == 0 ? 0 : -ENOMEM;
}

/* The versions of `name` as a JSON array; NULL after an error reply. */
static json_t *versions_of(struct app *app, const char *name, struct http_response *resp)
{
	json_t *arr = json_array();

	if (!arr || store_policy_versions(app->store, name, version_cb, arr)) {
		json_decref(arr);
		http_reply_store_failure(resp);
		return NULL;
	}
	return arr;
}

/* A positive decimal version, or 0 for `allow_zero`; -1 if s is not one. */
static int64_t version_arg(const char *s, bool allow_zero)
{
	char *end;
	long long v;

	if (!s || !*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 18)
		return -1;
	v = strtoll(s, &end, 10);
	return v > 0 || (v == 0 && allow_zero) ? v : -1;
}

/* The body {"version": N} of a rollback; -1 if it is not one. */
static int64_t rollback_version(const struct http_request *req, bool allow_zero)
{
	json_t *body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, NULL);
	const json_t *v = api_rollback_request_version(body);
	int64_t version = -1;

	if (json_is_object(body) && json_object_size(body) == 1 && json_is_integer(v) &&
	    (json_integer_value(v) > 0 || (allow_zero && json_integer_value(v) == 0)))
		version = json_integer_value(v);
	json_decref(body);
	return version;
}

void handle_policy_versions(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	const char *name = req->arg[0];
	uint64_t agents = 0;
	json_t *arr;

	if (!policy_name_valid(name)) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no such policy");
		return;
	}
	arr = versions_of(app, name, resp);
	if (!arr)
		return;
	if (!json_array_size(arr)) {
		json_decref(arr);
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no policy \"%s\"", name);
		return;
	}
	if (store_policy_agents(app->store, strcmp(name, POLICY_DEFAULT_NAME) ? name : "",
				&agents)) {
		json_decref(arr);
		http_reply_store_failure(resp);
		return;
	}
	reply_json_value(resp, 200, api_policy_versions_encode(name, agents, arr));
}

void handle_policy_version_get(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	int64_t version = version_arg(req->arg[1], false);
	char *json = NULL;
	int ret;

	if (!policy_name_valid(req->arg[0]) || version < 0) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_VERSION, "no such policy version");
		return;
	}
	ret = store_policy_get_version(app->store, req->arg[0], version, &json);
	if (ret == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_VERSION, "policy \"%s\" has no version %lld",
				 req->arg[0], (long long)version);
		return;
	}
	if (ret) {
		http_reply_store_failure(resp);
		return;
	}
	http_reply_json(resp, 200, json);
}

/* A rollback's outcome as an answer; `id` names the agent for an amendment. */
static void reply_rollback(struct http_response *resp, enum history_status hs,
			   const struct history_rollback *r, const char *name, const char *id)
{
	switch (hs) {
	case HISTORY_OK:
		break;
	case HISTORY_UNKNOWN:
		http_reply_error(resp, id ? PROTO_ERR_UNKNOWN_AGENT : PROTO_ERR_UNKNOWN_POLICY,
				 id ? "agent \"%s\" has no amendment" : "no policy \"%s\"", id ? id : name);
		return;
	case HISTORY_UNKNOWN_VERSION:
		http_reply_error(resp, PROTO_ERR_UNKNOWN_VERSION, "no version %lld",
				 (long long)r->from);
		return;
	case HISTORY_BROKEN:
		http_reply_error(resp, PROTO_ERR_POLICY_VERSION_BROKEN, "%s", r->why);
		return;
	case HISTORY_UNSIGNED:
		http_reply_error(resp, PROTO_ERR_VERSION_UNSIGNED, "%s", r->why);
		return;
	case HISTORY_BAD_SIGNATURE:
		http_reply_error(resp, PROTO_ERR_VERSION_BAD_SIGNATURE, "%s", r->why);
		return;
	default:
		http_reply_store_failure(resp);
		return;
	}
	reply_json_value(resp, 200, api_rollback_encode(&(struct api_rollback){
		.version = r->version,
		.from = r->from,
		.changed = r->changed,
		.agents = (int64_t)r->agents,
		.signer = r->signer,
		.name = name,
		.agent_id = id,
	}));
}

void handle_policy_rollback(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct history_rollback r;
	int64_t version = rollback_version(req, false);

	if (!policy_name_valid(req->arg[0]) || version < 0) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "want {\"version\": N}, N >= 1");
		return;
	}
	reply_rollback(resp, policy_history_rollback(app, req->arg[0], false, version, app_actor(req), &r), &r,
		       req->arg[0], NULL);
}

/* The agent of an amendment URL exists; else a 404 is sent and false returned. */
static bool amendment_agent(const struct http_request *req, struct http_response *resp,
			    char name[STORE_AMENDMENT_NAME_MAX + 1])
{
	struct app *app = req->app;
	struct store_agent a;
	int ret = agent_id_valid(req->arg[0]) ? store_agent_get(app->store, req->arg[0], &a) : -ENOENT;

	if (ret) {
		if (ret == -ENOENT)
			http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no such agent");
		else
			http_reply_store_failure(resp);
		return false;
	}
	store_agent_release(&a);
	store_amendment_name(req->arg[0], name);
	return true;
}

void handle_amendment_get(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	char name[STORE_AMENDMENT_NAME_MAX + 1], *json = NULL;
	int64_t version = 0;
	json_t *doc = NULL;
	int ret;

	if (!amendment_agent(req, resp, name))
		return;
	ret = store_policy_get(app->store, name, &json, &version);
	if (ret && ret != -ENOENT) {
		http_reply_store_failure(resp);
		return;
	}
	if (json)
		doc = json_loads(json, 0, NULL);
	free(json);
	reply_json_value(resp, 200, api_amendment_encode(&(struct api_amendment){
		.agent_id = req->arg[0],
		.version = version,
		.amendment = doc,
	}));
}

void handle_amendment_versions(const struct http_request *req, struct http_response *resp)
{
	char name[STORE_AMENDMENT_NAME_MAX + 1];
	json_t *arr;

	if (!amendment_agent(req, resp, name))
		return;
	arr = versions_of(req->app, name, resp);
	if (arr)
		reply_json_value(resp, 200, api_agent_list_encode(req->arg[0], API_VERSIONS, arr));
}

void handle_amendment_rollback(const struct http_request *req, struct http_response *resp)
{
	char name[STORE_AMENDMENT_NAME_MAX + 1];
	struct history_rollback r;
	int64_t version = rollback_version(req, true);

	if (version < 0) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST,
				 "want {\"version\": N}, N >= 0 (0: the empty amendment)");
		return;
	}
	if (!amendment_agent(req, resp, name))
		return;
	reply_rollback(resp, policy_history_rollback(req->app, name, true, version, app_actor(req), &r), &r, name,
		       req->arg[0]);
}
