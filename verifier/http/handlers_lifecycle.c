/*
 * An agent's lifecycle as HTTP: DELETE /v1/agents/ID retires it (?purge=1 deletes
 * it and everything stored for it), POST /v1/agents/ID/reset lets its next enrollment bring a
 * new EK and AK, GET /v1/agents/ID/history lists what happened to it. The decisions and their
 * webhook events are the store's (store_agent_retire(), store_agent_reset()); these handlers
 * translate, and drop the agent's cached AK so that no round is judged with it afterwards.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/log.h"
#include "proto/evidence.h"
#include "verifier/facts/agentcache.h"
#include "verifier/api/api_codec.h"
#include "verifier/http/handlers.h"

/* ?purge=1 or ?purge=0 (absent: 0); -EINVAL for anything else. */
static int purge_arg(const struct http_request *req, bool *purge)
{
	const char *s = http_query(req, "purge");

	*purge = false;
	if (!s || !strcmp(s, "0"))
		return 0;
	if (!strcmp(s, "1")) {
		*purge = true;
		return 0;
	}
	return -EINVAL;
}

void handle_agent_retire(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	const char *id = req->arg[0];
	bool purge;
	int ret;

	if (purge_arg(req, &purge)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "purge must be 1 or 0");
		return;
	}
	if (!agent_id_valid(id)) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent with this id");
		return;
	}
	ret = store_agent_retire(app->store, id, (int64_t)time(NULL), app_actor(req), purge);
	agentcache_invalidate(app->agents, id);
	if (ret == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent \"%s\"", id);
		return;
	}
	if (ret == -EALREADY) {
		http_reply_error(resp, PROTO_ERR_ALREADY_RETIRED,
				 "agent \"%s\" is retired already; ?purge=1 deletes it and its history",
				 id);
		return;
	}
	if (ret) {
		http_reply_error(resp, PROTO_ERR_STORE_UNAVAILABLE,
				 "the verifier cannot use its store; nothing changed, retry later");
		return;
	}
	log_info("agent \"%s\" %s by %s", id, purge ? "purged" : "retired", app_actor(req));
	reply_json_value(resp, 200, api_agent_retired_encode(id, purge));
}

void handle_agent_reset(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	const char *id = req->arg[0];
	int ret;

	if (!agent_id_valid(id)) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent with this id");
		return;
	}
	ret = store_agent_reset(app->store, id, (int64_t)time(NULL), app_actor(req));
	if (ret == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent \"%s\"", id);
		return;
	}
	if (ret == -EALREADY) {
		http_reply_error(resp, PROTO_ERR_ALREADY_RESET,
				 "agent \"%s\" is reset already: its next enrollment may bring a new"
				 " EK and AK", id);
		return;
	}
	if (ret) {
		http_reply_error(resp, PROTO_ERR_STORE_UNAVAILABLE,
				 "the verifier cannot use its store; nothing changed, retry later");
		return;
	}
	log_info("agent \"%s\" reset by %s: its next enrollment may bring a new EK and AK", id,
		 app_actor(req));
	reply_json_value(resp, 200, api_agent_reset_encode(id));
}

static int history_cb(void *arg, const struct store_agent_event *e)
{
	const struct api_agent_event ev = { e->id, e->time, e->event, e->actor, e->detail };
	json_t *o = api_agent_event_encode(&ev);

	return o && json_array_append_new(arg, o) == 0 ? 0 : -ENOMEM;
}

void handle_agent_history(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	const char *id = req->arg[0];
	struct store_agent a;
	json_t *arr;
	int ret;

	if (!agent_id_valid(id) || (ret = store_agent_get(app->store, id, &a)) == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no such agent");
		return;
	}
	if (ret) {
		http_reply_store_failure(resp);
		return;
	}
	store_agent_release(&a);
	arr = json_array();
	if (!arr || store_agent_history(app->store, id, LIMIT_LIST_ROWS, history_cb, arr)) {
		json_decref(arr);
		http_reply_store_failure(resp);
		return;
	}
	reply_json_value(resp, 200, api_agent_list_encode(id, API_HISTORY, arr));
}
