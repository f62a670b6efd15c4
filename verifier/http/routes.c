/*
 * routes: every URL the verifier answers, with its body cap and who may call it (http_access);
 * the token check and the tokens swapped on SIGHUP; which large bodies are read at all; the
 * per-request counters; the server started over them.
 */
#include <stdio.h>
#include <string.h>


#include "common/log.h"
#include "proto/limits.h"
#include "verifier/http/handlers.h"
#include "verifier/http/tokens.h"

const struct http_route app_routes[] = {
	{ "POST", "/v1/agents", LIMIT_SMALL_BODY, HTTP_PUBLIC, "enroll",
	  handle_enroll, "201 400 403 409 429 500 503", NULL },
	{ "POST", "/v1/agents/*/activate", LIMIT_SMALL_BODY, HTTP_PUBLIC, "activate",
	  handle_activate, "200 400 403 404 409 500 503", NULL },
	{ "POST", "/v1/agents/*/challenges", LIMIT_SMALL_BODY, HTTP_PUBLIC, "challenge",
	  handle_challenge, "201 400 403 404 409 429 500 503", NULL },
	{ "POST", "/v1/agents/*/evidence", LIMIT_REQUEST_BODY, HTTP_PUBLIC, "evidence",
	  handle_evidence, "200 400 403 404 409 429 500 503", NULL },
	{ "GET", "/healthz", LIMIT_SMALL_BODY, HTTP_PUBLIC, "healthz", handle_healthz, "200 503", NULL },
	{ "GET", "/metrics", LIMIT_SMALL_BODY, HTTP_PUBLIC, "metrics",
	  handle_metrics, "200 500", NULL },
	{ "GET", "/v1/agents", LIMIT_SMALL_BODY, HTTP_TOKEN, "agents",
	  handle_agents_list, "200 400 503", "state policy label" },
	{ "GET", "/v1/agents/*", LIMIT_SMALL_BODY, HTTP_TOKEN, "agent",
	  handle_agent_get, "200 404 503", NULL },
	{ "GET", "/v1/agents/*/verdicts", LIMIT_SMALL_BODY, HTTP_TOKEN, "verdicts",
	  handle_agent_verdicts, "200 404 503", "limit" },
	{ "GET", "/v1/agents/*/counters", LIMIT_SMALL_BODY, HTTP_TOKEN, "counters",
	  handle_agent_counters, "200 404 503", "limit" },
	/* Lifecycle (handlers_lifecycle.c): retire (?purge=1 deletes), reset, history. */
	{ "DELETE", "/v1/agents/*", LIMIT_SMALL_BODY, HTTP_TOKEN, "agent_retire",
	  handle_agent_retire, "200 400 404 409 503", "purge" },
	{ "POST", "/v1/agents/*/reset", LIMIT_SMALL_BODY, HTTP_TOKEN, "agent_reset",
	  handle_agent_reset, "200 404 409 503", NULL },
	{ "GET", "/v1/agents/*/history", LIMIT_SMALL_BODY, HTTP_TOKEN, "agent_history",
	  handle_agent_history, "200 404 503", NULL },
	{ "PUT", "/v1/agents/*/policy", LIMIT_SMALL_BODY, HTTP_TOKEN, "agent_policy",
	  handle_agent_set_policy, "200 400 404 503", NULL },
	/* Admission (handlers_registrations.c): a batch of many agents with their certificates. */
	{ "POST", "/v1/registrations", LIMIT_REQUEST_BODY, HTTP_TOKEN, "registrations_add",
	  handle_registrations_add, "201 400 404 409 500 503", NULL },
	{ "GET", "/v1/registrations", LIMIT_SMALL_BODY, HTTP_TOKEN, "registrations",
	  handle_registrations_list, "200 503", NULL },
	{ "DELETE", "/v1/registrations/*", LIMIT_SMALL_BODY, HTTP_TOKEN, "registration_delete",
	  handle_registration_delete, "200 404 503", NULL },
	/* Labels (handlers_labels.c). */
	{ "PUT", "/v1/agents/*/labels", LIMIT_SMALL_BODY, HTTP_TOKEN, "agent_labels",
	  handle_agent_labels, "200 400 404 503", NULL },
	{ "POST", "/v1/policies/*/assign", LIMIT_SMALL_BODY, HTTP_TOKEN, "policy_assign",
	  handle_policy_assign, "200 400 404 503", NULL },
	{ "GET", "/v1/violations", LIMIT_SMALL_BODY, HTTP_TOKEN, "violations",
	  handle_violations_list, "200 400 503", "state agent limit" },
	{ "POST", "/v1/violations/*/approve", LIMIT_SMALL_BODY, HTTP_TOKEN, "approve",
	  handle_violation_approve, "200 400 404 409 500 503", NULL },
	{ "POST", "/v1/violations/*/dismiss", LIMIT_SMALL_BODY, HTTP_TOKEN, "dismiss",
	  handle_violation_dismiss, "200 400 404 409 500 503", NULL },
	{ "GET", "/v1/policies", LIMIT_SMALL_BODY, HTTP_TOKEN, "policies",
	  handle_policies_list, "200 503", NULL },
	{ "GET", "/v1/policies/*", LIMIT_SMALL_BODY, HTTP_TOKEN, "policy_get",
	  handle_policy_get, "200 404 503", NULL },
	{ "DELETE", "/v1/policies/*", LIMIT_SMALL_BODY, HTTP_TOKEN, "policy_delete",
	  handle_policy_delete, "200 404 409 503", NULL },
	/* Policies can be large (a whole distribution's digests). */
	{ "PUT", "/v1/policies/*", LIMIT_REQUEST_BODY, HTTP_TOKEN, "policy_put",
	  handle_policy_put, "200 400 403 500 503", NULL },
	{ "GET", "/v1/policies/*/enforced", LIMIT_SMALL_BODY, HTTP_TOKEN, "policy_enforced",
	  handle_policy_enforced, "200 404 500 503", NULL },
	{ "GET", "/v1/policies/*/versions", LIMIT_SMALL_BODY, HTTP_TOKEN, "policy_versions",
	  handle_policy_versions, "200 404 503", NULL },
	{ "GET", "/v1/policies/*/versions/*", LIMIT_SMALL_BODY, HTTP_TOKEN, "policy_version",
	  handle_policy_version_get, "200 404 503", NULL },
	{ "POST", "/v1/policies/*/rollback", LIMIT_SMALL_BODY, HTTP_TOKEN, "policy_rollback",
	  handle_policy_rollback, "200 400 404 409 503", NULL },
	{ "GET", "/v1/agents/*/amendment", LIMIT_SMALL_BODY, HTTP_TOKEN, "amendment",
	  handle_amendment_get, "200 404 503", NULL },
	{ "GET", "/v1/agents/*/amendment/versions", LIMIT_SMALL_BODY, HTTP_TOKEN, "amendment_versions",
	  handle_amendment_versions, "200 404 503", NULL },
	{ "POST", "/v1/agents/*/amendment/rollback", LIMIT_SMALL_BODY, HTTP_TOKEN, "amendment_rollback",
	  handle_amendment_rollback, "200 400 404 409 503", NULL },
	/* Attestation results (handlers_ear.c): the public keys are public. */
	{ "GET", "/v1/agents/*/ear", LIMIT_SMALL_BODY, HTTP_TOKEN, "ear",
	  handle_agent_ear, "200 202 400 404 409 429 500 503", "nonce" },
	/* This API's description (docs/openapi.json, embedded like the page's files). */
	{ "GET", "/v1/openapi.json", LIMIT_SMALL_BODY, HTTP_PUBLIC, "openapi",
	  handle_openapi, "200", NULL },
	{ "GET", "/v1/jwks", LIMIT_SMALL_BODY, HTTP_PUBLIC, "jwks", handle_jwks, "200", NULL },
	/* The evidence a verdict was reached from (handlers_evidence.c). */
	{ "GET", "/v1/verdicts/*/evidence", LIMIT_SMALL_BODY, HTTP_TOKEN, "verdict_evidence",
	  handle_verdict_evidence, "200 400 404 500 503", NULL },
	/* The audit trail's head, signed (handlers_audit.c). */
	{ "GET", "/v1/audit/head", LIMIT_SMALL_BODY, HTTP_TOKEN, "audit_head",
	  handle_audit_head, "200 503", NULL },
	{ "POST", "/v1/ear/keys/rotate", LIMIT_SMALL_BODY, HTTP_TOKEN, "ear_rotate",
	  handle_ear_rotate, "200 500", NULL },
	/* A copy of the whole store, streamed from a file (store_backup()): every agent, policy
	 * and decision is in it; an operator's alone. */
	{ "GET", "/v1/backup", LIMIT_SMALL_BODY, HTTP_OPERATOR, "backup",
	  handle_backup, "200 503 507", NULL },
	/* The web page: a fixed set of embedded files, public (its data needs the token). */
	{ "GET", "/ui/", LIMIT_SMALL_BODY, HTTP_PUBLIC, "ui", handle_ui_index, "200 500", NULL },
	{ "GET", "/ui/app.js", LIMIT_SMALL_BODY, HTTP_PUBLIC, "ui", handle_ui_js, "200 500", NULL },
	{ "GET", "/ui/style.css", LIMIT_SMALL_BODY, HTTP_PUBLIC, "ui", handle_ui_css, "200 500", NULL },
};
const size_t app_nroutes = sizeof(app_routes) / sizeof(app_routes[0]);

