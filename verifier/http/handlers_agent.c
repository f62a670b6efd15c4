/*
 * Agent-facing calls as HTTP: enroll, activate, challenges, evidence (docs/design.md, Protocol).
 * Enrollment and activation are agents.c's services, challenges and evidence round.c's; these
 * handlers only translate.
 *
 * Every refusal is decided before anything is written, so a bad request never changes stored
 * state; the one exception is by design: evidence consumes its nonce first, so a replayed body
 * is `nonce_reused` even if the evidence itself is then judged untrusted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "common/log.h"
#include "proto/evidence.h"
#include "verifier/service/agents.h"
#include "verifier/http/handlers.h"
#include "verifier/service/round.h"
#include "verifier/service/ear.h"

void handle_enroll(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct enroll_request er;
	struct agents_enrollment en;
	struct enroll_response out;
	const char *why = NULL;
	bool refused = true;

	memset(&er, 0, sizeof(er));
	memset(&en, 0, sizeof(en));
	if (enroll_request_parse(req->body, req->body_len, &er, &why)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "%s", why ? why : "bad enroll request");
		goto out;
	}
	switch (agents_enroll(app, &er, &en)) {
	case AGENTS_OK:
		memset(&out, 0, sizeof(out));
		snprintf(out.agent_id, sizeof(out.agent_id), "%s", er.agent_id);
		out.credential_blob = en.result.cred.blob;
		out.credential_blob_len = en.result.cred.blob_len;
		out.encrypted_secret = en.result.cred.encrypted_secret;
		out.encrypted_secret_len = en.result.cred.encrypted_secret_len;
		http_reply_json(resp, 201, enroll_response_encode(&out));
		APP_COUNT(app, enroll_ok);
		refused = false;
		break;
	case AGENTS_REFUSED:
		switch (en.check) {
		case ENROLL_BAD_EK:
			http_reply_error(resp, PROTO_ERR_BAD_EK, "%s", en.result.why);
			break;
		case ENROLL_BAD_AK:
			http_reply_error(resp, PROTO_ERR_BAD_AK, "%s", en.result.why);
			break;
		case ENROLL_EK_UNTRUSTED:
			http_reply_error(resp, PROTO_ERR_EK_UNTRUSTED, "%s", en.result.why);
			break;
		default:
			http_reply_error(resp, PROTO_ERR_EK_MISMATCH, "%s", en.result.why);
			break;
		}
		break;
	case AGENTS_ID_TAKEN:
		http_reply_error(resp, PROTO_ERR_AGENT_EXISTS,
				 "agent \"%s\" is enrolled with another EK or AK", er.agent_id);
		break;
	case AGENTS_EK_IN_USE:
		http_reply_error(resp, PROTO_ERR_EK_IN_USE,
				 "this TPM's EK is enrolled and active as another agent; one TPM is"
				 " one agent");
		break;
	case AGENTS_RETIRED:
		http_reply_error(resp, PROTO_ERR_ENROLL_RETIRED,
				 "agent \"%s\" was retired by an operator; it enrolls again only"
				 " after `attestctl agent reset %s`", er.agent_id, er.agent_id);
		break;
	case AGENTS_NOT_ADMITTED:
		if (en.unregistered)
			http_reply_error(resp, PROTO_ERR_NOT_ADMITTED,
					 "agent \"%s\" is not registered, and this verifier admits"
					 " registered agents only (attestctl agent add)", er.agent_id);
		else
			http_reply_error(resp, PROTO_ERR_NOT_ADMITTED,
					 "agent \"%s\" is registered with another EK than this TPM's"
					 " (attestctl registrations)", er.agent_id);
		break;
	case AGENTS_EK_PENDING_FULL:
		resp->retry_after = (unsigned)app->pending_ttl;
		http_reply_error(resp, PROTO_ERR_TOO_MANY_PENDING,
				 "this EK has %u enrollments under other ids waiting for activation;"
				 " activate one or let them expire (%lld s)", LIMIT_PENDING_PER_EK,
				 (long long)app->pending_ttl);
		break;
	case AGENTS_PENDING_FULL:
		resp->retry_after = (unsigned)app->pending_ttl;
		http_reply_error(resp, PROTO_ERR_TOO_MANY_PENDING,
				 "%u enrollments are waiting for activation; retry when some expired"
				 " (%lld s)", LIMIT_PENDING_ENROLLMENTS, (long long)app->pending_ttl);
		break;
	/* Not refusals of the request: not counted as such. */
	case AGENTS_ALREADY_ACTIVE:
		http_reply_error(resp, PROTO_ERR_ALREADY_ENROLLED,
				 "agent \"%s\" is enrolled and active with this EK and AK", er.agent_id);
		refused = false;
		break;
	case AGENTS_STORE_FAILED:
		http_reply_store_failure(resp);
		refused = false;
		break;
	default:
		http_reply_error(resp, PROTO_ERR_INTERNAL, "enrollment failed on the verifier");
		refused = false;
		break;
	}
