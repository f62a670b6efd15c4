/*
 * handlers: the verifier's HTTP layer. Each handler turns a request into the arguments of a
 * service (round.c, review.c, the store for plain reads) and its result into a status code and
 * a JSON body; decisions live in the services and in attest.c, not here.
 */
#ifndef VERIFIER_HANDLERS_H
#define VERIFIER_HANDLERS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "verifier/service/app.h"
#include "verifier/http/server.h"

/* The route table (routes.c): every URL the verifier answers, its body cap and whether it
 * needs the operator token. */
extern const struct http_route app_routes[];
extern const size_t app_nroutes;

unsigned app_authorize(void *app, struct http_request *req, enum http_access need, char *why,
		       size_t cap);
/* Whether req carries a token the verifier knows, of any role (a public route's extra rows). */
bool app_token_known(struct app *app, const struct http_request *req);
/* Who made an authorized call, for histories and logs: the name of its token. */
const char *app_actor(const struct http_request *req);
/* Large bodies read only where they can be valid (http_server_config.admit). */
bool app_admit(void *app, const struct http_route *route, const struct http_request *req,
	       struct http_response *resp);

/* Shared by the handlers (handlers_common.c): the answer v as JSON (v is consumed; NULL is a
 * 500), the rows a list asks for (?limit=, 100 by default, at most LIMIT_LIST_ROWS; false with
 * resp answered 400 when ?limit= is not a whole number from 1 up), and whether a name may name
 * a policy (the agent-id alphabet, at most LIMIT_POLICY_NAME). */
void reply_json_value(struct http_response *resp, unsigned status, json_t *v);
bool query_limit(const struct http_request *req, struct http_response *resp, unsigned *limit);
bool policy_name_valid(const char *s);
void app_observe(void *app, const struct http_route *route, unsigned status, double seconds);

/* The verifier's server (routes.c): the route table above, its token check, admission and
 * counters, on listen with threads and per-client connections, presenting cert_pem/key_pem.
 * NULL on failure (logged); *port the port bound. */
struct http_server *app_server_start(struct app *app, const char *listen, unsigned threads,
				     unsigned client_connections, const char *cert_pem,
				     const char *key_pem, uint16_t *port);
/* SIGHUP: the operator tokens read again (tokens_open()) and swapped in under reload_lock
 * when they load whole: a rotated token works and the old one stops working without a
 * restart. Else the old ones stay and the log says so. */
void app_tokens_reload(struct app *app, const char *token_file, const struct statedir *sd,
		       const char *state_dir);

/* Handlers ------------------------------------------------------------------------------- */
void handle_enroll(const struct http_request *req, struct http_response *resp);
void handle_activate(const struct http_request *req, struct http_response *resp);
void handle_challenge(const struct http_request *req, struct http_response *resp);
void handle_evidence(const struct http_request *req, struct http_response *resp);
/* Evidence over LIMIT_SMALL_BODY is read only from an active agent with a challenge out. */
bool admit_evidence(const struct http_request *req, struct http_response *resp);

/* Health and metrics (handlers_health.c). */
void handle_healthz(const struct http_request *req, struct http_response *resp);
void handle_metrics(const struct http_request *req, struct http_response *resp);
/* The fleet: agents, their verdicts, their policy (handlers_fleet.c). */
void handle_agents_list(const struct http_request *req, struct http_response *resp);
void handle_agent_get(const struct http_request *req, struct http_response *resp);
void handle_agent_verdicts(const struct http_request *req, struct http_response *resp);
void handle_agent_counters(const struct http_request *req, struct http_response *resp);
void handle_agent_set_policy(const struct http_request *req, struct http_response *resp);
/* Admission: registrations of agents before they enroll (handlers_registrations.c). */
void handle_registrations_add(const struct http_request *req, struct http_response *resp);
void handle_registrations_list(const struct http_request *req, struct http_response *resp);
void handle_registration_delete(const struct http_request *req, struct http_response *resp);
/* Labels (handlers_labels.c): an agent's, and a policy assigned by label. */
void handle_agent_labels(const struct http_request *req, struct http_response *resp);
void handle_policy_assign(const struct http_request *req, struct http_response *resp);
/* Violations and their review (handlers_violations.c). */
void handle_violations_list(const struct http_request *req, struct http_response *resp);
void handle_violation_approve(const struct http_request *req, struct http_response *resp);
void handle_violation_dismiss(const struct http_request *req, struct http_response *resp);
/* Policies (handlers_policies.c); the store's copy (handlers_backup.c). */
void handle_policy_get(const struct http_request *req, struct http_response *resp);
void handle_policies_list(const struct http_request *req, struct http_response *resp);
void handle_policy_delete(const struct http_request *req, struct http_response *resp);
void handle_policy_enforced(const struct http_request *req, struct http_response *resp);
void handle_policy_put(const struct http_request *req, struct http_response *resp);
void handle_backup(const struct http_request *req, struct http_response *resp);

/* An agent's lifecycle (handlers_lifecycle.c): retire or purge, reset, history. */
void handle_agent_retire(const struct http_request *req, struct http_response *resp);
void handle_agent_reset(const struct http_request *req, struct http_response *resp);
void handle_agent_history(const struct http_request *req, struct http_response *resp);

/* Policy history and agents' amendments (handlers_policy_history.c). */
void handle_policy_versions(const struct http_request *req, struct http_response *resp);
void handle_policy_version_get(const struct http_request *req, struct http_response *resp);
void handle_policy_rollback(const struct http_request *req, struct http_response *resp);
void handle_amendment_get(const struct http_request *req, struct http_response *resp);
void handle_amendment_versions(const struct http_request *req, struct http_response *resp);
void handle_amendment_rollback(const struct http_request *req, struct http_response *resp);

/* Attestation results for relying parties (handlers_ear.c). */
void handle_agent_ear(const struct http_request *req, struct http_response *resp);
void handle_jwks(const struct http_request *req, struct http_response *resp);
/* A verdict's kept evidence (handlers_evidence.c). */
void handle_verdict_evidence(const struct http_request *req, struct http_response *resp);
/* The audit trail (handlers_audit.c). */
void handle_audit_head(const struct http_request *req, struct http_response *resp);
void handle_ear_rotate(const struct http_request *req, struct http_response *resp);

/* The operator web page (handlers_ui.c): /ui/, /ui/app.js, /ui/style.css. */
void handle_ui_index(const struct http_request *req, struct http_response *resp);
/* handlers_openapi.c: docs/openapi.json, the description of every route. */
void handle_openapi(const struct http_request *req, struct http_response *resp);
void handle_ui_js(const struct http_request *req, struct http_response *resp);
void handle_ui_css(const struct http_request *req, struct http_response *resp);

#endif
