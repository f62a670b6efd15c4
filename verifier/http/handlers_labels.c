/*
 * Labels as HTTP (store.h, "Labels"): PUT /v1/agents/ID/labels changes an agent's labels
 * ({"set": {KEY: VALUE}, "remove": [KEY]}, either optional), POST /v1/policies/NAME/assign
 * assigns a policy to every agent with one label ({"label": "KEY=VALUE", "apply": BOOL}: without
 * apply it only says which agents it would change). The decisions and their audit records are
 * the store's; these handlers check the body and translate.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/log.h"
#include "proto/evidence.h"
#include "proto/labels.h"
#include "verifier/api/api_codec.h"
#include "verifier/facts/agentcache.h"
#include "verifier/http/handlers.h"
#include "verifier/policy/policy_cache.h"

#define LABELS_HELP "want {\"set\": {KEY: VALUE, ...}, \"remove\": [KEY, ...]} (at most " \
		    LIMIT_STR(LIMIT_LABELS) " each; a key of 1-" LIMIT_STR(LIMIT_LABEL_KEY)      \
		    " [A-Za-z0-9._/-], a value of 1-" LIMIT_STR(LIMIT_LABEL_VALUE)              \
		    " [A-Za-z0-9._:/-])"

/* The body's change into set and remove (borrowed from body); false if it is not one. */
static bool labels_body(json_t *body, struct store_label *set, size_t *nset,
			const char **remove, size_t *nremove)
{
	struct api_labels_change c;
	json_t *s, *r, *v;
	const char *key;
	size_t i;

	api_labels_change_decode(body, &c);
	s = c.set;
	r = c.remove;
	*nset = *nremove = 0;
	/* Every member the body has is one of these two, of its type. */
	if (!json_is_object(body) || json_object_size(body) != (size_t)(!!s + !!r) || (!s && !r) ||
	    (s && (!json_is_object(s) || json_object_size(s) > LIMIT_LABELS)) ||
	    (r && (!json_is_array(r) || json_array_size(r) > LIMIT_LABELS)))
		return false;
	json_object_foreach(s, key, v) {
		if (!label_key_valid(key) || !json_is_string(v) ||
		    !label_value_valid(json_string_value(v)))
			return false;
		set[*nset] = (struct store_label){ key, json_string_value(v) };
		(*nset)++;
	}
	json_array_foreach(r, i, v) {
		if (!json_is_string(v) || !label_key_valid(json_string_value(v)) ||
		    json_object_get(s, json_string_value(v)))
			return false;
		remove[(*nremove)++] = json_string_value(v);
	}
	return true;
}

static int one_label(void *arg, const char *key, const char *value)
{
	return json_object_set_new(arg, key, json_string(value)) ? -ENOMEM : 0;
}

static int registration_labels(void *arg, const struct store_registration *r)
{
	json_t **out = arg;

	*out = json_loads(r->labels, 0, NULL);
	return json_is_object(*out) ? 0 : -EINVAL;
}

/* The labels of id now: an enrolled agent's, else its registration's (NULL: a failure). */
static json_t *labels_now(struct app *app, const char *id)
{
	struct store_agent a;
	json_t *o = NULL;
	int ret = store_agent_get(app->store, id, &a);

	store_agent_release(&a);
	if (ret == -ENOENT) {
		if (store_registration_get(app->store, id, registration_labels, &o)) {
			json_decref(o);
			return NULL;
		}
		return o;
	}
	if (ret || !(o = json_object()) || store_agent_labels(app->store, id, one_label, o)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

void handle_agent_labels(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct store_label set[LIMIT_LABELS];
	const char *remove[LIMIT_LABELS], *id = req->arg[0];
	json_t *body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, NULL);
	json_t *now = NULL;
	size_t nset, nremove;
	int ret;

	if (!labels_body(body, set, &nset, remove, &nremove)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, LABELS_HELP);
		goto out;
	}
	ret = agent_id_valid(id) ? store_agent_labels_change(app->store, id, set, nset, remove,
							     nremove, app_actor(req),
							     (int64_t)time(NULL))
				 : -ENOENT;
	if (ret == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent (enrolled or registered)"
				 " with this id");
		goto out;
	}
	if (ret == -E2BIG) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "an agent has at most %u labels;"
				 " nothing changed", LIMIT_LABELS);
		goto out;
	}
	if (ret || !(now = labels_now(app, id))) {
		http_reply_store_failure(resp);
		goto out;
	}
	log_info("labels: agent \"%s\": %zu set, %zu removed by %s", id, nset, nremove,
		 app_actor(req));
	reply_json_value(resp, 200, api_agent_labels_encode(&(struct api_agent_labels){ id, now }));
out:
	json_decref(body);
}

static int add_id(void *arg, const char *id)
{
	return json_array_append_new(arg, json_string(id)) ? -ENOMEM : 0;
}

void handle_policy_assign(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	json_t *body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, NULL);
	const json_t *apply = api_assign_request_apply(body);
	json_t *ids = json_array();
	struct api_assign a;
	const char *label, *name = req->arg[0];
	char key[LIMIT_LABEL_KEY + 1], value[LIMIT_LABEL_VALUE + 1];
	uint64_t matching = 0;
	size_t i;
	json_t *v;
	int ret;

	api_assign_decode(body, &a);
	label = a.label;
	if (!ids)
		goto fail;
	if (!json_is_object(body) || json_object_size(body) != (size_t)(1 + !!apply) ||
	    !label || label_parse(label, key, value) || (apply && !json_is_boolean(apply))) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "want {\"label\": \"KEY=VALUE\","
				 " \"apply\": true|false}");
		goto out;
	}
	if (!policy_name_valid(name)) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no policy with this name");
		goto out;
	}
	ret = store_policy_assign_label(app->store, strcmp(name, POLICY_DEFAULT_NAME) ? name : "",
					&(struct store_label){ key, value }, json_is_true(apply),
					app_actor(req), (int64_t)time(NULL), add_id, ids,
					&matching);
	if (ret == -ENODATA) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no policy \"%s\"", name);
		goto out;
	}
	if (ret)
		goto fail;
	if (json_is_true(apply)) {
		json_array_foreach(ids, i, v)
			agentcache_invalidate(app->agents, json_string_value(v)); /* its new name */
		log_info("policy: %zu agents labelled %s now use policy \"%s\" (by %s)",
			 json_array_size(ids), label, name, app_actor(req));
	}
	reply_json_value(resp, 200, api_assign_encode(&(struct api_assign){
					    name, label, json_is_true(apply), (int64_t)matching,
					    ids }));
	ids = NULL; /* taken */
	goto out;
fail:
	http_reply_store_failure(resp);
out:
	json_decref(ids);
	json_decref(body);
}