out:
	if (refused)
		APP_COUNT(app, enroll_refused);
	OPENSSL_cleanse(&en, sizeof(en));
	enroll_request_release(&er);
}

void handle_activate(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct activate_request ar;
	const char *why = NULL;
	json_t *o;

	memset(&ar, 0, sizeof(ar));
	if (activate_request_parse(req->body, req->body_len, &ar, &why)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "%s", why ? why : "bad activate request");
		goto out;
	}
	switch (agents_activate(app, req->arg[0], ar.secret, ar.secret_len)) {
	case AGENTS_OK:
		o = json_pack("{s:s, s:s}", "agent_id", req->arg[0], "state", "active");
		http_reply_json(resp, 200, o ? json_dumps(o, JSON_COMPACT) : NULL);
		json_decref(o);
		APP_COUNT(app, activate_ok);
		break;
	case AGENTS_UNKNOWN_AGENT:
		if (agent_id_valid(req->arg[0]))
			http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent \"%s\"", req->arg[0]);
		else
			http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent with this id");
		break;
	case AGENTS_WRONG_SECRET:
		http_reply_error(resp, PROTO_ERR_ACTIVATION_FAILED,
				 "the secret does not match the credential issued at enrollment");
		APP_COUNT(app, activate_failed);
		break;
	case AGENTS_CREDENTIAL_REPLACED:
		http_reply_error(resp, PROTO_ERR_ACTIVATION_FAILED,
				 "the credential was replaced by a newer enrollment");
		APP_COUNT(app, activate_failed);
		break;
	/* 409, not 403: the agent may enroll again, and attestd does so on a 409. */
	case AGENTS_EXPIRED:
		http_reply_error(resp, PROTO_ERR_ENROLLMENT_EXPIRED,
				 "the enrollment is older than %lld s and expired; enroll again",
				 (long long)app->pending_ttl);
		APP_COUNT(app, activate_failed);
		break;
	case AGENTS_EK_IN_USE:
		http_reply_error(resp, PROTO_ERR_EK_IN_USE,
				 "this TPM's EK became active as another agent; one TPM is one agent");
		APP_COUNT(app, activate_failed);
		break;
	case AGENTS_STORE_FAILED:
		http_reply_store_failure(resp);
		break;
	default:
		http_reply_error(resp, PROTO_ERR_INTERNAL, "activation failed on the verifier");
		break;
	}
out:
	OPENSSL_cleanse(&ar, sizeof(ar));
}

/*
 * The refusals of a round as HTTP. Store and policy failures are 503: the request was fine and
 * the same request later may succeed, so agents retry.
 */
