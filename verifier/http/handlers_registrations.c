/*
 * Admission as HTTP (store.h, "Registrations"): POST /v1/registrations registers agents before
 * they enroll, all of the body or none; GET /v1/registrations lists them; DELETE
 * /v1/registrations/ID deletes one. The checks are registrations.c's, the decision and its
 * audit records the store's; these handlers translate.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/log.h"
#include "proto/encoding.h"
#include "proto/evidence.h"
#include "verifier/api/api_codec.h"
#include "verifier/http/handlers.h"
#include "verifier/policy/policy_cache.h"
#include "verifier/service/registrations.h"

void handle_registrations_add(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct registration_batch batch;
	char why[512];
	size_t failed = 0;
	int ret;

	ret = registrations_parse(req->body, req->body_len, &batch, why, sizeof(why));
	if (ret == -EINVAL) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "%s; nothing was registered", why);
		goto out;
	}
	if (ret) {
		http_reply_error(resp, PROTO_ERR_INTERNAL, "out of memory");
		goto out;
	}
	ret = store_registrations_add(app->store, batch.regs, batch.n, app_actor(req),
				      (int64_t)time(NULL), &failed);
	if (ret == -EEXIST) {
		http_reply_error(resp, PROTO_ERR_REGISTRATION_EXISTS,
				 "registrations[%zu]: agent \"%s\" is registered already (or twice in"
				 " this request); nothing was registered", failed,
				 batch.regs[failed].agent);
		goto out;
	}
	if (ret == -ENODATA) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY,
				 "registrations[%zu]: no policy \"%s\"; nothing was registered", failed,
				 batch.regs[failed].policy);
		goto out;
	}
	if (ret) {
		http_reply_store_failure(resp);
		goto out;
	}
	log_info("admission: %zu agents registered by %s (the first \"%s\")", batch.n,
		 app_actor(req), batch.regs[0].agent);
	reply_json_value(resp, 201, api_registered_encode(&(struct api_registered){
					    .count = (int64_t)batch.n }));
out:
	registration_batch_release(&batch);
}

static int registration_json(void *arg, const struct store_registration *r)
{
	char hex[2 * sizeof(r->ek_sha256) + 1];
	json_t *labels = json_loads(r->labels ? r->labels : "{}", 0, NULL);
	json_t *o;

	hex_encode(r->ek_sha256, sizeof(r->ek_sha256), hex);
	o = api_registration_encode(&(struct api_registration){
		.listed = true,
		.agent_id = r->agent,
		.ek = store_ek_kind_str(r->ek_kind),
		.ek_sha256 = hex,
		.policy = r->policy && r->policy[0] ? r->policy : POLICY_DEFAULT_NAME,
		.labels = labels,
		.actor = r->actor,
		.created_at = r->created_at,
	});
	return o && !json_array_append_new(arg, o) ? 0 : -ENOMEM;
}

void handle_registrations_list(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	json_t *list = json_array();
	int ret = list ? store_registrations_list(app->store, registration_json, list) : -ENOMEM;

	if (ret) {
		json_decref(list);
		http_reply_store_failure(resp);
		return;
	}
	reply_json_value(resp, 200, api_list_encode(API_REGISTRATIONS, list));
}

void handle_registration_delete(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	const char *id = req->arg[0];
	int ret = agent_id_valid(id) ? store_registration_delete(app->store, id, app_actor(req),
								 (int64_t)time(NULL))
				     : -ENOENT;

	if (ret == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_REGISTRATION, "no registration of this id");
		return;
	}
	if (ret) {
		http_reply_store_failure(resp);
		return;
	}
	log_info("admission: the registration of agent \"%s\" deleted by %s", id, app_actor(req));
	reply_json_value(resp, 200, api_registered_encode(&(struct api_registered){ .agent_id = id }));
}