unsigned app_authorize(void *arg, struct http_request *req, enum http_access need, char *why,
		       size_t cap)
{
	struct app *app = arg;
	const char *h = http_header(req, "Authorization");
	const struct token_entry *t;
	unsigned status = 0;

	if (!h || strncmp(h, "Bearer ", 7) != 0 || !h[7]) {
		snprintf(why, cap, "this call needs an operator token: Authorization: Bearer TOKEN"
			 " (attestctl --token-file FILE; the verifier's is STATE_DIR/operator-token)");
		return 401;
	}
	h += 7;
	pthread_rwlock_rdlock(&app->reload_lock);
	t = tokens_find(app->tokens, h, strlen(h));
	if (!t) {
		status = 401;
		snprintf(why, cap, "the token is not one this verifier knows (rotated or mistyped?):"
			 " use a current one from its token file (--operator-token-file)");
		log_warn("http: operator call with a wrong token");
	} else if (t->read_only && need == HTTP_OPERATOR) {
		status = 403;
		snprintf(why, cap, "token \"%s\" is read-only: this call needs an operator token",
			 t->name);
	} else if (t->read_only && strcmp(req->method, "GET")) {
		status = 403;
		snprintf(why, cap, "token \"%s\" is read-only: it may read, not change anything",
			 t->name);
	} else {
		snprintf(req->actor, sizeof(req->actor), "%s", t->name);
	}
	pthread_rwlock_unlock(&app->reload_lock);
	return status;
}

