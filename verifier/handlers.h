/*
 * handlers: the verifier's HTTP layer. Each handler turns a request into the arguments of a
 * service (round.c, review.c, the store for plain reads) and its result into a status code and
 * a JSON body; decisions live in the services and in attest.c, not here.
 */
#ifndef VERIFIER_HANDLERS_H
#define VERIFIER_HANDLERS_H

#include <stdbool.h>

#include "verifier/app.h"
#include "verifier/server.h"

/* The route table (routes.c): every URL the verifier answers, its body cap and whether it
 * needs the operator token. */
extern const struct http_route app_routes[];
extern const size_t app_nroutes;

bool app_authorize(void *app, const struct http_request *req);
void app_observe(void *app, const struct http_route *route, unsigned status, double seconds);

/* Handlers ------------------------------------------------------------------------------- */
void handle_enroll(const struct http_request *req, struct http_response *resp);
void handle_activate(const struct http_request *req, struct http_response *resp);
void handle_challenge(const struct http_request *req, struct http_response *resp);
void handle_evidence(const struct http_request *req, struct http_response *resp);

void handle_healthz(const struct http_request *req, struct http_response *resp);
void handle_metrics(const struct http_request *req, struct http_response *resp);
void handle_agents_list(const struct http_request *req, struct http_response *resp);
void handle_agent_get(const struct http_request *req, struct http_response *resp);
void handle_agent_verdicts(const struct http_request *req, struct http_response *resp);
void handle_agent_set_policy(const struct http_request *req, struct http_response *resp);
void handle_violations_list(const struct http_request *req, struct http_response *resp);
void handle_violation_approve(const struct http_request *req, struct http_response *resp);
void handle_violation_dismiss(const struct http_request *req, struct http_response *resp);
void handle_policy_get(const struct http_request *req, struct http_response *resp);
void handle_policy_put(const struct http_request *req, struct http_response *resp);
void handle_backup(const struct http_request *req, struct http_response *resp);

/* The operator web page (handlers_ui.c): /ui/, /ui/app.js, /ui/style.css. */
void handle_ui_index(const struct http_request *req, struct http_response *resp);
void handle_ui_js(const struct http_request *req, struct http_response *resp);
void handle_ui_css(const struct http_request *req, struct http_response *resp);

#endif
