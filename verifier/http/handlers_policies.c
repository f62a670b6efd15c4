/*
 * Policies as HTTP: GET /v1/policies (every named policy), GET /v1/policies/{name} (the text
 * stored), .../enforced (what the verifier judges by), PUT (a new version, checked before it
 * is stored: a policy, or a DSSE envelope of one, which --policy-signers requires; see
 * service/policy_sign.h) and DELETE (an unused policy). Versions and rollbacks are
 * handlers_policy_history.c's.
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
#include "verifier/api/api_codec.h"
#include "verifier/http/handlers.h"
#include "verifier/policy/policy.h"
#include "verifier/service/policy_sign.h"

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
	reply_json_value(resp, 200, api_enforced_encode(&(struct api_enforced){
					    name, ver, policy_is_keylime(p) ? "keylime" : "attest",
					    json_incref(warnings), json_incref(src), json_incref(doc) }));
out:
	json_decref(doc);
	json_decref(src);
	json_decref(warnings);
	free(ours);
	free(json);
	policy_unref(p);
}

/*
 * PUT /v1/policies/{name}: {name, version, warnings, signer}; signer is the keyid of the
 * --policy-signers key that verified the envelope, "" for a plain policy or an envelope no
 * signers were configured to check (then `signed` tells the two apart).
 */
void handle_policy_put(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	char err[256] = "";
	struct signed_policy sp;
	struct store_policy_sig sig;
	struct policy *p;
	json_t *warnings;
	int64_t ver = 0;

	if (!policy_name_valid(req->arg[0])) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "bad policy name");
		return;
	}
	switch (policy_sign_open(app, req->body, req->body_len, &sp)) {
	case SIGN_OK:
		break;
	case SIGN_UNSIGNED:
		http_reply_error(resp, PROTO_ERR_POLICY_UNSIGNED, "%s", sp.why);
		return;
	case SIGN_MALFORMED:
		http_reply_error(resp, PROTO_ERR_BAD_ENVELOPE, "%s", sp.why);
		return;
	case SIGN_BAD_SIGNATURE:
		log_warn("policy: \"%s\" refused from %s: %s", req->arg[0], app_actor(req), sp.why);
		http_reply_error(resp, PROTO_ERR_POLICY_BAD_SIGNATURE, "%s", sp.why);
		return;
	default:
		http_reply_error(resp, PROTO_ERR_INTERNAL, "out of memory");
		return;
	}
	p = policy_load(sp.json, sp.len, err, sizeof(err));
	if (!p) {
		http_reply_error(resp, PROTO_ERR_BAD_POLICY, "%s%s",
				 sp.is_signed ? "the envelope's payload: " : "",
				 err[0] ? err : "policy does not load");
		goto out;
	}
	/* What an imported Keylime policy asks for that is not enforced as Keylime would: the
	 * operator sees it in the answer (attestctl prints it), nothing is dropped silently. */
	warnings = warnings_json(p);
	policy_unref(p);
	if (!warnings) {
		http_reply_error(resp, PROTO_ERR_INTERNAL, "out of memory");
		goto out;
	}
	sig.signer = sp.signer;
	sig.signature = sp.signature;
	if (store_policy_put_signed(app->store, req->arg[0], STORE_POLICY_ANY, sp.json,
				    sp.is_signed ? &sig : NULL, app_actor(req), (int64_t)time(NULL),
				    &ver)) {
		json_decref(warnings);
		http_reply_store_failure(resp);
		goto out;
	}
	policy_cache_invalidate(&app->policies, req->arg[0]);
	log_info("policy: \"%s\" is now version %" PRId64 " (%zu import warnings)%s%s", req->arg[0],
		 ver, json_array_size(warnings),
		 sp.is_signed ? (sp.signer[0] ? ", signed by " : ", signed (unchecked)") : "",
		 sp.signer);
	reply_json_value(resp, 200, api_policy_stored_encode(&(struct api_policy_stored){
		.name = req->arg[0],
		.version = ver,
		.warnings = warnings,
		.signed_ = sp.is_signed,
		.signer = sp.signer,
	}));
out:
	signed_policy_release(&sp);
}

static int policies_cb(void *arg, const struct store_policy_summary *p)
{
	const struct api_policy_summary ps = { p->name, p->version, p->time, p->actor, p->agents };
	json_t *o = api_policy_summary_encode(&ps);

	return o && json_array_append_new(arg, o) == 0 ? 0 : -ENOMEM;
}

/* GET /v1/policies: every named policy, its newest version, who wrote it, how many agents use it. */
void handle_policies_list(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	json_t *arr = json_array();

	if (!arr || store_policies_list(app->store, POLICY_DEFAULT_NAME, policies_cb, arr)) {
		json_decref(arr);
		http_reply_store_failure(resp);
		return;
	}
	reply_json_value(resp, 200, api_list_encode(API_POLICIES, arr));
}

/*
 * DELETE /v1/policies/{name}: a policy no agent is assigned, with its history. The default
 * policy is never deleted (every agent that names none is judged by it).
 */
void handle_policy_delete(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	int ret;

	if (!policy_name_valid(req->arg[0])) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no such policy");
		return;
	}
	if (!strcmp(req->arg[0], POLICY_DEFAULT_NAME)) {
		http_reply_error(resp, PROTO_ERR_POLICY_IN_USE,
				 "policy \"%s\" judges every agent that names no policy: it is never"
				 " deleted", req->arg[0]);
		return;
	}
	ret = store_policy_delete(app->store, req->arg[0], app_actor(req), (int64_t)time(NULL));
	if (ret == -ENOENT) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_POLICY, "no policy \"%s\"", req->arg[0]);
		return;
	}
	if (ret == -EBUSY) {
		http_reply_error(resp, PROTO_ERR_POLICY_IN_USE,
				 "agents are assigned policy \"%s\": assign them another first"
				 " (attestctl policy assign), nothing was deleted", req->arg[0]);
		return;
	}
	if (ret) {
		http_reply_store_failure(resp);
		return;
	}
	policy_cache_invalidate(&app->policies, req->arg[0]);
	log_info("policy \"%s\" deleted with its history by %s", req->arg[0], app_actor(req));
	reply_json_value(resp, 200, api_policy_deleted_encode(req->arg[0]));
}