bool app_token_known(struct app *app, const struct http_request *req)
{
	const char *h = http_header(req, "Authorization");
	bool known;

	if (!h || strncmp(h, "Bearer ", 7) != 0 || !h[7])
		return false;
	pthread_rwlock_rdlock(&app->reload_lock);
	known = tokens_find(app->tokens, h + 7, strlen(h + 7)) != NULL;
	pthread_rwlock_unlock(&app->reload_lock);
	return known;
}

const char *app_actor(const struct http_request *req)
{
	return req->actor[0] ? req->actor : "operator";
}

bool app_admit(void *arg, const struct http_route *route, const struct http_request *req,
	       struct http_response *resp)
{
	(void)arg;
	/* Policies are large too, but only an operator (already authorized) sends one. */
	if (route->fn == handle_evidence)
		return admit_evidence(req, resp);
	return true;
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

struct http_server *app_server_start(struct app *app, const char *listen, unsigned threads,
				     unsigned client_connections, const char *cert_pem,
				     const char *key_pem, uint16_t *port)
{
	const struct http_server_config cfg = {
		.listen = listen,
		.threads = threads,
		.cert_pem = cert_pem,
		.key_pem = key_pem,
		.routes = app_routes,
		.nroutes = app_nroutes,
		.app = app,
		.authorize = app_authorize,
		.admit = app_admit,
		.client_connections = client_connections,
		.observe = app_observe,
	};

	return http_server_start(&cfg, port);
}

void app_tokens_reload(struct app *app, const char *token_file, const struct statedir *sd,
		       const char *state_dir)
{
	struct tokens *t = NULL, *old;

	if (tokens_open(token_file, sd, state_dir, &t)) {
		log_error("reload: keeping the operator tokens loaded before");
		return;
	}
	pthread_rwlock_wrlock(&app->reload_lock);
	old = app->tokens;
	app->tokens = t;
	pthread_rwlock_unlock(&app->reload_lock);
	tokens_free(old);
}