static void reply_round_status(struct http_response *resp, const char *id, enum round_status st,
			       const struct verdict_response *v)
{
	switch (st) {
	case ROUND_OK:
		break;
	case ROUND_UNKNOWN_AGENT:
		if (agent_id_valid(id))
			http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent \"%s\"", id);
		else
			http_reply_error(resp, PROTO_ERR_UNKNOWN_AGENT, "no agent with this id");
		break;
	case ROUND_NOT_ACTIVATED:
		http_reply_error(resp, PROTO_ERR_NOT_ACTIVATED,
				 "agent \"%s\" has not activated its credential", id);
		break;
	case ROUND_RETIRED:
		http_reply_error(resp, PROTO_ERR_AGENT_RETIRED,
				 "agent \"%s\" was retired by an operator: its evidence is refused;"
				 " after `attestctl agent reset %s` it may enroll again", id, id);
		break;
	/* attestd drops its enrollment on this answer and enrolls again by itself. */
	case ROUND_RESET:
		http_reply_error(resp, PROTO_ERR_AGENT_RESET,
				 "agent \"%s\" was retired, then reset by an operator: enroll again",
				 id);
		break;
	case ROUND_RATE_LIMITED:
		http_reply_error(resp, PROTO_ERR_RATE_LIMITED,
				 "agent \"%s\" has %u unanswered challenges; answer or let them expire",
				 id, NONCES_MAX_OUTSTANDING);
		break;
	case ROUND_NONCE_UNKNOWN:
		http_reply_error(resp, PROTO_ERR_NONCE_UNKNOWN, "nonce was not issued to this agent");
		break;
	case ROUND_NONCE_REUSED:
		http_reply_error(resp, PROTO_ERR_NONCE_REUSED, "nonce was used before");
		break;
	case ROUND_NONCE_EXPIRED:
		http_reply_error(resp, PROTO_ERR_NONCE_EXPIRED, "nonce expired; ask for a new challenge");
		break;
	case ROUND_NOT_AUTHENTIC:
		http_reply_error_named(resp, PROTO_ERR_NOT_AUTHENTIC,
				       v && v->nreasons ? v->reason[0].code : NULL,
				 "the quote is not signed by this agent's attestation key");
		break;
	case ROUND_POLICY_UNAVAILABLE:
		http_reply_error(resp, PROTO_ERR_POLICY_UNAVAILABLE,
				 "the verifier cannot load this agent's policy");
		break;
	case ROUND_STORE_FAILED:
		http_reply_store_failure(resp);
		break;
	case ROUND_NO_CHALLENGE:
		http_reply_error(resp, PROTO_ERR_NO_CHALLENGE,
				 "agent \"%s\" has no challenge it asked for outstanding: ask for one"
				 " first (a large body is not read without one)", id);
		break;
	case ROUND_REJUDGE:
		http_reply_error(resp, PROTO_ERR_REJUDGEMENT,
				 "agent \"%s\"'s policy or amendment changed since its boot was"
				 " judged: nothing was stored; ask for a challenge and send the list"
				 " from entry 0, the whole boot is judged again", id);
		break;
	case ROUND_CONFLICT:
		http_reply_error(resp, PROTO_ERR_ROUND_CONFLICT,
				 "another round of agent \"%s\" was recorded first; nothing was"
				 " stored, ask for a new challenge", id);
		break;
	case ROUND_INTERNAL:
	default:
		http_reply_error(resp, PROTO_ERR_INTERNAL, "the verifier failed; its log says why");
		break;
	}
}

void handle_challenge(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct challenge c;
	enum round_status st = round_challenge(app, req->arg[0], &c);

	if (st) {
		reply_round_status(resp, req->arg[0], st, NULL);
		return;
	}
	http_reply_json(resp, 201, challenge_encode(&c));
	APP_COUNT(app, challenges);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

bool admit_evidence(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	enum round_status st = round_admit(app, req->arg[0]);

	if (st == ROUND_OK)
		return true;
	reply_round_status(resp, req->arg[0], st, NULL);
	if (st != ROUND_STORE_FAILED && st != ROUND_INTERNAL)
		APP_COUNT(app, attest_refused);
	return false;
}

void handle_evidence(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct verdict_response v;
	struct evidence ev;
	struct timespec t0;
	const char *why = NULL;
	enum round_status st;
	char *ear = NULL;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&ev, 0, sizeof(ev));
	if (evidence_parse(req->body, req->body_len, &ev, &why)) {
		http_reply_error(resp, PROTO_ERR_BAD_REQUEST, "%s", why ? why : "bad evidence");
		APP_COUNT(app, attest_refused);
		goto out;
	}
	st = round_evidence(app, req->arg[0], &ev, &v);
	if (st) {
		reply_round_status(resp, req->arg[0], st, &v);
		/* Refusals of the request count; the verifier's own failures do not. */
		if (st != ROUND_POLICY_UNAVAILABLE && st != ROUND_STORE_FAILED && st != ROUND_INTERNAL &&
		    st != ROUND_CONFLICT)
			APP_COUNT(app, attest_refused);
		goto out;
	}
	/* The passport (proto/evidence.h): the EAR of this verdict, when the agent asks for it. */
	if (ev.want_ear && app->ear_results) {
		int64_t retry;

		if (ear_token(app, req->arg[0], v.verdict_id, NULL, (int64_t)time(NULL), &ear,
			      &retry) == EAR_OK)
			v.ear = ear;
	}
	http_reply_json(resp, 200, verdict_response_encode(&v));
	free(ear);
	if (v.has_next_challenge)
		APP_COUNT(app, challenges_given);
	if (v.trusted)
		APP_COUNT(app, attest_trusted);
	else
		APP_COUNT(app, attest_untrusted);
	metrics_observe_latency(&app->metrics, seconds_since(&t0));
out:
	evidence_release(&ev);
}
