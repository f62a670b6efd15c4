/*
 * handlers_ear: attestation results for relying parties (verifier/service/ear.h).
 *
 *   GET  /v1/agents/{id}/ear[?nonce=N]  the agent's latest result as a signed EAR; with a
 *                                       relying party's nonce, 202 until a round whose
 *                                       challenge carried it answers, then 200 with it bound
 *   GET  /v1/jwks                       the public keys EARs verify with (no token: public)
 *   POST /v1/ear/keys/rotate            a new signing key; the old one stays published
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <jansson.h>

#include "proto/ear.h"
#include "proto/evidence.h"
#include "verifier/api/api_codec.h"
#include "verifier/http/handlers.h"
#include "verifier/service/ear.h"
#include "verifier/store/ear_keys.h"

void handle_agent_ear(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	const char *nonce = http_query(req, "nonce");
	int64_t now = (int64_t)time(NULL), retry = 0;
	struct store_agent a;
	char *token = NULL;
	int ret;

	if (!agent_id_valid(req->arg[0])) {
		http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent with this id");
		return;
	}
	if (nonce && !ear_nonce_valid(nonce)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST,
				 "nonce: %d to %d base64url characters (A-Z a-z 0-9 - _)",
				 EAR_NONCE_MIN, EAR_NONCE_MAX);
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
	ret = a.state != AGENT_ACTIVE || a.retired_at;
	store_agent_release(&a);
	if (ret) {
		http_reply_error(resp, PROTO_ERR_AGENT_INACTIVE,
				 "agent \"%s\" is not active (pending, retired or reset): no result",
				 req->arg[0]);
		ear_forget(app->ear_results, req->arg[0]);
		return;
	}
	switch (ear_token(app, req->arg[0], 0, nonce, now, &token, &retry)) {
	case EAR_OK:
		reply_json_value(resp, 200, api_ear_encode(&(struct api_ear){
			.agent_id = req->arg[0], .token = token }));
		break;
	case EAR_NO_RESULT:
		http_reply_error(resp, PROTO_ERR_NO_RESULT,
				 "no round of agent \"%s\" judged by this verifier since it started:"
				 " the agent's next round makes one", req->arg[0]);
		break;
	case EAR_PENDING:
		reply_json_value(resp, 202, api_ear_encode(&(struct api_ear){
			.nonce = nonce, .retry_after = retry }));
		break;
	case EAR_TOO_MANY:
		http_reply_error(resp, PROTO_ERR_TOO_MANY_NONCES,
				 "%d nonces of relying parties wait for this agent's next round: ask"
				 " again with one of them", EAR_NONCES_PER_AGENT);
		break;
	case EAR_FAILED:
		http_reply_error(resp, PROTO_ERR_INTERNAL, "the result could not be signed");
		break;
	}
	free(token);
}

void handle_jwks(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;

	reply_json_value(resp, 200, ear_keys_jwks(app->ear_keys, (int64_t)time(NULL)));
}

void handle_ear_rotate(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	char kid[EAR_KID_LEN + 1], old[EAR_KID_LEN + 1];

	if (ear_keys_rotate(app->ear_keys, (int64_t)time(NULL), kid, old)) {
		http_reply_error(resp, PROTO_ERR_INTERNAL,
				 "the new key could not be written to the state directory: the old"
				 " one stays in use (see the verifier's log)");
		return;
	}
	reply_json_value(resp, 200, api_ear_rotation_encode(&(struct api_ear_rotation){ kid, old }));
}
